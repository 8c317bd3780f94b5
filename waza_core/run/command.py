"""``waza run`` as a library function: load the suite, run it, write the results, exit code.

The typer command (:mod:`waza_core.cli.run`) only maps its flags onto a
:class:`RunCommand` and calls :func:`run_command`. A new flag is one field here, one
line there, and its use in the step below that needs it:

- :func:`check_targets`: where the results go, checked before anything runs;
- :func:`load`: plugins and the suite;
- :func:`run_options`: the :class:`~waza_core.run.plan.RunOptions` of the engine;
- :func:`write_results`: the results file (``-`` is stdout); reporters
  (:mod:`waza_core.results.reports`) are checked before the run and written after it;
- the result cache (:mod:`waza_core.results.cache`) wraps the backend;
- :func:`exit_code_of`: 0 / 1 / 130.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from waza_core.errors import ExitCode, WazaError
from waza_core.results.codec import results_to_json
from waza_core.results.model import ResultsDocument, TaskResult, exit_code
from waza_core.results.reports import STDOUT, machine_stdout, plan_for_run
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
    parallel: bool = False
    workers: int | None = None
    fail_fast: bool = False
    keep_workspaces: bool = False
    update_snapshots: bool = False
    judge_model: str | None = None
    skip_graders: bool = False
    quiet: bool = False
    log_format: str = "console"
    plugins: list[str] = attrs.field(factory=list)
    reporters: list[str] = attrs.field(factory=list)  # --reporter NAME[:PATH]
    reporter_options: list[str] = attrs.field(factory=list)  # --reporter-option NAME.KEY=VALUE
    cache: bool = False
    cache_dir: Path = Path(".waza-cache")


def run_command(cmd: RunCommand) -> int:
    """Run ``waza run``; the exit code. User mistakes raise :class:`WazaError` (exit 2).

    Several models (``--model a --model b``, ``config.models``) run the suite once each
    (:mod:`waza_core.run.multimodel`); an A/B run runs it twice per model
    (:mod:`waza_core.run.baseline`). Reporters write the last model's document, as in
    waza (Go)."""
    import sys

    from waza_core.cli.common import configure_logging
    from waza_core.results import console
    from waza_core.run import baseline, multimodel
    from waza_core.run.finish import console_report

    check_targets(cmd)
    configure_logging(cmd.log_format, cmd.quiet)
    suite, registry = load(cmd)
    models = multimodel.models_to_run(cmd.models, suite)
    if len(models) > 1 and cmd.output is not None and str(cmd.output) == STDOUT:
        raise WazaError("-o - writes one results document; with several models use -o FILE (one file per "
                        "model) or --output-dir")
    reports = plan_for_run(cmd.reporters, cmd.reporter_options, registry, cmd.output)
    code, done, failures = ExitCode.OK, [], []
    with machine_stdout(reports.uses_stdout) as machine:
        reporter = console.Reporter(quiet=cmd.quiet)
        for i, model in enumerate(models):
            doc, engine = run_model(cmd, suite, registry, reporter, model)
            if len(models) > 1:
                doc.extra["models"] = list(models)
            target = write_results(cmd, doc, machine.stream, model if len(models) > 1 else None)
            if reports.requests and i == len(models) - 1:
                failures = reports.write(results_to_json(doc), machine.stream)
            reporter.summary(_console_outcome(doc), target)
            if not cmd.quiet:  # stdout goes to stderr while a reporter writes to the real one
                sys.stdout.write(console_report(doc))
                if doc.extra.get("is_baseline"):
                    sys.stdout.write(baseline.impact_report(doc))
            done.append((model, doc))
            model_code = exit_code_of(doc, engine)
            if model_code == ExitCode.INTERRUPTED:
                return model_code
            code = max(code, model_code)  # a failing model does not stop the others, as in waza (Go)
        if len(models) > 1 and not cmd.quiet:
            sys.stdout.write(multimodel.comparison_table(done))
    if failures:
        raise WazaError("; ".join(failures))
    return code


class _Interrupted(Exception):
    def __init__(self, doc: ResultsDocument) -> None:
        self.doc = doc


def run_model(cmd: RunCommand, suite, registry, reporter, model: str) -> tuple[ResultsDocument, Engine]:
    """One model's run (two passes for an A/B run); the document and the last engine."""
    from waza_core.run import baseline

    engines: list[Engine] = []

    def run_pass(the_suite, skills_off: bool) -> ResultsDocument:
        options = run_options(cmd, reporter)
        options.model = model
        if skills_off:
            options.skill_directories = ()
        engine = Engine(the_suite, registry, options, plugins=tuple(cmd.plugins))
        engines.append(engine)
        cache = attach_cache(cmd, engine)
        reporter.start(the_suite, engine)
        try:
            doc = engine.run()
        finally:
            reporter.stop()  # also when a run could not start: give the terminal its cursor back
        if cache is not None:
            cache.mark(doc)
        if engine.cancel.is_set():
            raise _Interrupted(doc)  # no second pass after Ctrl-C
        return doc

    try:
        if cmd.baseline or suite.baseline:
            doc = baseline.run_baseline(run_pass, suite, _print_warning)
        else:
            doc = run_pass(suite, False)
    except _Interrupted as stop:
        doc = stop.doc
    return doc, engines[-1]


