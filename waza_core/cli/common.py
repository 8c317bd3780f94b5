"""Helpers shared by the command modules: error reporting, console options, logging.

Every command reports errors through :func:`fail` / :func:`user_errors`, which print
one escaped ``waza: error: ...`` line through the console layer
(:mod:`waza_core.results.console`) and never raise on a closed or full stderr.
"""

from __future__ import annotations

import functools
from typing import Callable

import typer

from waza_core.cli.errors import exit_code_of

PLUGIN_OPTION_HELP = ("Load a plugin module, or disable one with no:NAME (repeatable; "
                      "also WAZA_PLUGINS=a,b and WAZA_DISABLED_PLUGINS=a,b).")
COLOR_HELP = "Colour: auto (on a terminal, unless NO_COLOR is set), always or never."


def color_option():
    return typer.Option("auto", "--color", help=COLOR_HELP, metavar="auto|always|never")


def quiet_option():
    return typer.Option(False, "-q", "--quiet", help="Print only errors and warnings.")


def verbose_option(help: str = "Print more detail on stderr."):  # noqa: A002 - typer's name
    return typer.Option(False, "-v", "--verbose", help=help)


def fail(message: str, code: int | None = None) -> typer.Exit:
    """Print ``waza: error: message`` on stderr (escaped) and return the Exit to raise
    (default :attr:`ExitCode.USAGE`)."""
    # deferred: waza_core.errors adds ~4.8 ms to importing this module
    from waza_core.errors import ExitCode
    from waza_core.results.console import get_console

    get_console().error(message)
    return typer.Exit(ExitCode.USAGE if code is None else code)


def user_errors(fn: Callable) -> Callable:
    """Turn a WazaError into a one-line message and exit 2, without a traceback.

    A RecursionError or MemoryError here can only come from an input too deep or too
    big for a parser (a hand-made results file, say): also exit 2, with a one-line
    message, never a traceback.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):

        result: list = []
        code = exit_code_of(lambda: result.append(fn(*args, **kwargs)))
        if code is not None:
            raise typer.Exit(code) from None
        return result[0]

    return wrapper


def stdout_lost_exit() -> None:
    """Exit 2 when a command's machine output on stdout could not be written."""
    # deferred: waza_core.results.console adds ~3.8 ms to importing this module
    from waza_core.results.console import get_console

    out = get_console().out
    if not out.ok():
        raise fail(f"cannot write the output to stdout: {out.problem}")

