"""``waza run``: run an eval suite and write a results file."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, quiet_option, user_errors, verbose_option
from waza_core.limits import MAX_TRIALS, MAX_WORKERS


def register(app: typer.Typer) -> None:
    app.command("run")(run)


@user_errors
def run(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the results JSON here."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir",
                                              help="Write <eval name>-<UTC time>-<id>.json into this folder."),
    context_dir: Optional[Path] = typer.Option(None, "--context-dir",
                                               help="Fixtures folder (default: <suite>/fixtures)."),
    task: List[str] = typer.Option([], "--task", help="Only tasks whose id or name matches this glob (repeatable)."),
    tags: List[str] = typer.Option([], "--tags", help="Only tasks with a tag matching this glob (repeatable)."),
    trials: Optional[int] = typer.Option(None, "--trials", min=1, max=MAX_TRIALS,
                                         help="Override config.trials_per_task."),
    executor: Optional[str] = typer.Option(None, "--executor", help="Override config.executor."),
    model: Optional[str] = typer.Option(None, "--model", help="Override config.model."),
    parallel: bool = typer.Option(False, "--parallel", help="Run tasks concurrently."),
    workers: Optional[int] = typer.Option(None, "--workers", min=0, max=MAX_WORKERS,
                                          help="Concurrent runs (0 = one per core); "
                                               "any value but 1 implies --parallel."),
    fail_fast: bool = typer.Option(False, "--fail-fast", help="Stop after the first task that does not pass."),
    keep_workspaces: bool = typer.Option(False, "--keep-workspaces", help="Do not delete run workspaces."),
    skip_graders: bool = typer.Option(False, "--skip-graders",
                                      help="Run the agent only; record runs as n/a for `waza grade` later."),
    quiet: bool = quiet_option(),
    verbose: bool = verbose_option("Also print the failing graders' feedback as each task finishes."),
    color: str = color_option(),
    log_format: str = typer.Option("console", "--log-format", help="console or json (stderr logs)."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Run an eval suite. Exit 0 when every task passed, 1 when one failed or errored, 2 on bad input."""
    from waza_core.cli.common import configure_logging, fail, setup_console
    from waza_core.errors import WazaError
    from waza_core.plugins import get_registry
    from waza_core.results import console
    from waza_core.results.io import check_writable_target, dumps, write_atomic
    from waza_core.run.engine import Engine, RunOptions, exit_code
    from waza_core.suite.load import load_suite

    con = setup_console(color, quiet, verbose)
    if output and output_dir:
        raise fail("use either -o/--output or --output-dir, not both")
    if log_format not in ("console", "json"):
        raise fail("--log-format must be 'console' or 'json'")
    configure_logging(log_format, quiet)
    target = output
    if output_dir is not None:
        import os

        if not output_dir.is_dir():
            raise fail(f"--output-dir {output_dir}: no such folder")
        if not os.access(output_dir, os.W_OK | os.X_OK):
            raise fail(f"--output-dir {output_dir}: folder is not writable")
    if target is not None:
        check_writable_target(target)
    registry = get_registry(plugin)
    broken = registry.broken()
    if broken:
        from waza_core.cli.common import get_logger

        for p in broken:
            get_logger().warning("plugin failed to load", plugin=p.name, error=p.error)
    suite = load_suite(eval_file, registry)
    if output_dir is not None:
        from waza_core.safe_write import check_target

        # the name is fixed before anything runs, so a bad one cannot lose a finished run
        name_stem = results_file_stem(suite.name)
        check_target(output_dir / f"{name_stem}-00000000T000000Z-000000.json", "results")
    reporter = console.Reporter(console=con, summary_to_stderr=target is not None and _is_stdout(target))
    options = RunOptions(
        executor=executor, model=model, trials=trials,
        parallel=True if parallel or (workers is not None and workers != 1) else None,
        workers=workers, task_globs=list(task), tag_globs=list(tags), context_dir=context_dir,
        keep_workspaces=keep_workspaces, skip_graders=skip_graders, fail_fast=True if fail_fast else None,
        on_task_done=reporter.task_done,
    )
    engine = Engine(suite, registry, options)
    reporter.start(suite, engine)
    try:
        outcome = engine.run()
    finally:
        reporter.stop()  # also when a run could not start: give the terminal its cursor back
    if output_dir is not None:
        stamp = outcome["timestamp"].replace(":", "").replace("-", "")
        target = output_dir / f"{name_stem}-{stamp}-{outcome['eval_id'].rsplit('-', 1)[-1]}.json"
    lost = None
    if target is not None:
        try:
            write_atomic(target, dumps(outcome))
        except WazaError as exc:  # still show the summary, then exit 2
            lost = exc
    reporter.summary(outcome, target if lost is None else None)
    if lost is not None:
        raise fail(str(lost))
    if outcome["incomplete"] and engine.cancel.is_set():
        raise typer.Exit(130)
    raise typer.Exit(exit_code(outcome))


#: at most this many characters of the eval name go into a file name of --output-dir
NAME_STEM_LIMIT = 100


def results_file_stem(name: str) -> str:
    """A file-name-safe stem from an eval name: ASCII letters, digits, ``-_.`` only, no
    leading dot, at most :data:`NAME_STEM_LIMIT` characters (with a short hash of the
    full name when it had to be cut, so two long names stay apart)."""
    import hashlib

    stem = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "-" for c in name).lstrip(".")
    if len(stem) > NAME_STEM_LIMIT:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"{stem[:NAME_STEM_LIMIT - 9]}-{digest}"
    return stem or "results"


def _is_stdout(target: Path) -> bool:
    """True when ``target`` is where stdout goes (``-o /dev/stdout``): the summary then
    moves to stderr, so the results stay valid JSON."""
    import os

    try:
        a, b = os.stat(target), os.fstat(1)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
