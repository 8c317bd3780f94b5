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
    model: str | None = None
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
    backend: str | None = None  # --backend; else .waza.yaml defaults.backend, config.backend, local
    ray_address: str | None = None  # --ray-address; else RAY_ADDRESS, .waza.yaml defaults.rayAddress
    journal: Path | None = None  # --journal: append each finished run here
    resume: Path | None = None  # --resume: rerun only what this journal lacks, keep appending


def run_command(cmd: RunCommand) -> int:
    """Run ``waza run``; the exit code. User mistakes raise :class:`WazaError` (exit 2)."""
    from waza_core.cli.common import configure_logging
    from waza_core.results import console

    check_targets(cmd)
    configure_logging(cmd.log_format, cmd.quiet)
    suite, registry = load(cmd)
    backend, backend_options = pick_backend(cmd, suite)
    reports = plan_for_run(cmd.reporters, cmd.reporter_options, registry, cmd.output)
    with machine_stdout(reports.uses_stdout) as machine:
        reporter = console.Reporter(quiet=cmd.quiet)
        options = run_options(cmd, reporter)
        options.backend, options.backend_options = backend, backend_options
        engine = Engine(suite, registry, options, plugins=tuple(requested_plugins(cmd.plugins)))
        cache = attach_cache(cmd, engine)
        from waza_core.run import journal as journal_mod

        journal = journal_mod.attach(engine, cmd.journal, cmd.resume)
        reporter.start(suite, engine)
        try:
            doc = engine.run()
        finally:
            reporter.stop()  # also when a run could not start: give the terminal its cursor back
            if journal is not None:
                journal.close()
        if cache is not None:
            cache.mark(doc)
        target = write_results(cmd, doc, machine.stream)
        failures = reports.write(results_to_json(doc), machine.stream) if reports.requests else []
        reporter.summary(_console_outcome(doc), target)
    if failures:
        raise WazaError("; ".join(failures))
    return exit_code_of(doc, engine)


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
    if cmd.resume is not None:
        from waza_core.run.journal import check_resume_target

        if cmd.journal is not None and cmd.journal != cmd.resume:
            raise WazaError("--resume PATH goes on appending to PATH: give --resume alone, not with another --journal")
        check_resume_target(cmd.resume)
    elif cmd.journal is not None:
        from waza_core.run.journal import check_new_target

        check_new_target(cmd.journal)


def pick_backend(cmd: RunCommand, suite) -> tuple[str, dict]:
    return resolve_backend(cmd.backend, cmd.ray_address, cmd.workers, suite)


def resolve_backend(flag: str | None, address_flag: str | None, workers: int | None, suite) -> tuple[str, dict]:
    """The backend (``--backend``, else .waza.yaml defaults.backend, else config.backend,
    else local) and its options; exit 2 when it cannot be used here (Ray not installed)."""
    from waza_core.run.backend import check_backend
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
        from waza_core.cli.common import get_logger

        for p in broken:
            get_logger().warning("plugin failed to load", plugin=p.name, error=p.error)
    return load_suite(cmd.eval_file, registry), registry


def run_options(cmd: RunCommand, reporter) -> RunOptions:
    return RunOptions(
        executor=cmd.executor, model=cmd.model, trials=cmd.trials,
        parallel=True if cmd.parallel or (cmd.workers is not None and cmd.workers != 1) else None,
        workers=cmd.workers, task_globs=list(cmd.task), tag_globs=list(cmd.tags), context_dir=cmd.context_dir,
        keep_workspaces=cmd.keep_workspaces, skip_graders=cmd.skip_graders,
        update_snapshots=cmd.update_snapshots, judge_model=cmd.judge_model,
        fail_fast=True if cmd.fail_fast else None,
        on_task_done=None if cmd.quiet else
        lambda index, total, entry: reporter.task_done(index, total, _console_task(entry)),
    )


def write_results(cmd: RunCommand, doc: ResultsDocument, stdout=None) -> Path | None:
    """Write the results file (-o, or a new name in --output-dir); where it went.
    ``-o -`` writes to ``stdout`` (the real one; the rest of the output went to stderr)."""
    from waza_core.results.codec import encode_results
    from waza_core.results.io import write_atomic

    target = cmd.output
    if target is not None and str(target) == STDOUT and stdout is not None:
        stdout.write(encode_results(doc))
        stdout.flush()
        return None
    if cmd.output_dir is not None:
        stamp = doc.timestamp.replace(":", "").replace("-", "")
        target = cmd.output_dir / f"{_safe(doc.eval_name)}-{stamp}-{doc.eval_id.rsplit('-', 1)[-1]}.json"
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
