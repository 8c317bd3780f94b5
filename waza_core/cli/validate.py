"""``waza validate``: check a suite without running it."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, quiet_option


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)


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
    # deferred: waza_core.cli.validate_check adds ~0.4 ms to importing this module
    from waza_core.cli.validate_check import check

    code = check(eval_file, strict, plugin, quiet, color)
    if code:
        raise typer.Exit(code)
