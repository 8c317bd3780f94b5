"""structlog on stderr, configured on first use.

``waza run --log-format json`` and ``-q`` set what :func:`get_logger` builds; the
logger writes through the console's stderr (:mod:`waza_core.results.console`), which
escapes what comes from outside and never raises on a closed or full stream.
"""

from __future__ import annotations

from waza_core.results.console import escape, get_console

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
    return {k: escape(v) if isinstance(v, str) else v for k, v in event.items()}


class _SafeStderr:
    """structlog's PrintLogger target: the console's stderr, which never raises."""

    def write(self, text: str) -> None:
        get_console().err.write(text)

    def flush(self) -> None:
        pass


def get_logger():
    """A structlog logger on stderr: readable on a terminal, JSON with ``--log-format json``."""
    if _LOGGER:
        return _LOGGER[0]
    import structlog  # here, not at the top: ~90 ms (it pulls in rich), paid only by a command that logs
    import logging  # deferred: only its level numbers, and structlog has imported it (~3 ms of a plain run)

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
