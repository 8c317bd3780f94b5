"""``waza validate``: check a suite without running it."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, quiet_option, user_errors


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)


@user_errors
def validate(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    strict: bool = typer.Option(False, "--strict",
                                help="Treat warnings (unknown keys of a 1.x eval, globs without files...) as errors."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
    quiet: bool = quiet_option(),
    color: str = color_option(),
) -> None:
    """Check a suite as `waza run` would before its first run, without running anything.

    Exit 0 when valid (warnings are printed on stderr), 2 with every problem listed.
    """
    from waza_core.errors import ExitCode, SuiteError
    from waza_core.paths import display_path
    from waza_core.plugins import get_registry
    from waza_core.results.console import print_warnings, setup_console
    from waza_core.run.engine import Engine
    from waza_core.suite.load import load_suite

    con = setup_console(color, quiet)
    registry = get_registry(plugin)
    try:
        suite = load_suite(eval_file, registry, strict=strict)
    except SuiteError as exc:
        from waza_core.results.console import escape

        print_warnings(exc.warnings)
        for line in exc.problems:
            con.err.write(escape(line) + "\n")
        con.err.write(f"waza: {len(exc.problems)} problem(s) found\n")
        raise typer.Exit(ExitCode.USAGE) from None
    print_warnings(suite.warnings)
    # everything `waza run` checks before the first run: executor, graders, input files, skills
    Engine(suite, registry)
    if not con.quiet:
        from waza_core.results.console import escape

        warned = f", {len(suite.warnings)} warning(s)" if suite.warnings else ""
        con.result(f"{escape(display_path(suite.file))}: valid ({len(suite.tasks)} task(s), "
                   f"{len(suite.graders)} global grader(s){warned})")
