"""``waza run`` as a library function: load the suite, run it, write the results, exit code.

The typer command (:mod:`waza_core.cli.run`) only maps its flags onto a
:class:`RunCommand` and calls :func:`run_command`. A new flag is one field here, one
line there, and its use in the step below that needs it:

- :func:`check_targets`: where the results go, checked before anything runs;
- :func:`load`: plugins and the suite;
- :func:`run_options`: the :class:`~waza_core.run.plan.RunOptions` of the engine;
- :func:`write_results`: the results file (``-`` is stdout); reporters
  (:mod:`waza_core.results.reports`) are checked before the run and written after it;
- the result cache (:mod:`waza_core.run.result_cache`) wraps the backend;
- :func:`exit_code_of`: 0 / 1 / 130.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import ExitCode, WazaError
from waza_core.results.codec import results_to_json
from waza_core.results.model import ResultsDocument, TaskResult, exit_code
from waza_core.results.reports import STDOUT, machine_stdout, plan_for_run
from waza_core.results.writer import StreamingResultsWriter
from waza_core.run import collisions
from waza_core.run import journal as journal_mod
from waza_core.run.engine import Engine
from waza_core.run.plan import RunOptions


@attrs.define
class RunCommand:
    """Every option of ``waza run``, as the command line gave it (None: not given)."""

    eval_file: Path
    output: Path | None = None
    output_dir: Path | None = None
    context_dir: Path | None = None
    task: list[str] = attrs.field(factory=list)
    tags: list[str] = attrs.field(factory=list)
    trials: int | None = None
    executor: str | None = None
    #: ``--model`` (repeatable): one run of the suite per model; empty = config.models / config.model
    models: list[str] = attrs.field(factory=list)
    #: ``--baseline``: an A/B run (also ``baseline: true`` in eval.yaml)
    baseline: bool = False
    #: ``--baseline-from FILE``: an A/B run whose without-skills side is this stored file
    baseline_from: Path | None = None
    parallel: bool = False
    workers: int | None = None
    fail_fast: bool = False
    keep_workspaces: bool = False
    update_snapshots: bool = False
    judge_model: str | None = None
    skip_graders: bool = False
    quiet: bool = False
    verbose: bool = False
    color: str = "auto"
    log_format: str = "console"
    plugins: list[str] = attrs.field(factory=list)
    reporters: list[str] = attrs.field(factory=list)  # --reporter NAME[:PATH]
    reporter_options: list[str] = attrs.field(factory=list)  # --reporter-option NAME.KEY=VALUE
    cache: bool = False
    cache_dir: Path = Path(".waza-cache")
    backend: str | None = None  # --backend; else .waza.yaml defaults.backend, config.backend, local
    ray_address: str | None = None  # --ray-address; else RAY_ADDRESS, .waza.yaml defaults.rayAddress
    journal: Path | None = None  # --journal: append each finished run here
    resume: Path | None = None  # --resume: rerun only what this journal lacks, keep appending
    max_spend: float | None = None  # --max-spend USD; else .waza.yaml defaults.maxSpend
    max_run_cost: float | None = None  # --max-run-cost USD; else .waza.yaml defaults.maxRunCost
    prices: str | None = None  # --prices FILE|none; else .waza.yaml defaults.prices; else the built-in table
    #: the one budget of this command (shared by every model and A/B pass), made on first use
    budget: Any = None
    #: ``--audit``: run the suite once against the do-nothing agent first (waza_core/run/audit.py)
    audit: bool = False
    #: the audit's report (``audit`` of the results), made before the first model runs
    audit_report: Any = None
    #: the price table of this command, read on first use (False: --prices none)
    price_table: Any = None


def run_command(cmd: RunCommand) -> int:
    """Run ``waza run``; the exit code. User mistakes raise :class:`WazaError` (exit 2).

    Several models (``--model a --model b``, ``config.models``) run the suite once each
    (:mod:`waza_core.run.multimodel`); an A/B run runs it twice per model
    (:mod:`waza_core.run.baseline`). Reporters write the last model's document, as in
    waza (Go)."""
    import gc

    from waza_core.log import configure_logging
    from waza_core.results import console
    from waza_core.results.console import setup_console
    from waza_core.run import multimodel

    con = setup_console(cmd.color, cmd.quiet, cmd.verbose)
    check_targets(cmd)
    configure_logging(cmd.log_format, cmd.quiet)
    # Loading the suite and building the engine make objects that all live until the end:
    # the cyclic collector cannot find garbage there, but its full passes over a growing
    # heap took half of the start-up of a 100k-task suite. Rarer while loading (a cold load
    # makes cyclic garbage), off while building; then what was built is frozen out of its
    # sight, so the collections during the runs only look at what the runs make.
    thresholds = gc.get_threshold()
    gc.set_threshold(*BUILD_GC_THRESHOLDS)
    try:
        suite, registry = load(cmd)
    finally:
        gc.set_threshold(*thresholds)
    check_output_dir_name(cmd, suite.name)
    stored = load_stored_baseline(cmd, suite.name)
    models = multimodel.models_to_run(cmd.models, suite)
    if len(models) > 1 and cmd.output is not None and str(cmd.output) == STDOUT:
        raise WazaError("-o - writes one results document; with several models use -o FILE (one file per "
                        "model) or --output-dir")
    check_model_targets(cmd, suite.name, models)
    backend = pick_backend(cmd, suite)
    reports = plan_for_run(cmd.reporters, cmd.reporter_options, registry, cmd.output)
    collisions.check_outputs(collisions.run_targets(cmd.output, models, cmd.journal, cmd.resume, reports.requests),
                             suite)
    if cmd.audit:
        cmd.audit_report = run_audit(cmd, suite, registry)
    code, done, failures = ExitCode.OK, [], []
    journal = journal_mod.Session(cmd.journal, cmd.resume, models,
                                  ab_run=bool(cmd.baseline or suite.baseline) and stored is None)
    with machine_stdout(reports.uses_stdout) as machine, contextlib.closing(journal):
        reporter = console.Reporter(console=con,
                                    summary_to_stderr=cmd.output is not None and _is_stdout(cmd.output))
        for i, model in enumerate(models):
            last = i == len(models) - 1
            doc, engine, finished = run_model(cmd, suite, registry, reporter, model, backend, journal,
                                              needs_document=bool(reports.requests) or str(cmd.output) == STDOUT,
                                              stored=stored)
            if len(models) > 1:
                doc.extra["models"] = list(models)
            failures += finish_model(cmd, doc, finished, reporter, reports if last else None, machine.stream,
                                     model if len(models) > 1 else None)
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


def finish_model(cmd: RunCommand, doc: ResultsDocument, finished: FinishedTasks, reporter, reports,
                 stdout, model: str | None) -> list[str]:
    """Write one model's results (and, for the last model, the reports), then print its
    summary; the reporters that failed."""
    from waza_core import signals
    from waza_core.run import baseline
    from waza_core.run.finish import console_report

    failures: list[str] = []
    if cmd.audit_report is not None:
        doc.extra["audit"] = cmd.audit_report
    try:
        with signals.deferred():  # a signal now must not cost the results file
            try:
                target = write_results(cmd, doc, stdout, finished.writer, model)
            except WazaError:  # the summary still shows what ran; then exit 2
                reporter.summary(finished.console_outcome(doc), None)
                raise
            if reports is not None and reports.requests:
                failures = reports.write(results_to_json(doc), stdout)
            reporter.summary(finished.console_outcome(doc), target)
    finally:
        finished.close()
    reporter.block(console_report(doc))
    reporter.block(triage_console(doc, finished, reporter))
    if doc.extra.get("is_baseline"):
        reporter.block(baseline.impact_report(doc))
    return failures


def run_audit(cmd: RunCommand, suite, registry) -> dict:
    """``--audit``: the suite's tasks of this run, once each against the do-nothing agent
    (the code of ``waza audit``); no paid call, nothing of this run touched."""
    from waza_core.run import audit

    args: list[str] = []
    for glob in cmd.task:
        args += ["--task", glob]
    for glob in cmd.tags:
        args += ["--tags", glob]
    if cmd.context_dir is not None:
        args += ["--context-dir", str(cmd.context_dir)]
    _print_info(f"waza: --audit: running every task once against the do-nothing agent "
                f"(executor {audit.NULL_EXECUTOR!r}, no paid call)")
    report = audit.audit_suite(suite, registry, cmd.plugins, args)
    vacuous = report["vacuous_tasks"]
    if vacuous:
        _print_warning(f"--audit: {len(vacuous)} task(s) pass with no agent: "
                       + ", ".join(vacuous[:10]) + (", ..." if len(vacuous) > 10 else ""))
    return report


def triage_console(doc: ResultsDocument, finished: FinishedTasks, reporter) -> str:
    """The FAILURE TRIAGE block (and ``--audit``'s findings) of the console summary."""
    from waza_core.results import triage

    counts = doc.summary.extra.get("triage") if doc.summary is not None else None
    shown = finished.console_outcome(doc)["tasks"]
    return triage.console_block(counts or {}, shown, doc.extra.get("audit"), reporter.console.verbose)


class _Interrupted(Exception):
    def __init__(self, doc: ResultsDocument) -> None:
        self.doc = doc


def run_model(cmd: RunCommand, suite, registry, reporter, model: str, backend: tuple[str, dict],
              journal: journal_mod.Session, needs_document: bool,
              stored=None) -> tuple[ResultsDocument, Engine, FinishedTasks]:
    """One model's run (two passes for an A/B run, one against a ``stored`` baseline): the
    document, the last engine and what the last pass kept of its finished tasks."""
    from waza_core.run import baseline, stored_baseline

    ab_run = bool(cmd.baseline or suite.baseline) or stored is not None
    passes: list[tuple[Engine, FinishedTasks]] = []
    stored_warnings: list[str] = []

    def run_pass(the_suite, skills_off: bool) -> ResultsDocument:
        engine, finished = build_engine(cmd, the_suite, registry, reporter, model, backend, skills_off,
                                        needs_document or ab_run)  # an A/B run merges whole documents
        passes.append((engine, finished))
        if stored is not None:  # before anything runs: refuse a meaningless comparison
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
            doc = stored_baseline.merge(run_pass(suite, False), stored, stored_warnings, _print_warning)
        elif ab_run:
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


def build_engine(cmd: RunCommand, suite, registry, reporter, model: str, backend: tuple[str, dict],
                 skills_off: bool, needs_document: bool) -> tuple[Engine, FinishedTasks]:
    """The engine of one pass, with the collector off while it is built (see run_command)."""
    import gc

    gc.disable()
    try:
        finished = FinishedTasks(reporter, cmd.quiet, cmd.verbose)
        options = run_options(cmd, finished.add)
        options.model = model
        options.backend, options.backend_options = backend
        if skills_off:
            options.skill_directories = ()
        engine = Engine(suite, registry, options, plugins=tuple(requested_plugins(cmd.plugins)))
        if cmd.audit_report is not None:  # their passes are triaged vacuous
            engine.aggregator.vacuous_tasks = frozenset(cmd.audit_report["vacuous_tasks"])
        finished.cache = attach_cache(cmd, engine)
        finished.stream_if_large(engine, file_target(cmd), needs_document)
        gc.freeze()
    finally:
        gc.enable()
    return engine, finished


#: collector thresholds while loading the suite (default 700, 10, 10)
BUILD_GC_THRESHOLDS = (50_000, 20, 100)


def file_target(cmd: RunCommand) -> bool:
    """Whether the results go to a file (-o PATH or --output-dir), not stdout or nowhere."""
    return cmd.output_dir is not None or (cmd.output is not None and str(cmd.output) != STDOUT)


def attach_cache(cmd: RunCommand, engine: Engine):
    """``--cache``: put the result cache in front of the backend (or say why it stays off)."""
    if not cmd.cache:
        return None
    import sys

    from waza_core.run.result_cache import RunCache

    cache = RunCache(engine.prepared, cmd.cache_dir, lambda m: sys.stderr.write(f"waza: warning: {m}\n"))
    if not cache.active:
        sys.stderr.write(f"waza: warning: {cache.off_reason}\n")
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
        from waza_core.results.jsonbytes import PRETTY_MAX_RUNS

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
        import heapq

        from waza_core.results.codec import task_to_json

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
        from waza_core.results.codec import summary_to_json, task_to_json

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


def check_targets(cmd: RunCommand) -> None:
    """Fail before running when the results could not be written afterwards."""
    from waza_core.results.io import check_writable_target

    if cmd.output and cmd.output_dir:
        raise WazaError("use either -o/--output or --output-dir, not both")
    if cmd.log_format not in ("console", "json"):
        raise WazaError("--log-format must be 'console' or 'json'")
    if cmd.output_dir is not None:
        if not cmd.output_dir.is_dir():
            raise WazaError(f"--output-dir {cmd.output_dir}: no such folder")
        if not os.access(cmd.output_dir, os.W_OK | os.X_OK):
            raise WazaError(f"--output-dir {cmd.output_dir}: folder is not writable")
    if cmd.output is not None and str(cmd.output) != STDOUT:
        check_writable_target(cmd.output)
    if cmd.resume is not None:
        from waza_core.run.journal import check_resume_target

        if cmd.journal is not None and cmd.journal != cmd.resume:
            raise WazaError("--resume PATH goes on appending to PATH: give --resume alone, not with another --journal")
        check_resume_target(cmd.resume)
    elif cmd.journal is not None:
        from waza_core.run.journal import check_new_target

        check_new_target(cmd.journal)


def load_stored_baseline(cmd: RunCommand, suite_name: str):
    """``--baseline-from``: the stored baseline side, read and checked against the suite
    before anything runs (None without the flag)."""
    if cmd.baseline_from is None:
        return None
    from waza_core.run import stored_baseline

    stored = stored_baseline.load(cmd.baseline_from)
    stored_baseline.check_suite(stored, suite_name, _print_warning)
    return stored


def pick_backend(cmd: RunCommand, suite) -> tuple[str, dict]:
    return resolve_backend(cmd.backend, cmd.ray_address, cmd.workers, suite)


def resolve_backend(flag: str | None, address_flag: str | None, workers: int | None, suite) -> tuple[str, dict]:
    """The backend (``--backend``, else .waza.yaml defaults.backend, else config.backend,
    else local) and its options; exit 2 when it cannot be used here (Ray not installed)."""
    from waza_core.run.backends import check_backend
    from waza_core.suite.project_config import run_default

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
    from waza_core.plugins import DISABLE_PREFIX, PluginRequest

    request = PluginRequest.parse(names)
    return [*request.modules, *(f"{DISABLE_PREFIX}{name}" for name, _ in request.disabled)]


def load(cmd: RunCommand):
    """(suite, registry): the plugins (a broken one is a warning) and the suite."""
    from waza_core.plugins import get_registry
    from waza_core.suite.load import load_suite

    registry = get_registry(cmd.plugins)
    broken = registry.broken()
    if broken:
        from waza_core.log import get_logger

        for p in broken:
            get_logger().warning("plugin failed to load", plugin=p.name, error=p.error)
    suite = load_suite(cmd.eval_file, registry)
    from waza_core.results.console import print_warnings

    print_warnings(suite.warnings)  # unknown keys of a 1.x eval and the like: shown, not lost
    return suite, registry


def run_options(cmd: RunCommand, on_task_done) -> RunOptions:
    return RunOptions(
        executor=cmd.executor, model=cmd.models[0] if cmd.models else None, trials=cmd.trials,
        parallel=True if cmd.parallel or (cmd.workers is not None and cmd.workers != 1) else None,
        workers=cmd.workers, task_globs=list(cmd.task), tag_globs=list(cmd.tags), context_dir=cmd.context_dir,
        keep_workspaces=cmd.keep_workspaces, skip_graders=cmd.skip_graders,
        update_snapshots=cmd.update_snapshots, judge_model=cmd.judge_model,
        fail_fast=True if cmd.fail_fast else None, on_task_done=on_task_done,
        on_warning=_print_warning, budget=command_budget(cmd), prices=command_prices(cmd),
    )


def command_budget(cmd: RunCommand):
    """The budget of ``--max-spend`` (else ``.waza.yaml`` ``defaults.maxSpend``), or None."""
    if cmd.budget is None:
        from waza_core.run.budget import Budget
        from waza_core.suite.project_config import run_default

        cap = cmd.max_spend if cmd.max_spend is not None else run_default("maxSpend")
        per_run = cmd.max_run_cost if cmd.max_run_cost is not None else run_default("maxRunCost")
        if cap is None:
            if per_run is not None and cmd.max_run_cost is not None:
                raise WazaError("--max-run-cost needs --max-spend (or defaults.maxSpend in .waza.yaml)")
            return None
        for name, value in (("max spend", cap), ("max run cost", per_run)):
            if value is not None and not (0 <= value < float("inf")):
                raise WazaError(f"{name} must be a finite amount >= 0, got {value!r}")
        cmd.budget = Budget(float(cap), None if per_run is None else float(per_run))
    return cmd.budget


def _print_info(message: str) -> None:
    from waza_core.results.console import get_console

    get_console().info(message)


def command_prices(cmd: RunCommand):
    """The price table of ``--prices`` (else ``.waza.yaml`` ``defaults.prices``, else the built-in one)."""
    if cmd.price_table is None:
        from waza_core.run.prices import resolve

        cmd.price_table = resolve(cmd.prices) or False  # False: pricing is off (--prices none)
    return cmd.price_table or None


def _print_warning(message: str) -> None:
    from waza_core.results.console import get_console

    get_console().warning(message)


def write_results(cmd: RunCommand, doc: ResultsDocument, stdout=None,
                  writer: StreamingResultsWriter | None = None, model: str | None = None) -> Path | None:
    """Write the results file (-o, or a new name in --output-dir); where it went.
    ``-o -`` writes to ``stdout`` (the real one; the rest of the output went to stderr).
    With a ``writer``, the tasks were spooled as they finished and ``doc`` has none.
    In a multi-model run ``model`` names the file of that model (``results_<model>.json``)."""
    from waza_core.results.codec import encode_results
    from waza_core.results.io import write_atomic
    from waza_core.run.multimodel import per_model_path

    target = cmd.output
    if target is not None and str(target) == STDOUT and stdout is not None:
        stdout.write(encode_results(doc))
        stdout.flush()
        return None
    if target is not None and model is not None and not _is_device(target):
        target = per_model_path(target, model)
    if cmd.output_dir is not None:
        stamp = doc.timestamp.replace(":", "").replace("-", "")
        label = f"-{model_label(model)}" if model is not None else ""
        target = cmd.output_dir / (f"{results_file_stem(doc.eval_name)}{label}-{stamp}-"
                                   f"{doc.eval_id.rsplit('-', 1)[-1]}.json")
    if target is None:
        return None
    if writer is not None:
        writer.finish(doc, target)
    else:
        write_atomic(target, encode_results(doc))
    return target


def exit_code_of(doc: ResultsDocument, engine: Engine) -> int:
    """0 / 1 as the runs went; 128 + the signal that stopped the run (130 Ctrl-C, 143 SIGTERM)."""
    from waza_core import signals

    if signals.received() is not None or (doc.incomplete and engine.cancel.is_set()):
        return signals.exit_code(ExitCode.INTERRUPTED)
    return exit_code(doc)


def _console_task(entry: TaskResult, with_runs: bool = False) -> dict:
    """What the progress line shows of a finished task (with ``-v``, its runs' feedback too)."""
    shown = {"test_id": entry.test_id, "display_name": entry.display_name, "status": entry.status,
             "stats": entry.stats}
    if with_runs and entry.status in ("failed", "error"):
        from waza_core.results.codec import task_to_json

        shown["runs"] = task_to_json(entry)["runs"]
    return shown


#: at most this many characters of the eval name go into a file name of --output-dir
NAME_STEM_LIMIT = 100


#: at most this many characters of a model go into a file name of --output-dir
MODEL_STEM_LIMIT = 60


def results_file_stem(name: str, limit: int = NAME_STEM_LIMIT) -> str:
    """A file-name-safe stem from an eval name (or a model): ASCII letters, digits,
    ``-_.`` only, no leading dot, at most ``limit`` characters (with a short hash of the
    full name when it had to be cut, so two long names stay apart)."""
    import hashlib

    stem = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "-" for c in name).lstrip(".")
    if len(stem) > limit:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"{stem[:limit - 9]}-{digest}"
    return stem or "results"


