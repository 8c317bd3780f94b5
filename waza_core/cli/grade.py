"""``waza grade``: grade the runs of a saved results file offline."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, fail, quiet_option, stdout_lost_exit, user_errors


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
    repeat: Optional[int] = typer.Option(None, "--repeat", metavar="K",
                                         help="Ask every judge (prompt) grader K times per run (K >= 2) and "
                                              "record how often it agreed with itself (judge_agreement); "
                                              "deterministic graders are graded once."),
    min_agreement: float = typer.Option(0.667, "--min-agreement", metavar="ALPHA",
                                        help="With --repeat: a judge whose Krippendorff's alpha (pass/fail) "
                                             "is below ALPHA is flagged unstable (docs/statistics.md)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Print each graded run on stderr."),
    quiet: bool = quiet_option(),
    color: str = color_option(),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Grade saved runs with a suite's graders and print a JSON summary on stdout.

    Runs whose agent failed stay errors. Exit 0 whatever the grades are (read
    `passed` in the summary; with --repeat, also whatever the judges' agreement);
    2 on bad input (--repeat below 2 included), when a grader reads the workspace
    and --workspace is not given, or when the summary or -o file cannot be written.
    """
    # deferred: json adds ~4.9 ms to importing this module
    import json

    # deferred: waza_core.errors adds ~0.5 ms to importing this module
    from waza_core import collector
    from waza_core.errors import WazaError
    from waza_core.plugins import get_registry
    from waza_core.results.codec import encode_results, read_results
    from waza_core.results.console import setup_console
    from waza_core.results.io import check_writable_target, read_bytes
    from waza_core.run.regrade import regrade
    from waza_core.run.regrade_stream import regrade_bytes
    from waza_core.safe_write import is_special, write_stream
    from waza_core.suite.load import load_suite

    con = setup_console(color, quiet, verbose)
    judges = None
    if repeat is not None:
        from waza_core.run.judge_agreement import JudgeRepeats  # imports numpy: only with --repeat

        judges = JudgeRepeats(repeat, min_agreement)
    if workspace is not None and not workspace.is_dir():
        raise WazaError(f"--workspace {workspace}: no such folder")
    if output is not None:
        check_writable_target(output)
    registry = get_registry(plugin)
    suite = load_suite(eval_file, registry)
    collector.as_before()  # the grading: the usual passes (a garbage cycle there may hold a transcript)
    warnings: list[str] = []

    def check_name(doc) -> None:
        if doc.eval_name and doc.eval_name != suite.name:
            con.warning(f"{results} holds runs of {doc.eval_name!r}, grading them with suite {suite.name!r}")

    def progress(task_id: str, run) -> None:
        extra = f": {run.error_msg}" if run.error_msg else ""
        con.detail(f"waza: {task_id} run {run.run_number}: {run.status}{extra}")

    if is_special(results):
        raise WazaError(f"cannot read results file {results}: it is not a regular file")
    try:  # a large file is graded from its bytes, one task at a time (regrade_stream)
        streamed = regrade_bytes(suite, registry, read_bytes(results), task_id=task, workspace_dir=workspace,
                                 on_run=progress, judge_model=judge_model, judges=judges, on_header=check_name,
                                 require_workspace=True)
        if streamed is None:
            doc = read_results(results, warnings)
            check_name(doc)
            report = regrade(suite, registry, doc, task_id=task, workspace_dir=workspace, on_run=progress,
                             judge_model=judge_model, judges=judges, require_workspace=True)
            summary, warnings, agreement = report.summary, warnings + report.warnings, report.judge_agreement
            data = encode_results(report.outcome) if output is not None else b""
            fill = lambda fh: fh.write(data)  # noqa: E731
        else:
            if output is not None:
                streamed.prepare()  # its warnings are printed with the others
            summary, warnings, fill = streamed.summary, streamed.warnings, streamed.write
            agreement = streamed.judge_agreement
    except KeyboardInterrupt:
        # deferred: waza_core adds ~0.3 ms to importing this module
        from waza_core import signals

        con.error("interrupted; nothing was written")
        raise typer.Exit(signals.exit_code()) from None
    for warning in warnings:
        con.warning(warning)
    if agreement is not None:
        show_agreement(con, agreement)
    lost = None
    if output is not None:
        try:
            write_stream(output, fill)
        except WazaError as exc:  # still print the summary, then exit 2
            lost = exc
    con.result(json.dumps(summary, indent=2))
    if lost is not None:
        raise fail(str(lost))
    stdout_lost_exit()


def show_agreement(con, block: dict) -> None:
    """The judge agreement on stderr (hidden by -q), and a warning per unstable judge (kept by -q)."""
    # deferred: waza_core.results.agreement adds ~185.6 ms to importing this module
    from waza_core.results.agreement import summary_lines, unstable_warning

    for line in summary_lines(block):
        con.info(line)
    for name in block.get("unstable") or ():
        con.warning(unstable_warning(name, block))
