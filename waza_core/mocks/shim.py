"""The command-mock shim process: answer one call of a mocked executable.

Runs first on the agent's PATH under the mocked name. It finds the run's session,
picks the first response whose matchers all pass (argv exact or by anchored RE2,
environment, working directory), records the call and replays the response's
stdout, stderr and exit code. A name the session does not mock runs the real
executable (PATH without the shim folder, ``WAZA_COMMAND_MOCK_*`` removed). An
unmatched call exits 127 with waza's message. Standard library only, plus RE2 when a
response uses ``args_regex``: it starts in a few tens of milliseconds.
"""

from __future__ import annotations

import base64
import json
import os
import sys

from waza_core.gofmt import go_quote, go_quote_list
from waza_core.mocks.records import write_record
from waza_core.mocks.sanitize import sanitize_args
from waza_core.regex import compile_regex

ROOT_ENV = "WAZA_COMMAND_MOCK_ROOT"
SESSION_ENV = "WAZA_COMMAND_MOCK_SESSION"
PREFIX = "waza command mock: "
CHUNK = 1 << 16


class ConfigError(Exception):
    pass


def main(argv: list[str]) -> int:
    try:
        root, name, args = _parse(argv)
    except ValueError as exc:
        sys.stderr.write(f"{PREFIX}{exc}\n")
        return 127
    try:
        cwd = os.getcwd()
    except OSError:
        sys.stderr.write(f"{PREFIX}cannot determine working directory\n")
        return 127
    try:
        config, mock = find_mock(root, os.environ.get(SESSION_ENV, ""), name, cwd)
    except ConfigError:
        sys.stderr.write(f"{PREFIX}failed to load task configuration\n")
        return 127
    if mock is None:
        return run_host_command(root, name, args)
    env = list(os.environ.items())
    for index, response in enumerate(mock.get("responses") or []):
        if matches(response, args, cwd, config["workspace"]):
            try:
                record(config["log_dir"], name, args, int(response.get("exit_code") or 0), index, env)
            except OSError:
                sys.stderr.write(f"{PREFIX}failed to load task configuration\n")
                return 127
            return replay(response)
    message = (f"{PREFIX}no matching response for executable {go_quote(name)} with arguments "
               f"{go_quote_list(sanitize_args(args, env))} in working directory "
               f"{go_quote(sanitize_args([cwd], env)[0])}; add a command_mocks.responses fixture for this "
               "CLI invocation\n")
    try:
        record(config["log_dir"], name, args, 127, -1, env)
    except OSError:
        sys.stderr.write(f"{PREFIX}failed to load task configuration\n")
        return 127
    sys.stderr.write(message)
    return 127


def _parse(argv: list[str]) -> tuple[str, str, list[str]]:
    root = name = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return _check(root, name), name, argv[i + 1:]
        if arg in ("--root", "--name") and i + 1 < len(argv):
            if arg == "--root":
                root = argv[i + 1]
            else:
                name = argv[i + 1]
            i += 2
            continue
        raise ValueError(f"unexpected shim argument {arg!r}")
    raise ValueError("the shim must be called with --root R --name N -- ARGS")


def _check(root: str | None, name: str | None) -> str:
    if not root or not name:
        raise ValueError("the shim must be called with --root R --name N -- ARGS")
    return root


# -- finding the session ---------------------------------------------------------------------


