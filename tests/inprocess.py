"""Run the ``waza`` command line inside the test process, as ``run_waza`` does in a new one.

Starting ``python -m waza_core`` costs an interpreter and every import, again for each call;
most CLI tests check what the command prints, writes and exits with, not the process
boundary. :func:`run_waza_in_process` calls :func:`waza_core.cli.main` with the same
arguments, working folder, environment and stdin, and returns the same
``subprocess.CompletedProcess`` (bytes stdout and stderr, the exit status). The standard
descriptors 0, 1 and 2 are pointed at temporary files for the call, so output written to
the descriptors themselves (``-o -``, a child's inherited stderr) is caught too.

What this process keeps between calls is put back after each: the environment (and the
temporary folder ``tempfile`` read from it; ``PYTHONPATH`` folders go on ``sys.path`` for the
call, and the modules imported from them are forgotten after it), the working folder, the signal handlers waza
installs, its record of a received signal, and the objects ``waza run`` froze out of the
collector's sight. Tests of signals, of closed
or odd descriptors and of start-up keep ``run_waza`` (a real process), as do tests that
compare two runs for sameness (a plugin's module-level state, a seeded generator, lives on in
this process).
"""

from __future__ import annotations

import gc
import io
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import pytest

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def run_waza_in_process(*args: str, cwd: Path | None = None, env: dict | None = None, input: bytes | None = None,
                        timeout: float = 120) -> subprocess.CompletedProcess:
    """:func:`tests.conftest.run_waza` without a new interpreter (``timeout`` is not enforced)."""
    full_env = dict(os.environ)
    full_env.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    full_env.update(env or {})
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    registries = _plugin_registries()
    handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin.write(input or b"")
        stdin.seek(0)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
        saved_streams = sys.stdin, sys.stdout, sys.stderr
        code: object = 0
        added_paths: list[str] = []
        try:
            for fd, target in ((0, stdin), (1, out), (2, err)):
                os.dup2(target.fileno(), fd)
            sys.stdin = io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8", errors="surrogateescape")
            sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8", errors="surrogateescape",
                                          write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(2), "wb"), encoding="utf-8", errors="backslashreplace",
                                          write_through=True)
            os.environ.clear()
            os.environ.update(full_env)
            added_paths = _add_python_path(full_env.get("PYTHONPATH", ""))
            tempfile.tempdir = None  # read TMPDIR again, as a new process would
            if cwd is not None:
                os.chdir(cwd)
            code = _call_main(list(args))
        finally:
            for stream in (sys.stdin, sys.stdout, sys.stderr):
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
                os.dup2(saved, fd)
                os.close(saved)
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            tempfile.tempdir = None
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            _forget_process_state(registries)
            _drop_python_path(added_paths)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["waza", *args], code, out.read(), err.read())


def _call_main(argv: list[str]) -> int:
    """The exit status ``python -m waza_core ARGV`` would have; a traceback as Python prints it.

    On its way out the real command kills every child process left (nothing it started may
    outlive it); here that would also kill the children of the test itself (a FIFO reader, a
    server), so only what waza started is killed, as for a library caller."""
    from waza_core import cli

    real_kill = cli._kill_leftovers
    cli._kill_leftovers = _kill_waza_leftovers
    try:
        cli.main(argv)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        sys.stderr.write(f"{exc.code}\n")
        return 1
    except BaseException:
        sys.stderr.write(traceback.format_exc())
        return 1
    finally:
        cli._kill_leftovers = real_kill
    return 0


def _kill_waza_leftovers() -> None:
    procs = sys.modules.get("waza_core.procs")
    if procs is not None:
        procs.kill_leftovers(every_child=False)


def _add_python_path(value: str) -> list[str]:
    """The ``PYTHONPATH`` folders of the call that this process lacks, put first on
    ``sys.path`` (as a new interpreter would), so plugins written by a test import."""
    added = [p for p in value.split(os.pathsep) if p and os.path.abspath(p) not in map(os.path.abspath, sys.path)]
    sys.path[:0] = added
    return added


def _drop_python_path(added: list[str]) -> None:
    """Take the call's folders off ``sys.path`` and forget the modules imported from them: a
    later test may write another module of the same name elsewhere."""
    if not added:
        return
    for p in added:
        if p in sys.path:
            sys.path.remove(p)
    roots = tuple(os.path.join(os.path.abspath(p), "") for p in added)
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if where and os.path.abspath(where).startswith(roots):
            del sys.modules[name]


def _plugin_registries() -> dict:
    """The plugin registries this process built so far (``waza_core.plugins`` keeps one per
    ``-p`` request, and an executor looks names up in all of them)."""
    plugins = sys.modules.get("waza_core.plugins")
    return dict(plugins._CACHE) if plugins is not None else {}


def _forget_process_state(registries: dict) -> None:
    """What one command leaves in the process that a new interpreter would not have: its
    plugin registries (one with a conflicting ``-p`` plugin would fail every later lookup),
    its record of a signal, its console, the objects it froze."""
    plugins = sys.modules.get("waza_core.plugins")
    if plugins is not None:
        plugins._CACHE.clear()
        plugins._CACHE.update(registries)
    signals = sys.modules.get("waza_core.signals")
    if signals is not None:
        signals._received.clear()
        signals._installed.clear()
        signals._defer[0] = 0
    console = sys.modules.get("waza_core.results.console")
    if console is not None:
        console._current.clear()
    gc.unfreeze()


@pytest.fixture(name="waza")
def waza_in_process():
    """The ``waza`` fixture of tests/conftest.py, in this process: a test module that imports
    this function gets it in place of the real process."""
    return run_waza_in_process
