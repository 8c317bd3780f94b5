"""``waza run`` as a library function: load the suite, run it, write the results, exit code.

The typer command (:mod:`waza_core.cli.run`) maps its flags onto the narrow values of a
:class:`RunCommand`, one per stage that reads them, and calls :func:`run_command` with the
suite path. :func:`run_command` is four calls, each given only what it reads:

- before the suite is read: the console (:class:`ConsoleOptions`) and where the results go
  (:class:`~waza_core.run.targets.OutputTargets`);
- :func:`load`: plugins and the suite;
- :func:`plan_models`: the models and the backend (:class:`BackendRequest`); then the
  reporters (:mod:`waza_core.results.reports`) and every output file checked against the
  others and the suite;
- :func:`run_models`: each model's run (:class:`RunFlags` -> the engine's
  :class:`~waza_core.run.plan.RunOptions`; the result cache wraps the backend), its results
  file and summary; the exit code (:func:`exit_code_of`: 0 / 1 / 130).

A new flag is one field of the value whose stage reads it, one line in the command.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import os
from pathlib import Path
from typing import Callable

import attrs

from waza_core import collector, signals
from waza_core.errors import ExitCode, WazaError
from waza_core.log import configure_logging, get_logger
from waza_core.plugins import DISABLE_PREFIX, PluginRequest, get_registry
from waza_core.results import console, triage
from waza_core.results.codec import results_to_json, summary_to_json, task_to_json
from waza_core.results.console import get_console, print_warnings, setup_console
from waza_core.results.jsonbytes import PRETTY_MAX_RUNS
from waza_core.results.model import ResultsDocument, TaskResult, exit_code
from waza_core.results.reports import RunReports, machine_stdout, plan_for_run
from waza_core.results.writer import StreamingResultsWriter, write_results
from waza_core.run import baseline, multimodel
from waza_core.run import journal as journal_mod
from waza_core.run.backends import check_backend
from waza_core.run.engine import Engine
from waza_core.run.finish import console_report
from waza_core.run.plan import RunOptions, select_tasks
from waza_core.run.prices import PriceTable
from waza_core.run.prices import resolve as resolve_prices
from waza_core.run.targets import OutputTargets
from waza_core.suite.load import load_suite
from waza_core.suite.project_config import run_default

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported where a run asks for them (--baseline-from, --cache, --max-spend): ~8 ms of every start
    from waza_core.run.budget import Budget
    from waza_core.run.result_cache import RunCache
    from waza_core.run.stored_baseline import StoredBaseline


@attrs.frozen
class ConsoleOptions:
    """What ``waza run`` prints, and how: ``--color``, ``-q``, ``-v``, ``--log-format``."""

    color: str = "auto"
    quiet: bool = False
    verbose: bool = False
    log_format: str = "console"

    def check(self) -> None:
        if self.log_format not in ("console", "json"):
            raise WazaError("--log-format must be 'console' or 'json'")


@attrs.frozen
class RunFlags:
    """The flags that become the engine's :class:`~waza_core.run.plan.RunOptions` (None: as
    the suite's config says)."""

    executor: str | None = None
    #: ``--model`` (repeatable): one run of the suite per model; empty = config.models / config.model
    models: list[str] = attrs.field(factory=list)
    trials: int | None = None
    parallel: bool = False
    workers: int | None = None
    task: list[str] = attrs.field(factory=list)
    tags: list[str] = attrs.field(factory=list)
    context_dir: Path | None = None
    keep_workspaces: bool = False
    update_snapshots: bool = False
    judge_model: str | None = None
    skip_graders: bool = False
    fail_fast: bool = False
    #: ``--baseline``: an A/B run (also ``baseline: true`` in eval.yaml)
    baseline: bool = False
    #: ``--baseline-from FILE``: an A/B run whose without-skills side is this stored file
    baseline_from: Path | None = None
    #: ``--audit``: run the suite once against the do-nothing agent first (waza_core/run/audit.py)
    audit: bool = False

    def options(self, on_task_done, on_warning: Callable[[str], None], budget, prices) -> RunOptions:
        """The engine's options of one pass (the caller sets the model and the backend)."""
        return RunOptions(
            executor=self.executor, model=self.models[0] if self.models else None, trials=self.trials,
            parallel=True if self.parallel or (self.workers is not None and self.workers != 1) else None,
            workers=self.workers, task_globs=list(self.task), tag_globs=list(self.tags),
            context_dir=self.context_dir, keep_workspaces=self.keep_workspaces, skip_graders=self.skip_graders,
            update_snapshots=self.update_snapshots, judge_model=self.judge_model,
            fail_fast=True if self.fail_fast else None, on_task_done=on_task_done, on_warning=on_warning,
            budget=budget, prices=prices,
        )