def attach_cache(cmd: RunCommand, engine: Engine):
    """``--cache``: put the result cache in front of the backend (or say why it stays off)."""
    if not cmd.cache:
        return None
    import sys

    from waza_core.results.cache import RunCache

    cache = RunCache(engine.prepared, cmd.cache_dir, lambda m: sys.stderr.write(f"waza: warning: {m}\n"))
    if not cache.active:
        sys.stderr.write(f"waza: warning: {cache.off_reason}\n")
        return None
    engine.wrap_backend = cache.wrap_backend
    return cache


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


def load(cmd: RunCommand):
    """(suite, registry): the plugins (a broken one is a warning) and the suite."""
    from waza_core.plugins import get_registry
    from waza_core.suite.load import load_suite

    registry = get_registry(cmd.plugins)
    broken = registry.broken()
    if broken:
        from waza_core.cli.common import get_logger

        for p in broken:
            get_logger().warning("plugin failed to load", plugin=p.name, error=p.error)
    suite = load_suite(cmd.eval_file, registry)
    from waza_core.cli.common import print_warnings

    print_warnings(suite.warnings)  # unknown keys of a 1.x eval and the like: shown, not lost
    return suite, registry


def run_options(cmd: RunCommand, reporter) -> RunOptions:
    return RunOptions(
        executor=cmd.executor, model=cmd.models[0] if cmd.models else None, trials=cmd.trials,
        parallel=True if cmd.parallel or (cmd.workers is not None and cmd.workers != 1) else None,
        workers=cmd.workers, task_globs=list(cmd.task), tag_globs=list(cmd.tags), context_dir=cmd.context_dir,
        keep_workspaces=cmd.keep_workspaces, skip_graders=cmd.skip_graders,
        update_snapshots=cmd.update_snapshots, judge_model=cmd.judge_model,
        fail_fast=True if cmd.fail_fast else None,
        on_task_done=None if cmd.quiet else
        lambda index, total, entry: reporter.task_done(index, total, _console_task(entry)),
        on_warning=_print_warning,
    )


def _print_warning(message: str) -> None:
    import sys

    sys.stderr.write(f"waza: warning: {message}\n")


def write_results(cmd: RunCommand, doc: ResultsDocument, stdout=None, model: str | None = None) -> Path | None:
    """Write the results file (-o, or a new name in --output-dir); where it went.
    ``-o -`` writes to ``stdout`` (the real one; the rest of the output went to stderr).
    In a multi-model run ``model`` names the file of that model (``results_<model>.json``)."""
    from waza_core.results.codec import encode_results
    from waza_core.results.io import write_atomic
    from waza_core.run.multimodel import per_model_path, sanitize

    target = cmd.output
    if target is not None and str(target) == STDOUT and stdout is not None:
        stdout.write(encode_results(doc))
        stdout.flush()
        return None
    if target is not None and model is not None:
        target = per_model_path(target, model)
    if cmd.output_dir is not None:
        stamp = doc.timestamp.replace(":", "").replace("-", "")
        label = f"-{sanitize(model)}" if model is not None else ""
        target = cmd.output_dir / f"{_safe(doc.eval_name)}{label}-{stamp}-{doc.eval_id.rsplit('-', 1)[-1]}.json"
    if target is not None:
        write_atomic(target, encode_results(doc))
    return target


def exit_code_of(doc: ResultsDocument, engine: Engine) -> int:
    if doc.incomplete and engine.cancel.is_set():
        return ExitCode.INTERRUPTED
    return exit_code(doc)


def _console_task(entry: TaskResult) -> dict:
    """What the progress line shows of a finished task."""
    return {"test_id": entry.test_id, "display_name": entry.display_name, "status": entry.status,
            "stats": entry.stats}


def _console_outcome(doc: ResultsDocument) -> dict:
    """What the console summary reads: the header and the tasks that did not pass."""
    from waza_core.results.codec import summary_to_json, task_to_json

    problems = [task_to_json(t) for t in doc.tasks if t.status in ("failed", "error")]
    return {"eval_name": doc.eval_name, "incomplete": doc.incomplete,
            "summary": summary_to_json(doc.summary) if doc.summary is not None else {}, "tasks": problems}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name) or "results"
