"""``waza preflight``: a suite's prerequisites, checked offline (waza_core.suite.preflight)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors


def register(app: typer.Typer) -> None:
    app.command("preflight")(preflight)


@user_errors
def preflight(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml."),
    output_format: str = typer.Option("human", "--format", help="human or json (a waza.preflight 1.0 report)."),
    context_dir: Optional[Path] = typer.Option(None, "--context-dir",
                                               help="Fixtures folder (relative to the current folder; default: "
                                                    "<suite>/fixtures)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 for unresolved or unsupported prerequisites too."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Inspect a suite's prerequisites offline, without starting an agent, a model, a grader,
    a hook or a mock server: task files, paths, graders, locks, mocks, requirements and the
    executor's static capabilities. Exit 1 for an invalid configuration (with --strict also
    for unresolved or unsupported prerequisites), 0 otherwise, 2 for a bad option."""
    # deferred: json adds ~2.3 ms to importing this module
    import json

    # deferred: waza_core.errors adds ~0.9 ms to importing this module
    from waza_core.errors import ExitCode, WazaError
    from waza_core.plugins import get_registry
    from waza_core.suite import preflight as pf

    if output_format not in ("human", "json"):
        raise WazaError("invalid --format: use human or json")
    report = pf.inspect(str(eval_file), get_registry(plugin), str(context_dir) if context_dir else None)
    if output_format == "json":
        typer.echo(json.dumps(report.doc, indent=2))
    else:
        typer.echo(pf.render_human(report.doc), nl=False)
    if report.failed(strict):
        typer.echo("waza: preflight prerequisites failed; inspect diagnostics", err=True)
        raise typer.Exit(ExitCode.FAILED)