@attrs.frozen
class BackendRequest:
    """``--backend`` (else .waza.yaml defaults.backend, config.backend, local) and
    ``--ray-address`` (else RAY_ADDRESS, .waza.yaml defaults.rayAddress)."""

    name: str | None = None
    ray_address: str | None = None

    def resolve(self, workers: int | None, suite) -> tuple[str, dict]:
        return resolve_backend(self.name, self.ray_address, workers, suite)


@attrs.frozen
class SpendLimits:
    """``--max-spend USD`` (else .waza.yaml defaults.maxSpend), ``--max-run-cost USD``
    (else defaults.maxRunCost) and ``--prices FILE|none`` (else defaults.prices, else the
    built-in table)."""

    max_spend: float | None = None
    max_run_cost: float | None = None
    prices: str | None = None

    def price_table(self) -> PriceTable | None:
        """The price table of the command; None: pricing is off (``--prices none``)."""
        return resolve_prices(self.prices) or None

    def budget(self) -> Budget | None:
        """The one budget of the command (shared by every model and A/B pass), or None."""
        cap = self.max_spend if self.max_spend is not None else run_default("maxSpend")
        per_run = self.max_run_cost if self.max_run_cost is not None else run_default("maxRunCost")
        if cap is None:
            if per_run is not None and self.max_run_cost is not None:
                raise WazaError("--max-run-cost needs --max-spend (or defaults.maxSpend in .waza.yaml)")
            return None
        for name, value in (("max spend", cap), ("max run cost", per_run)):
            if value is not None and not (0 <= value < float("inf")):
                raise WazaError(f"{name} must be a finite amount >= 0, got {value!r}")
        from waza_core.run.budget import Budget  # deferred: only a run with a spending cap has a budget

        return Budget(float(cap), None if per_run is None else float(per_run))


@attrs.frozen
class CacheRequest:
    """``--cache`` and ``--cache-dir``."""

    on: bool = False
    directory: Path = Path(".waza-cache")


@attrs.frozen
class ReportFlags:
    """``--reporter NAME[:PATH]`` and ``--reporter-option NAME.KEY=VALUE``."""

    names: list[str] = attrs.field(factory=list)
    options: list[str] = attrs.field(factory=list)


@attrs.frozen
class RunCommand:
    """The options of ``waza run`` as the command line gave them, grouped by the stage
    that reads them; the suite path is given beside it."""

    targets: OutputTargets = OutputTargets()
    console: ConsoleOptions = ConsoleOptions()
    flags: RunFlags = RunFlags()
    backend: BackendRequest = BackendRequest()
    spend: SpendLimits = SpendLimits()
    cache: CacheRequest = CacheRequest()
    reports: ReportFlags = ReportFlags()
    plugins: list[str] = attrs.field(factory=list)  # -p


def run_command(eval_file: Path, cmd: RunCommand) -> int:
    """Run ``waza run`` on the suite at ``eval_file``; the exit code. User mistakes raise
    :class:`WazaError` (exit 2).

    Several models (``--model a --model b``, ``config.models``) run the suite once each
    (:mod:`waza_core.run.multimodel`); an A/B run runs it twice per model
    (:mod:`waza_core.run.baseline`). Reporters write the last model's document, as in
    waza (Go)."""
    con = setup_console(cmd.console.color, cmd.console.quiet, cmd.console.verbose)
    cmd.targets.check()
    cmd.console.check()
    configure_logging(cmd.console.log_format, cmd.console.quiet)
    suite, registry = load(eval_file, cmd.plugins)
    models, backend, stored = plan_models(suite, cmd.targets, cmd.flags, cmd.backend)
    reports = plan_for_run(cmd.reports.names, cmd.reports.options, registry, cmd.targets.output)
    cmd.targets.check_collisions(models, reports.requests, suite)
    audit_report = run_audit(suite, registry, cmd.flags, cmd.plugins) if cmd.flags.audit else None
    settings = PassSettings(cmd.flags, cmd.cache, cmd.plugins, cmd.console, cmd.spend, backend, stored, audit_report,
                            ab_run=bool(cmd.flags.baseline or suite.baseline) or stored is not None,
                            needs_document=bool(reports.requests) or cmd.targets.to_stdout,
                            to_file=cmd.targets.to_file)
    return run_models(suite, registry, models, settings, cmd.targets, reports, con)