def _read_config(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(config, dict) or not isinstance(config.get("mocks"), list):
        raise ConfigError("malformed configuration")
    return config


def _find(mocks: list, name: str) -> dict | None:
    for mock in mocks:
        if isinstance(mock, dict) and _same_command(mock.get("name", ""), name):
            return mock
    return None


def _same_command(left: str, right: str) -> bool:
    return left.lower() == right.lower() if os.sep == "\\" else left == right


def _inside(workspace: str, cwd: str) -> bool:
    rel = os.path.relpath(os.path.realpath(cwd), workspace)
    return rel != ".." and not rel.startswith(".." + os.sep)


def find_mock(root: str, session_id: str, name: str, cwd: str) -> tuple[dict, dict | None]:
    """(session config, the mock of ``name`` or None). With no session id, the newest
    session whose workspace holds ``cwd`` and that mocks ``name`` (waza's fallback)."""
    sessions = os.path.join(root, "sessions")
    if session_id:
        if not session_id.startswith("task-") or os.path.basename(session_id) != session_id \
                or session_id in (".", ".."):
            raise ConfigError("invalid command-mock session")
        config = _read_config(os.path.join(sessions, session_id, "config.json"))
        return config, _find(config["mocks"], name)
    try:
        names = sorted(os.listdir(sessions))
    except OSError as exc:
        raise ConfigError(str(exc)) from None
    selected: tuple[dict, dict | None] = ({}, None)
    for entry in names:
        try:
            config = _read_config(os.path.join(sessions, entry, "config.json"))
        except ConfigError:
            continue
        if not _inside(str(config.get("workspace", "")), cwd):
            continue
        mock = _find(config["mocks"], name)
        if mock is not None and (selected[1] is None or config.get("created_at", 0) > selected[0].get("created_at", 0)):
            selected = (config, mock)
    return selected


# -- matching ------------------------------------------------------------------------------


def matches(response: dict, args: list[str], cwd: str, workspace: str) -> bool:
    """argv (exact, or anchored RE2 per element), then environment, then working directory."""
    wanted = response.get("args")
    if wanted is not None:
        if list(wanted) != args:
            return False
    else:
        patterns = response.get("args_regex") or []
        if len(patterns) != len(args):
            return False
        if patterns:

            for pattern, arg in zip(patterns, args, strict=True):
                if compile_regex(f"^(?:{pattern})$").search(arg) is None:
                    return False
    for key, value in (response.get("environment") or {}).items():
        if os.environ.get(key) != value:
            return False
    workdir = response.get("workdir")
    if workdir:
        rel = os.path.relpath(os.path.realpath(cwd), workspace).replace(os.sep, "/")
        if rel != workdir:
            return False
    return True


def record(log_dir: str, name: str, args: list[str], exit_code: int, index: int, env) -> None:
    """The call, its arguments sanitized, in the session's calls folder."""
    invocation: dict = {"command": name}
    clean = sanitize_args(args, env)
    if clean:
        invocation["args"] = clean
    invocation.update(exit_code=exit_code, response_index=index)
    write_record(log_dir, invocation)


def replay(response: dict) -> int:
    """Write stdout (inline bytes or the fixture, streamed), then stderr; the exit code."""
    out = sys.stdout.buffer
    try:
        if response.get("stdout_file"):
            with open(response["stdout_file"], "rb") as fh:
                while chunk := fh.read(CHUNK):
                    out.write(chunk)
        elif response.get("stdout_b64"):
            out.write(base64.b64decode(response["stdout_b64"]))
        out.flush()
    except (BrokenPipeError, OSError):
        _silence_stdout()
        return 1
    if response.get("stderr"):
        try:
            sys.stderr.write(response["stderr"])
            sys.stderr.flush()
        except OSError:
            pass
    return int(response.get("exit_code") or 0)


def _silence_stdout() -> None:
    """After a closed pipe, keep Python's exit-time flush from printing a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except OSError:
        pass


# -- pass-through ----------------------------------------------------------------------------


def _same_dir(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def run_host_command(root: str, name: str, args: list[str]) -> int:
    """Replace this process with the real ``name`` (PATH minus the shims, no mock variables)."""
    shim_dir = os.path.join(root, "bin")
    host_dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not _same_dir(d, shim_dir)]
    program = None
    for folder in host_dirs:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            program = candidate
            break
    if program is None:
        sys.stderr.write(f"{PREFIX}no fixture for {go_quote(name)} and no host executable was found\n")
        return 127
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("WAZA_COMMAND_MOCK_")}
    env["PATH"] = os.pathsep.join(host_dirs)
    try:
        sys.stdout.flush()
        os.execve(program, [program, *args], env)
    except OSError:
        sys.stderr.write(f"{PREFIX}running host command {go_quote(name)} failed\n")
        return 127
    return 127  # pragma: no cover - execve does not return
