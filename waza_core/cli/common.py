"""Helpers shared by the command modules: error reporting and logging set-up."""

from __future__ import annotations

import functools
import sys
from typing import Callable

import typer

PLUGIN_OPTION_HELP = ("Load a plugin module, or disable one with no:NAME (repeatable; "
                      "also WAZA_PLUGINS=a,b and WAZA_DISABLED_PLUGINS=a,b).")


def fail(message: str, code: int | None = None) -> typer.Exit:
    """Print ``waza: error: message`` on stderr and return the Exit to raise (default
    :attr:`ExitCode.USAGE`)."""
    from waza_core.errors import ExitCode

    sys.stderr.write(f"waza: error: {message}\n")
    return typer.Exit(ExitCode.USAGE if code is None else code)


def user_errors(fn: Callable) -> Callable:
    """Turn a WazaError into a one-line message and exit 2, without a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from waza_core.errors import WazaError

        try:
            return fn(*args, **kwargs)
        except WazaError as exc:
            raise fail(str(exc), exc.exit_code) from None

    return wrapper


_LOG_SETTINGS = {"format": "console", "quiet": False}


def configure_logging(log_format: str = "console", quiet: bool = False) -> None:
    """Remember the log settings; structlog is configured on the first log call.

    ``import structlog`` costs ~90 ms (it pulls in rich), so a command that logs
    nothing never pays for it.
    """
    _LOG_SETTINGS.update(format=log_format, quiet=quiet)
    _LOGGER.clear()


_LOGGER: list = []


def get_logger():
    """A structlog logger on stderr: readable on a terminal, JSON with ``--log-format json``."""
    if _LOGGER:
        return _LOGGER[0]
    import logging

    import structlog

    processors = [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso")]
    if _LOG_SETTINGS["format"] == "json":
        processors.append(structlog.processors.JSONRenderer())
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    level = logging.WARNING if _LOG_SETTINGS["quiet"] else logging.INFO
    logger = structlog.wrap_logger(structlog.PrintLogger(sys.stderr), processors=processors,
                                   wrapper_class=structlog.make_filtering_bound_logger(level))
    _LOGGER.append(logger)
    return logger
