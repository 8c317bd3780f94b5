"""The ``waza`` command line.

``waza --version``, ``waza --help`` and ``waza COMMAND --help`` (at 80 columns) are
answered before typer is imported, and command modules import
their heavy libraries inside the command functions, so ``--help`` stays fast.

:func:`main` also makes the process robust to its surroundings: standard descriptors
closed by the caller (``>&-``) are reopened on ``/dev/null`` (so no file waza opens
lands on them), and a stdout or stderr that fails at the very end (a full disk, a
closed pipe) never turns into a traceback or Python's exit status 120.
"""

from __future__ import annotations

import errno
import os
import sys


def main(argv: list[str] | None = None) -> None:
    _reopen_closed_std_fds()
    args = sys.argv[1:] if argv is None else argv
    signals = None  # waza_core.signals once installed (not for --version: it imports enum)
    collector = None  # waza_core.collector once a command set it up
    code: object = None
    try:
        if args in (["--version"], ["-V"]):
            # deferred: waza_core._version adds ~0.0 ms to importing this module
            from waza_core._version import __version__

            print(f"waza {__version__}")
            raise SystemExit()  # ExitCode.OK, without importing enum on the fastest path
        if args and args[-1] == "--help" and _help_is_80_columns():
            from waza_core.cli import top_help  # what typer prints, without importing it (~100 ms)

            text = top_help.TEXT if len(args) == 1 else top_help.HELPS.get(" ".join(args[:-1]))
            if text is not None:
                sys.stdout.write(text)
                raise SystemExit()
        # deferred: not needed by --version and --help (a module of a few lines)
        from waza_core import collector

        collector.set_up()  # rare collector passes while the command imports and loads
        # deferred: waza_core adds ~3.8 ms to importing this module
        from waza_core import signals

        signals.install()  # SIGTERM and SIGHUP stop a command as Ctrl-C does
        from waza_core import method_cache  # deferred: attrs, not for --version and --help

        method_cache.install()  # attrs' generated methods compiled once, not in every command
        if args and args[0] == "validate":
            _validate_without_typer(args[1:])
        if args and args[0] == "run":
            _run_without_typer(args[1:])
        # deferred: waza_core.cli.app adds ~78.7 ms to importing this module
        from waza_core.cli.app import build_app

        app = build_app(args[0] if args else None)
        app(args=args, prog_name="waza")
    except SystemExit as exc:
        code = exc.code
        if code == 130 and signals is not None and signals.received() is not None:  # commands that only know Ctrl-C
            code = signals.exit_code()
        raise SystemExit(code) from None
    except OSError as exc:
        # An output that failed outside the console layer (--version, --help print to
        # stdout): a full disk or a closed pipe is an I/O error, exit 2, in one line.
        if exc.errno not in _STREAM_ERRNOS:
            raise
        _silence_stdout()
        _say(f"waza: error: cannot write the output: {exc.strerror or exc}\n")
        # deferred: waza_core.errors adds ~2.7 ms to importing this module
        from waza_core.errors import ExitCode

        raise SystemExit(ExitCode.USAGE) from None
    finally:
        _kill_leftovers()
        _flush_quietly()
        if argv is None:  # the process's own command line: it ends here
            _spare_the_last_collection()
        elif collector is not None:  # main() called in a process that goes on
            collector.as_before()
        if signals is not None and signals.received() is not None:
            # Stopped by a signal: the results are written and every child is gone. A
            # thread still blocked in a plugin must not keep the process alive.
            signals.force_exit(code if isinstance(code, int) else signals.exit_code())


def _spare_the_last_collection() -> None:
    """Collect the young generations, then move every object into the collector's permanent
    generation (``gc.freeze``), so the full collection Python runs while it shuts down has
    nothing to walk: ~15 ms of a ~120 ms warm ``waza validate`` (median of 21 runs). Objects
    are still freed by their reference counts and ``atexit`` handlers still run; what changes is
    that a garbage *cycle* already in the oldest generation is not finalized at exit (its
    ``__del__`` does not run, a temporary file held only by such a cycle stays), which CPython
    does not promise either. waza removes what it makes explicitly; a plugin should too
    (``with``, ``close()``, ``weakref.finalize``). Not done when ``main`` is called with
    arguments (tests, embedding): that process goes on."""
    import gc  # deferred: not needed by --version (a built-in module: no cost)

    gc.collect(1)  # young cycles (most of what a command leaves) are still finalized
    gc.freeze()


def _validate_without_typer(args: list[str]) -> None:
    """``waza validate`` of a plain command line, before typer and the command modules are
    imported (~60 ms of a ~150 ms warm start); raises SystemExit. Any other form returns,
    for typer to parse (and report) as usual."""
    # deferred: waza_core.cli adds ~16.0 ms to importing this module
    from waza_core.cli import validate_check

    plain = validate_check.parse_plain(args)
    if plain is not None:
        raise SystemExit(validate_check.check(*plain))


def _run_without_typer(args: list[str]) -> None:
    """``waza run`` of a plain command line, before typer is imported (~40 ms of a ~250 ms
    warm run of examples/quickstart); raises SystemExit. Any other form returns, for typer."""
    # deferred: waza_core.cli adds ~23.6 ms to importing this module
    from waza_core.cli import run_plain

    code = run_plain.run(args)
    if code is not None:
        raise SystemExit(code)


def _help_is_80_columns() -> bool:
    """Whether click would format ``--help`` at 80 columns here (its widest): a terminal of
    80 columns or more, COLUMNS >= 80, or no terminal at all (click's fallback is 80)."""
    columns = os.environ.get("COLUMNS")
    if columns:
        return columns.isdigit() and int(columns) >= 80
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns >= 80
    except (OSError, AttributeError, ValueError):
        return True


def _kill_leftovers() -> None:
    """Nothing waza started may outlive it (a grader's daemon, say): see waza_core.procs."""
    procs = sys.modules.get("waza_core.procs")
    if procs is not None:  # only if a child was ever started
        procs.kill_leftovers(every_child=True)


_STREAM_ERRNOS = {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG}


def _silence_stdout() -> None:
    if sys.stdout is not None:
        # deferred: waza_core.results.console adds ~22.8 ms to importing this module
        from waza_core.results.console import _silence

        _silence(sys.stdout)


def _say(text: str) -> None:
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _reopen_closed_std_fds() -> None:
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    if not closed:  # the usual case: no import (safe_write pulls in re and tempfile)
        return
    # deferred: waza_core.safe_write adds ~35.5 ms to importing this module
    from waza_core.safe_write import UNUSABLE_FDS

    for fd in closed:
        try:
            got = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        except OSError:
            continue
        if got != fd:  # cannot happen while lower descriptors are open; be safe anyway
            os.close(got)
            continue
        UNUSABLE_FDS.add(fd)


def _flush_quietly() -> None:
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            # deferred: waza_core.results.console adds ~22.8 ms to importing this module
            from waza_core.results.console import _silence

            _silence(stream)