def load(eval_file: Path, plugins: list[str]):
    """(suite, registry): the plugins (a broken one is a warning) and the suite.

    Loading the suite makes objects that all live until the end: the cyclic collector
    cannot find garbage there, but its full passes over a growing heap took half of the
    start-up of a 100k-task suite. So it runs rarer while loading (a cold load makes
    cyclic garbage; ``main()`` has set that up already, a caller of :func:`run_command`
    may not have), off while the engine is built (:func:`build_engine`); then what was
    built is frozen out of its sight, so the collections during the runs only look at
    what the runs make, at the thresholds the process had (:mod:`waza_core.collector`)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(*collector.SETUP_THRESHOLDS)
    try:
        registry = get_registry(plugins)
        for p in registry.broken():
            get_logger().warning("plugin failed to load", plugin=p.name, error=p.error)
        suite = load_suite(eval_file, registry)
        print_warnings(suite.warnings)  # unknown keys of a 1.x eval and the like: shown, not lost
    finally:
        gc.set_threshold(*thresholds)
    return suite, registry



def plan_models(suite, targets: OutputTargets, flags: RunFlags,
                backend: BackendRequest) -> tuple[list[str], tuple[str, dict], StoredBaseline | None]:
    """(models, backend, the ``--baseline-from`` side): checked once the suite is known and
    before anything runs, with the results file names they make."""
    targets.check_output_dir_name(suite.name)
    stored = load_stored_baseline(flags.baseline_from, suite.name, flags.skip_graders)
    if stored is not None:  # the tasks this run selects, before the audit or any engine
        from waza_core.run import stored_baseline  # deferred: only with --baseline-from (~8 ms)

        stored_baseline.check_tasks(stored, [t.id for t in select_tasks(suite, RunOptions(
            task_globs=list(flags.task), tag_globs=list(flags.tags)))])
    models = multimodel.models_to_run(flags.models, suite)
    targets.check_models(suite.name, models)
    return models, backend.resolve(flags.workers, suite), stored


def load_stored_baseline(path: Path | None, suite_name: str, skip_graders: bool = False) -> StoredBaseline | None:
    """``--baseline-from``: the stored baseline side, read and checked against the suite
    before anything runs (None without the flag)."""
    if path is None:
        return None
    if skip_graders:
        raise WazaError("--baseline-from compares graded runs, and --skip-graders grades none: run without "
                        "--skip-graders (or grade the results with `waza grade`, then `waza compare` them)")
    from waza_core.run import stored_baseline  # deferred: only with --baseline-from (~8 ms)

    stored = stored_baseline.load(path)
    stored_baseline.check_suite(stored, suite_name, _print_warning)
    return stored


def run_models(suite, registry, models: list[str], settings: PassSettings, targets: OutputTargets,
               reports: RunReports, con) -> int:
    """Run the suite once per model, writing each model's results and summary (the
    reports: of the last model); the exit code (the worst model's; a signal stops at once)."""
    code, done, failures = ExitCode.OK, [], []
    journal = journal_mod.Session(targets.journal, targets.resume, models,
                                  ab_run=settings.ab_run and settings.stored is None)
    with machine_stdout(reports.uses_stdout) as machine, contextlib.closing(journal):
        reporter = console.Reporter(console=con, summary_to_stderr=targets.summary_to_stderr)
        for i, model in enumerate(models):
            last = i == len(models) - 1
            doc, engine, finished = run_model(suite, registry, reporter, model, settings, journal)
            if len(models) > 1:
                doc.extra["models"] = list(models)
            failures += finish_model(targets, doc, finished, reporter, reports if last else None,
                                     machine.stream, model if len(models) > 1 else None, settings.audit_report)
            done.append((model, doc))
            model_code = exit_code_of(doc, engine)
            if model_code >= ExitCode.INTERRUPTED:  # stopped by a signal: no further model
                return model_code
            code = max(code, model_code)  # a failing model does not stop the others, as in waza (Go)
        if len(models) > 1:
            reporter.block(multimodel.comparison_table(done))
    if failures:
        raise WazaError("; ".join(failures))
    return code


@attrs.frozen
class PassSettings:
    """What each pass of the engine is built from (one per model, two for an A/B run)."""

    flags: RunFlags
    cache: CacheRequest
    plugins: list[str]
    console: ConsoleOptions
    spend: SpendLimits
    backend: tuple[str, dict]
    #: ``--baseline-from``: the stored without-skills side (None: run it, or no A/B run)
    stored: StoredBaseline | None
    #: ``--audit``: the audit's report (``audit`` of the results), made before the first model runs
    audit_report: dict | None
    #: an A/B run (``--baseline``, ``baseline: true``, ``--baseline-from``): whole documents merged
    ab_run: bool
    #: reporters or ``-o -`` read the whole document: keep every task in memory
    needs_document: bool
    #: the results go to a file (-o PATH, --output-dir)
    to_file: bool
    #: the one budget and price table of the command (every model and A/B pass), made by the first pass
    _budget: list = attrs.field(factory=list, init=False)
    _prices: list = attrs.field(factory=list, init=False)

    def budget(self) -> Budget | None:
        if not self._budget:
            self._budget.append(self.spend.budget())
        return self._budget[0]

    def prices(self) -> PriceTable | None:
        if not self._prices:
            self._prices.append(self.spend.price_table())
        return self._prices[0]


def finish_model(targets: OutputTargets, doc: ResultsDocument, finished: FinishedTasks, reporter, reports,
                 stdout, model: str | None, audit_report: dict | None = None) -> list[str]:
    """Write one model's results (and, for the last model, the reports), then print its
    summary and its reports (groups, statistics, triage, the A/B impact); the reporters
    that failed.

    What is printed is built first, from the finished document, and shown after the files
    are written."""
    if audit_report is not None:
        doc.extra["audit"] = audit_report
    report = console_report(doc)
    impact = baseline.impact_report(doc) if doc.extra.get("is_baseline") else None
    target, stream = targets.destination(doc, stdout, model)
    counts = doc.summary.extra.get("triage") if doc.summary is not None else None
    outcome = finished.console_outcome(doc)
    report_doc = results_to_json(doc) if reports is not None and reports.requests else None
    # the FAILURE TRIAGE block (and --audit's findings)
    blocks = [report, triage.console_block(counts or {}, outcome["tasks"], doc.extra.get("audit"),
                                           reporter.console.verbose)]
    if impact is not None:
        blocks.append(impact)
    failures: list[str] = []
    try:
        with signals.deferred():  # a signal now must not cost the results file
            try:
                write_results(doc, target, stream, finished.writer)
            except WazaError:  # the summary still shows what ran; then exit 2
                reporter.summary(outcome, None)
                raise
            if report_doc is not None:
                failures = reports.write(report_doc, stdout)
            reporter.summary(outcome, target)
    finally:
        finished.close()
    for block in blocks:
        reporter.block(block)
    return failures


def run_audit(suite, registry, flags: RunFlags, plugins: list[str]) -> dict:
    """``--audit``: the suite's tasks of this run, once each against the do-nothing agent
    (the code of ``waza audit``); no paid call, nothing of this run touched."""
    from waza_core.run import audit  # deferred: only with --audit

    args: list[str] = []
    for glob in flags.task:
        args += ["--task", glob]
    for glob in flags.tags:
        args += ["--tags", glob]
    if flags.context_dir is not None:
        args += ["--context-dir", str(flags.context_dir)]
    _print_info(f"waza: --audit: running every task once against the do-nothing agent "
                f"(executor {audit.NULL_EXECUTOR!r}, no paid call)")
    report = audit.audit_suite(suite, registry, plugins, args)
    vacuous = report["vacuous_tasks"]
    if vacuous:
        _print_warning(f"--audit: {len(vacuous)} task(s) pass with no agent: "
                       + ", ".join(vacuous[:10]) + (", ..." if len(vacuous) > 10 else ""))
    return report


class _Interrupted(Exception):
    def __init__(self, doc: ResultsDocument) -> None:
        self.doc = doc


def run_model(suite, registry, reporter, model: str, settings: PassSettings,
              journal: journal_mod.Session) -> tuple[ResultsDocument, Engine, FinishedTasks]:
    """One model's run (two passes for an A/B run, one against a stored baseline): the
    document, the last engine and what the last pass kept of its finished tasks."""
    stored = settings.stored
    passes: list[tuple[Engine, FinishedTasks]] = []
    stored_warnings: list[str] = []

    def run_pass(the_suite, skills_off: bool) -> ResultsDocument:
        engine, finished = build_engine(the_suite, registry, reporter, model, settings, skills_off)
        passes.append((engine, finished))
        if stored is not None:  # before anything runs: refuse a meaningless comparison
            from waza_core.run import stored_baseline  # deferred: only with --baseline-from

            stored_warnings[:] = stored_baseline.check_plan(stored, engine.plan, _print_warning)
        journal.attach(engine, baseline=skills_off)
        reporter.start(the_suite, engine)
        try:
            doc = engine.run()
        finally:
            reporter.stop()  # also when a run could not start: give the terminal its cursor back
            journal.pass_ended()
        if finished.cache is not None:
            finished.cache.mark(doc)
        spend = doc.extra.get("spend")
        if isinstance(spend, dict) and spend.get("runs_skipped"):
            _print_warning(f"--max-spend {spend['max_spend']:g}: spent {spend['spent_usd']:g} USD; "
                           f"{spend['runs_skipped']} run(s) skipped for budget"
                           + (f" ({spend['reason']})" if spend.get("reason") else ""))
        if engine.cancel.is_set():
            raise _Interrupted(doc)  # no second pass after Ctrl-C
        return doc

    try:
        if stored is not None:
            from waza_core.run import stored_baseline  # deferred: only with --baseline-from

            doc = stored_baseline.merge(run_pass(suite, False), stored, stored_warnings, _print_warning)
        elif settings.ab_run:
            doc = baseline.run_baseline(run_pass, suite, _print_warning)
        else:
            doc = run_pass(suite, False)
    except _Interrupted as stop:
        doc = stop.doc
    except BaseException:
        for _, finished in passes:
            finished.close()
        raise
    for _, finished in passes[:-1]:
        finished.close()
    engine, finished = passes[-1]
    return doc, engine, finished


def build_engine(suite, registry, reporter, model: str, settings: PassSettings,
                 skills_off: bool) -> tuple[Engine, FinishedTasks]:
    """The engine of one pass, with the collector off while it is built (see :func:`load`).
    An A/B run merges whole documents, so its passes keep every task."""
    gc.disable()
    try:
        finished = FinishedTasks(reporter, settings.console.quiet, settings.console.verbose)
        options = settings.flags.options(finished.add, _print_warning, settings.budget(), settings.prices())
        options.model = model
        options.backend, options.backend_options = settings.backend
        if skills_off:
            options.skill_directories = ()
        engine = Engine(suite, registry, options, plugins=tuple(requested_plugins(settings.plugins)))
        if settings.audit_report is not None:  # their passes are triaged vacuous
            engine.aggregator.vacuous_tasks = frozenset(settings.audit_report["vacuous_tasks"])
        finished.cache = attach_cache(settings.cache, engine)
        finished.stream_if_large(engine, settings.to_file, settings.needs_document or settings.ab_run)
        gc.freeze()
    finally:
        gc.enable()
        collector.as_before()  # the runs: the usual passes (a cycle there may hold a transcript)
    return engine, finished


def attach_cache(request: CacheRequest, engine: Engine) -> RunCache | None:
    """``--cache``: put the result cache in front of the backend (or say why it stays off)."""
    if not request.on:
        return None
    from waza_core.run.result_cache import RunCache  # deferred: only with --cache

    cache = RunCache(engine.prepared, request.directory, _print_warning)
    if not cache.active:
        _print_warning(cache.off_reason)
        return None
    engine.wrap_backend = cache.wrap_backend
    return cache


class FinishedTasks:
    """What ``waza run`` does with each task as it finishes: show it, spool it for the
    results file when the run is large, and remember what the summary prints."""

    #: the console summary details this many failed tasks and counts the others
    SHOWN = 50

    def __init__(self, reporter, quiet: bool, verbose: bool = False) -> None:
        self.reporter = reporter
        self.quiet = quiet
        self.verbose = verbose  # -v: a failed task's progress line shows its runs' feedback
        self.writer: StreamingResultsWriter | None = None
        self.cache = None  # the result cache, when --cache is on
        self.positions: dict[str, int] = {}
        self.keeps_tasks = True
        self.problems: list[tuple[int, dict]] = []  # (-position, entry): a max-heap of the first SHOWN
        self.problem_count = 0

    def stream_if_large(self, engine: Engine, to_file: bool, needs_document: bool) -> None:
        """Hold no finished task in memory when the results file would be compact anyway
        (over PRETTY_MAX_RUNS runs: its tasks go to a spool as they finish) or when nothing
        is written. Reporters and ``-o -`` still get the whole document in memory."""
        self.positions = engine.aggregator.positions
        if needs_document or (to_file and len(engine.plan.tasks) * engine.plan.trials <= PRETTY_MAX_RUNS):
            return
        engine.options.keep_tasks = self.keeps_tasks = False
        if to_file:
            self.writer = StreamingResultsWriter(self.positions)

    def add(self, index: int, total: int, entry: TaskResult) -> None:
        if self.cache is not None and not self.keeps_tasks:
            self.cache.mark_task(entry)  # its summary count is marked at the end
        if self.writer is not None:
            self.writer.add(entry)
        if entry.status in ("failed", "error"):
            self._remember_problem(entry)
        if not self.quiet:
            self.reporter.task_done(index, total, _console_task(entry, self.verbose))

    def _remember_problem(self, entry: TaskResult) -> None:
        self.problem_count += 1
        if self.quiet or self.keeps_tasks:  # a kept document is read at the end instead
            return
        item = (-self.positions.get(entry.test_id, 0), task_to_json(entry))
        if len(self.problems) < self.SHOWN:
            heapq.heappush(self.problems, item)
        elif item[0] > self.problems[0][0]:
            heapq.heapreplace(self.problems, item)

    def console_outcome(self, doc: ResultsDocument) -> dict:
        """What the console summary reads: the header and the tasks that did not pass, the
        first SHOWN whole, in file order, the others as one shared stub it only counts."""
        if self.keeps_tasks:  # the document has every task (an A/B run's is merged: read it)
            problems = [t for t in doc.tasks if t.status in ("failed", "error")]
            self.problems = [(-i, task_to_json(t)) for i, t in enumerate(problems[:self.SHOWN])]
            self.problem_count = len(problems)
        shown = [entry for _, entry in sorted(self.problems, key=lambda item: -item[0])]
        stub = {"test_id": "", "status": "failed", "runs": []}
        tasks = shown + [stub] * (self.problem_count - len(shown))
        return {"eval_name": doc.eval_name, "incomplete": doc.incomplete,
                "summary": summary_to_json(doc.summary) if doc.summary is not None else {}, "tasks": tasks}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def resolve_backend(flag: str | None, address_flag: str | None, workers: int | None, suite) -> tuple[str, dict]:
    """The backend (``--backend``, else .waza.yaml defaults.backend, else config.backend,
    else local) and its options; exit 2 when it cannot be used here (Ray not installed)."""
    name = flag or run_default("backend") or suite.config.backend or "local"
    check_backend(name)
    if name != "ray":
        if address_flag:
            raise WazaError("--ray-address needs --backend ray")
        return name, {}
    address = address_flag or os.environ.get("RAY_ADDRESS") or run_default("rayAddress") or None
    return name, {"address": address, "workers": workers}


def requested_plugins(names: list[str]) -> list[str]:
    """The ``-p`` values that load this run's plugins again elsewhere: ``-p`` and
    ``WAZA_PLUGINS`` modules, then ``no:NAME`` for each disabled one (``-p no:NAME``,
    ``WAZA_DISABLED_PLUGINS``); what a worker must load to rebuild the suite."""
    request = PluginRequest.parse(names)
    return [*request.modules, *(f"{DISABLE_PREFIX}{name}" for name, _ in request.disabled)]


def _print_info(message: str) -> None:
    get_console().info(message)


def _print_warning(message: str) -> None:
    get_console().warning(message)


def exit_code_of(doc: ResultsDocument, engine: Engine) -> int:
    """0 / 1 as the runs went; 128 + the signal that stopped the run (130 Ctrl-C, 143 SIGTERM)."""
    if signals.received() is not None or (doc.incomplete and engine.cancel.is_set()):
        return signals.exit_code(ExitCode.INTERRUPTED)
    return exit_code(doc)


def _console_task(entry: TaskResult, with_runs: bool = False) -> dict:
    """What the progress line shows of a finished task (with ``-v``, its runs' feedback too)."""
    shown = {"test_id": entry.test_id, "display_name": entry.display_name, "status": entry.status,
             "stats": entry.stats}
    if with_runs and entry.status in ("failed", "error"):
        shown["runs"] = task_to_json(entry)["runs"]
    return shown
