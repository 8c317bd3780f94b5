"""``waza report RESULTS.json``: build reports (HTML, JUnit, markdown, ...) from a saved file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, fail, user_errors

REPORTER_HELP = ("NAME[:PATH]: write a report with this reporter (repeatable; see `waza plugins`); "
                 "without PATH, to stdout.")
REPORTER_OPTION_HELP = "NAME.KEY=VALUE: an option of a reporter (repeatable), e.g. junit.output=true."


def register(app: typer.Typer) -> None:
    app.command("report")(report)


@user_errors
def report(
    results_file: Path = typer.Argument(..., help="A results JSON file (any waza version), or a "
                                                   "`waza optimize` report.json."),
    html: Optional[str] = typer.Option(None, "--html", help="Write the HTML report here (- for stdout)."),
    junit: Optional[str] = typer.Option(None, "--junit", help="Write the JUnit XML report here."),
    markdown: Optional[str] = typer.Option(None, "--markdown", help="Write the markdown summary here."),
    reporter: List[str] = typer.Option([], "--reporter", help=REPORTER_HELP),
    reporter_option: List[str] = typer.Option([], "--reporter-option", help=REPORTER_OPTION_HELP),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Write reports of a saved results file: the same bytes `waza run --reporter` writes.

    Exit 0 when every report was written, 2 on bad input or a report that could not be written.
    """
    # deferred: waza_core.plugins adds ~39.0 ms to importing this module
    from waza_core.plugins import get_registry
    from waza_core.results import reports
    from waza_core.results.load import open_results

    specs = [f"{name}:{target}" for name, target in (("html", html), ("junit", junit), ("markdown", markdown))
             if target is not None] + list(reporter)
    if not specs:
        raise fail("name at least one report: --html PATH, --junit PATH, --markdown PATH or --reporter NAME[:PATH]")
    registry = get_registry(plugin)
    requests = reports.parse_requests(specs, list(reporter_option), registry)
    for request in requests:
        if request.target != reports.STDOUT and _same_file(request.target, results_file):
            raise fail(f"--reporter {request.label!r}: {request.target} is the results file being read; "
                       "write the report to another file")
    view = open_results(results_file)
    reports.check_kind(requests, view, str(results_file))
    to_stdout = any(r.target == reports.STDOUT for r in requests)
    with reports.machine_stdout(to_stdout) as machine:
        failures = reports.write_requests(requests, view, machine.stream)
    for line in failures:
        typer.echo(f"waza: error: {line}", err=True)
    if failures:
        # deferred: waza_core.errors adds ~0.6 ms to importing this module
        from waza_core.errors import ExitCode

        raise typer.Exit(ExitCode.USAGE)


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (through links too); False when either is missing."""

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
