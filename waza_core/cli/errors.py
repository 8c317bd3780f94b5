"""How a command turns an error into one line and an exit code, without typer.

:func:`waza_core.cli.common.user_errors` (the typer commands) and the commands that
:mod:`waza_core.cli` runs before typer is imported (``waza validate``: typer and the
command modules cost ~60 ms of a ~150 ms start, measured with ``python -X importtime``)
share it, so both print the same line and exit with the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def exit_code_of(fn: Callable[[], Any]) -> int | None:
    """Call ``fn``; for a WazaError, a Ctrl-C, a RecursionError or a MemoryError print the
    one ``waza: error: ...`` line and return the exit code (None: ``fn`` returned)."""
    # deferred: waza_core.errors adds ~0.5 ms to importing this module
    from waza_core.errors import ExitCode, WazaError
    from waza_core.results.console import get_console, print_warnings

    try:
        fn()
        return None
    except WazaError as exc:
        print_warnings(getattr(exc, "warnings", ()))
        message, code = str(exc), exc.exit_code
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP before anything was written
        # deferred: waza_core adds ~2.0 ms to importing this module
        from waza_core import signals

        message, code = "interrupted", signals.exit_code()
    except RecursionError:
        message, code = "an input is nested too deeply to be read (see docs/safety.md for the limits)", None
    except MemoryError:
        message, code = ("an input is too large to be read in the memory available "
                         "(see docs/safety.md for the limits)"), None
    get_console().error(message)
    return ExitCode.USAGE if code is None else code
