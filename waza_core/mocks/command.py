"""``command_mocks`` on waza's side: the shim folder and one session per run.

A :class:`MockRuntime` is made for each run: a private folder (0700) outside
every workspace, with ``bin/`` (one shim per mocked name, first on the agent's PATH)
and ``sessions/``. The run opens a :class:`CommandMockSession`: ``config.json`` with
the run's mocks and workspace, and ``calls/`` where each shim invocation records
itself. The shim finds its session through ``WAZA_COMMAND_MOCK_SESSION`` (set in the
agent's environment), else, as in waza (Go), through its working directory.
Closing a session reads the calls, checks ``expect_calls`` and removes the folder.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from waza_core.errors import WazaError
from waza_core.gofmt import go_quote
from waza_core.mocks.records import COMMAND_FIELDS, read_records
from waza_core.mocks.spec import CommandMock
from waza_core.paths import PathEscape, display_path, resolve_inside
from waza_core.safe_write import write_file

ROOT_ENV = "WAZA_COMMAND_MOCK_ROOT"
SESSION_ENV = "WAZA_COMMAND_MOCK_SESSION"
#: the file a shim runs (standard library + this package only)
SHIM_ENTRY = Path(__file__).with_name("_shim_entry.py")


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``path`` atomically with ``mode`` (waza's one safe writer; a link is replaced)."""

    write_file(path, data, mode, through_links=False)


def render_shim(name: str, root: Path) -> str:
    """The POSIX shim: re-executes this Python, isolated (``-I``: no PYTHONPATH, no cwd on
    ``sys.path``, so nothing in the workspace can stand in for waza's modules)."""
    return ("#!/bin/sh\n"
            f"exec {shlex.quote(sys.executable)} -I {shlex.quote(str(SHIM_ENTRY))} "
            f"--root {shlex.quote(str(root))} --name {shlex.quote(name)} -- \"$@\"\n")


class MockRuntime:
    """The per-suite-run folder of shims and run sessions (see the module docstring)."""

    def __init__(self) -> None:
        try:
            self.root = Path(tempfile.mkdtemp(prefix="waza-mocks-"))
        except OSError as exc:
            raise WazaError(f"cannot create the mocks folder in {tempfile.gettempdir()}: {exc.strerror}; "
                            "set TMPDIR to a writable folder") from None
        self.bin = self.root / "bin"
        self.sessions = self.root / "sessions"
        self.bin.mkdir(mode=0o700)
        self.sessions.mkdir(mode=0o700)
        self._lock = threading.Lock()

    def ensure_shim(self, name: str) -> Path:
        """The shim for ``name`` (written once, atomically, mode 0700)."""
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise WazaError(f"command mock name {name!r} cannot be a shim: it must be a bare executable name")
        path = self.bin / name
        with self._lock:
            if not path.exists():
                _write_private(path, render_shim(name, self.root).encode("utf-8"), 0o700)
        return path

    def open_session(self, workspace: str, mocks: tuple[CommandMock, ...], base_dir: Path) -> CommandMockSession:
        """A run's session: shims for every name, ``config.json``, an empty ``calls/``."""
        for mock in mocks:
            self.ensure_shim(mock.name)
        stored = [{"name": m.name, "expect_calls": m.expect_calls,
                   "responses": [_stored_response(r, base_dir, m.name) for r in m.responses]} for m in mocks]
        folder = Path(tempfile.mkdtemp(prefix="task-", dir=self.sessions))
        try:
            calls = folder / "calls"
            calls.mkdir(mode=0o700)
            config = {"workspace": os.path.realpath(workspace), "log_dir": str(calls),
                      "created_at": time.time_ns(), "mocks": stored}
            _write_private(folder / "config.json", json.dumps(config).encode("utf-8"))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return CommandMockSession(self, folder, mocks)

    def mcp_root(self) -> Path:
        """Where the runs' MCP mock configurations and call logs live."""
        folder = self.root / "mcp"
        folder.mkdir(mode=0o700, exist_ok=True)
        return folder

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _stored_response(resp, base_dir: Path, name: str) -> dict:
    out = {"args": list(resp.args) if resp.args is not None else None,
           "args_regex": list(resp.args_regex) if resp.args_regex is not None else None,
           "environment": dict(resp.environment), "workdir": resp.workdir,
           "stderr": resp.stderr, "exit_code": resp.exit_code}
    if resp.fixture:
        out["stdout_file"] = str(resolve_fixture(base_dir, resp.fixture, f"command mock {name!r}"))
    elif resp.stdout:
        out["stdout_b64"] = base64.b64encode(resp.stdout).decode("ascii")
    return out


def resolve_fixture(base_dir: Path, rel: str, what: str) -> Path:
    """A fixture file inside ``base_dir`` (symlinks resolved), readable and regular."""

    try:
        path = resolve_inside(base_dir, rel)
    except PathEscape as exc:
        raise WazaError(f"{what} fixture {rel!r}: {exc}") from None
    if not path.is_file():
        state = "is not a regular file" if path.exists() else "does not exist"
        raise WazaError(f"{what} fixture {rel!r}: {display_path(path)} {state}")
    if not os.access(path, os.R_OK):
        raise WazaError(f"{what} fixture {rel!r}: {display_path(path)} is not readable")
    return path


class CommandMockSession:
    """One run's mocks; see :class:`MockRuntime`."""

    def __init__(self, runtime: MockRuntime, folder: Path, mocks: tuple[CommandMock, ...]) -> None:
        self.runtime = runtime
        self.folder = folder
        self.id = folder.name
        self.mocks = mocks
        self.closed = False

    def environment(self) -> dict[str, str]:
        """What the agent process needs so its shims find this session."""
        return {ROOT_ENV: str(self.runtime.root), SESSION_ENV: self.id}

    @property
    def path_prepend(self) -> tuple[str, ...]:
        return (str(self.runtime.bin),)

    def invocations(self, skipped: list[str] | None = None) -> list[dict]:
        """The recorded calls in the order they happened (record time, then file name);
        a malformed record is skipped, its reason appended to ``skipped``."""
        return read_records(self.folder / "calls", COMMAND_FIELDS, skipped)

    def close(self, skipped: list[str] | None = None) -> tuple[list[dict], str | None]:
        """(invocations, the first ``expect_calls`` mismatch or None); removes the session."""
        calls = self.invocations(skipped) if not self.closed else []
        problem = None
        for mock in self.mocks:
            if mock.expect_calls is None:
                continue
            count = sum(1 for c in calls if c.get("command", "").lower() == mock.name.lower())
            if count != mock.expect_calls:
                problem = f"command mock {go_quote(mock.name)} expected {mock.expect_calls} call(s), got {count}"
                break
        if not self.closed:
            self.closed = True
            shutil.rmtree(self.folder, ignore_errors=True)
        return calls, problem
