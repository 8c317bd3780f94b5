"""Helpers shared by the command modules: error reporting, console options, logging.

Every command reports errors through :func:`fail` / :func:`user_errors`, which print
one escaped ``waza: error: ...`` line through the console layer
(:mod:`waza_core.results.console`) and never raise on a closed or full stderr.
"""

from __future__ import annotations

import functools
from typing import Callable

import typer

PLUGIN_OPTION_HELP = ("Load a plugin module, or disable one with no:NAME (repeatable; "
                      "also WAZA_PLUGINS=a,b and WAZA_DISABLED_PLUGINS=a,b).")
COLOR_HELP = "Colour: auto (on a terminal, unless NO_COLOR is set), always or never."


def color_option():
    return typer.Option("auto", "--color", help=COLOR_HELP, metavar="auto|always|never")


def quiet_option():
    return typer.Option(False, "-q", "--quiet", help="Print only errors and warnings.")


def verbose_option(help: str = "Print more detail on stderr."):  # noqa: A002 - typer's name
    return typer.Option(False, "-v", "--verbose", help=help)


def setup_console(color: str = "auto", quiet: bool = False, verbose: bool = False):
    """Make the console of this command from its options (a bad --color is exit 2)."""
    from waza_core.results import console

    if color not in console.COLOR_CHOICES:
        raise fail(f"--color must be one of {', '.join(console.COLOR_CHOICES)}, not {color!r}")
    if quiet and verbose:
        raise fail("use either -q/--quiet or -v/--verbose, not both")
    level = console.QUIET if quiet else (console.VERBOSE if verbose else console.NORMAL)
    return console.set_console(console.Console(verbosity=level, color=color))


def fail(message: str, code: int | None = None) -> typer.Exit:
    """Print ``waza: error: message`` on stderr (escaped) and return the Exit to raise
    (default :attr:`ExitCode.USAGE`)."""
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
        from waza_core.errors import WazaError

        try:
            return fn(*args, **kwargs)
        except WazaError as exc:
            print_warnings(getattr(exc, "warnings", ()))
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP before anything was written
            from waza_core import signals

            raise fail("interrupted", signals.exit_code()) from None
        except RecursionError:
            raise fail("an input is nested too deeply to be read (see docs/safety.md for the limits)") from None
        except MemoryError:
            raise fail("an input is too large to be read in the memory available "
                       "(see docs/safety.md for the limits)") from None

    return wrapper


def print_warnings(lines) -> None:
    """Print suite warnings (``file:line:col: warning: ...``) on stderr, one per line,
    escaped (a key in a suite is text from a file)."""
    from waza_core.results.console import escape, get_console

    err = get_console().err
    for line in lines:
        err.write(escape(line) + "\n")


_LOG_SETTINGS = {"format": "console", "quiet": False}


def configure_logging(log_format: str = "console", quiet: bool = False) -> None:
    """Remember the log settings; structlog is configured on the first log call.

    ``import structlog`` costs ~90 ms (it pulls in rich), so a command that logs
    nothing never pays for it.
    """
    _LOG_SETTINGS.update(format=log_format, quiet=quiet)
    _LOGGER.clear()


_LOGGER: list = []


def _escape_values(_logger, _name, event: dict) -> dict:
    """structlog processor: plugin names and errors come from outside; escape them."""
    from waza_core.results.console import escape

    return {k: escape(v) if isinstance(v, str) else v for k, v in event.items()}


class _SafeStderr:
    """structlog's PrintLogger target: the console's stderr, which never raises."""

    def write(self, text: str) -> None:
        from waza_core.results.console import get_console

        get_console().err.write(text)

    def flush(self) -> None:
        pass


def get_logger():
    """A structlog logger on stderr: readable on a terminal, JSON with ``--log-format json``."""
    if _LOGGER:
        return _LOGGER[0]
    import logging

    import structlog

    from waza_core.results.console import get_console

    processors = [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso")]
    if _LOG_SETTINGS["format"] == "json":
        processors.append(structlog.processors.JSONRenderer())
    else:
        processors.append(_escape_values)
        processors.append(structlog.dev.ConsoleRenderer(colors=get_console().color_err))
    level = logging.WARNING if _LOG_SETTINGS["quiet"] else logging.INFO
    logger = structlog.wrap_logger(structlog.PrintLogger(_SafeStderr()), processors=processors,
                                   wrapper_class=structlog.make_filtering_bound_logger(level))
    _LOGGER.append(logger)
    return logger


def stdout_lost_exit() -> None:
    """Exit 2 when a command's machine output on stdout could not be written."""
    from waza_core.results.console import get_console

    out = get_console().out
    if not out.ok():
        raise fail(f"cannot write the output to stdout: {out.problem}")

