"""``waza grade``: grade the runs of a saved results file offline."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, quiet_option, user_errors


def register(app: typer.Typer) -> None:
    app.command("grade")(grade)


@user_errors
def grade(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder): its graders are used."),
    results: Path = typer.Option(..., "--results", "-r", help="A results file from `waza run -o` "
                                 "(e.g. made with --skip-graders)."),
    task: Optional[str] = typer.Option(None, "--task", help="Grade only the task with this id."),
    workspace: Optional[Path] = typer.Option(
        None, "--workspace",
        help="Folder that file-reading graders see as the run's workspace (WAZA_WORKSPACE_DIR); the original "
             "workspace is gone. Required when a grader reads the workspace (file, diff, program, a judge with "
             "workspace: run, plugin graders): pass `--workspace .` to grade the current folder."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Also write a full results file with recomputed stats here."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model",
                                              help="Model for judge graders (overrides config.judge_model)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Print each graded run on stderr."),
    quiet: bool = quiet_option(),
    color: str = color_option(),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Grade saved runs with a suite's graders and print a JSON summary on stdout.

    Runs whose agent failed stay errors. Exit 0 whatever the grades are (read
    `passed` in the summary); 2 on bad input, when a grader reads the workspace and
    --workspace is not given, or when the summary or -o file cannot be written.
    """
    import json

    from waza_core.cli.common import fail, stdout_lost_exit
    from waza_core.errors import WazaError
    from waza_core.plugins import get_registry
    from waza_core.results.codec import encode_results, read_results
    from waza_core.results.console import setup_console
    from waza_core.results.io import check_writable_target, write_atomic
    from waza_core.run.regrade import regrade
    from waza_core.suite.load import load_suite

    con = setup_console(color, quiet, verbose)
    if workspace is not None and not workspace.is_dir():
        raise WazaError(f"--workspace {workspace}: no such folder")
    if output is not None:
        check_writable_target(output)
    registry = get_registry(plugin)
    suite = load_suite(eval_file, registry)
    warnings: list[str] = []
    doc = read_results(results, warnings)
    if doc.eval_name and doc.eval_name != suite.name:
        con.warning(f"{results} holds runs of {doc.eval_name!r}, grading them with suite {suite.name!r}")

    def progress(task_id: str, run) -> None:
        extra = f": {run.error_msg}" if run.error_msg else ""
        con.detail(f"waza: {task_id} run {run.run_number}: {run.status}{extra}")

    try:
        report = regrade(suite, registry, doc, task_id=task, workspace_dir=workspace, on_run=progress,
                         judge_model=judge_model, require_workspace=True)
    except KeyboardInterrupt:
        from waza_core import signals

        con.error("interrupted; nothing was written")
        raise typer.Exit(signals.exit_code()) from None
    for warning in warnings + report.warnings:
        con.warning(warning)
    lost = None
    if output is not None:
        try:
            write_atomic(output, encode_results(report.outcome))
        except WazaError as exc:  # still print the summary, then exit 2
            lost = exc
    con.result(json.dumps(report.summary, indent=2))
    if lost is not None:
        raise fail(str(lost))
    stdout_lost_exit()