def check_output_dir_name(cmd: RunCommand, eval_name: str) -> None:
    """The --output-dir file name is fixed before anything runs, so it cannot lose a
    finished run (a 300-character eval name once did: "File name too long")."""
    if cmd.output_dir is not None:
        from waza_core.safe_write import check_target

        check_target(cmd.output_dir / f"{results_file_stem(eval_name)}-00000000T000000Z-000000.json", "results")


def check_model_targets(cmd: RunCommand, eval_name: str, models: list[str]) -> None:
    """Before anything runs, every file of a multi-model run: ``-o F`` names one file per
    model beside ``F`` (``F_<model>``), which must be writable and short enough. A
    character device (``-o /dev/null``) takes every model's document itself: no file is
    made beside it (once ``/dev/null_<model>`` was). A FIFO or an inherited descriptor
    (``/dev/stdout``) holds one document only, as ``-o -`` does."""
    from waza_core.run.multimodel import per_model_path
    from waza_core.safe_write import check_target, writes_in_place

    if len(models) < 2:
        return
    if cmd.output is not None and str(cmd.output) != STDOUT:
        if _is_device(cmd.output):
            return
        if writes_in_place(cmd.output):
            raise WazaError(f"-o {cmd.output} takes one results document (a FIFO or a descriptor); with several "
                            "models use -o FILE (one file per model) or --output-dir")
        for model in models:
            check_target(per_model_path(cmd.output, model), "results")
    if cmd.output_dir is not None:
        for model in models:
            name = f"{results_file_stem(eval_name)}-{model_label(model)}-00000000T000000Z-000000.json"
            check_target(cmd.output_dir / name, "results")


def model_label(model: str) -> str:
    """The model in a file name of --output-dir: made safe and short."""
    from waza_core.run.multimodel import sanitize

    return results_file_stem(sanitize(model), MODEL_STEM_LIMIT)


def _is_device(target: Path) -> bool:
    """A character device other than an inherited descriptor (``-o /dev/null``)."""
    import stat

    from waza_core.safe_write import writes_in_place

    try:
        return stat.S_ISCHR(os.stat(target).st_mode) and writes_in_place(target) and not _is_stdout(target)
    except OSError:
        return False


def _is_stdout(target: Path) -> bool:
    """True when ``target`` is where stdout goes (``-o /dev/stdout``): the summary then
    moves to stderr, so the results stay valid JSON."""
    try:
        a, b = os.stat(target), os.fstat(1)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
