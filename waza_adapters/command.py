"""``--adapter command``: an optimizer adapter written in any language.

Each call starts ``--adapter-command`` with its ``--adapter-arg`` values, writes one
request document to its stdin and reads one response document from its stdout; the
core then validates the reply like any adapter's. Waza cannot know what the program
calls, so this adapter always needs ``--allow-paid-calls``.

The rules of the seed, and why:

- argv, no shell: nothing in a flag is ever interpreted by a shell;
- a fresh, empty temporary working directory per call, removed afterwards: the
  adapter sees no files but the request, and keeps no state between calls;
- an ``--adapter-arg`` (or a command with a ``/``) naming an existing relative path
  is made absolute first, because the working directory changes;
- the environment is exactly :data:`BASE_ENV` plus the ``--adapter-env`` names (those
  set), so provider keys reach the adapter only when the user names them; not even
  waza's process tag is added (``tag_environment=False``: the adapter's escaped
  descendants are found by their session and the pipes they hold instead);
- stdout is capped at 8 MiB (read incrementally, the process group is killed at the
  first byte over), stderr keeps its last 64 KiB for the report;
- on timeout, cancellation or overflow the whole process group is killed
  (:mod:`waza_core.procs`), so no child keeps making calls.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from waza_core import ADAPTER_ENV_BASELINE as BASE_ENV
from waza_core import ADAPTER_STDOUT_LIMIT as STDOUT_LIMIT
from waza_core import AdapterFailure, AdapterReply, OptimizerAdapter, child_environment, hookimpl

STDERR_TAIL_BYTES = 64 * 1024
#: how much of stderr goes into the one-line failure message (the report keeps the full tail)
MESSAGE_TAIL_CHARS = 300
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def absolutize(value: str, cwd: str) -> str:
    """``value`` made absolute when it names an existing path relative to ``cwd``."""
    if not value or os.path.isabs(value):
        return value
    candidate = os.path.join(cwd, value)
    return os.path.abspath(candidate) if os.path.lexists(candidate) else value


def adapter_env(names: tuple[str, ...], environ: Mapping[str, str]) -> dict[str, str]:
    """The child's whole environment: :data:`BASE_ENV` (the seed's list, kept by waza's one
    environment policy) and ``names``, when set."""
    return child_environment(names, base=environ, baseline=BASE_ENV)


def stderr_tail(data: bytes, truncated: bool) -> str | None:
    """The kept end of stderr as text; ``None`` when the adapter wrote nothing."""
    if truncated:  # the window may start inside a UTF-8 sequence: drop its continuation bytes
        i = 0
        while i < min(3, len(data)) and data[i] & 0xC0 == 0x80:
            i += 1
        data = data[i:]
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        return None
    return ("[...]\n" if truncated else "") + text


def _names_a_path(command: str) -> bool:
    """Whether ``command`` is a path (has a separator) rather than a name looked up on PATH."""
    return os.sep in command or bool(os.altsep and os.altsep in command)


def _last_words(tail: str | None) -> str:
    if not tail:
        return ""
    lines = [ln.strip() for ln in tail.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if len(last) > MESSAGE_TAIL_CHARS:
        last = "..." + last[-MESSAGE_TAIL_CHARS:]
    return f"; stderr ends with: {last}" if last else ""


def _signal_name(returncode: int) -> str:
    # deferred: signal adds ~0.8 ms to importing this module
    import signal

    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class CommandAdapter(OptimizerAdapter):
    """Runs ``--adapter-command`` once per request; see the module docstring."""

    name = "command"
    always_paid = True
    option_help = {
        "command": "The program to run (--adapter-command): a name on PATH or a path.",
        "arg": "One argument for the program, in order (--adapter-arg; repeatable).",
        "env": "Pass this environment variable by name (--adapter-env; repeatable).",
    }
    repeatable_options = frozenset({"arg", "env"})

    def __init__(self, options) -> None:
        super().__init__(options)
        # Resolved now: the working directory of waza may change, the adapter's will.
        cwd = os.getcwd()
        command = options.get("command") or ""
        self.argv = [absolutize(command, cwd) if _names_a_path(command) else command,
                     *(absolutize(a, cwd) for a in options.get_all("arg"))]
        self.env = adapter_env(options.get_all("env"), os.environ)

    def check_options(self) -> list[str]:
        """Flag problems found before any call: a missing or unknown command, a bad or unset
        ``--adapter-env`` name (a typo would otherwise drop a key silently)."""
        # deferred: shutil adds ~4.8 ms to importing this module
        import shutil

        problems = []
        command = self.options.get("command")
        flag, env_flag = self.options.origin("command"), self.options.origin("env")
        if not command:
            problems.append(f"--adapter command needs {flag} (the program to run, e.g. python3)")
        elif _names_a_path(command):
            path = self.argv[0]
            if not os.path.isfile(path):
                problems.append(f"{flag} {command}: no such file")
            elif not os.access(path, os.X_OK):
                problems.append(f"{flag} {command}: not executable (chmod +x it, or run it "
                                "through its interpreter, e.g. --adapter-command python3 --adapter-arg FILE)")
        elif shutil.which(command, path=self.env.get("PATH", os.defpath)) is None:
            hint = f" (for the file in this folder, write ./{command})" if os.path.isfile(command) else ""
            problems.append(f"{flag} {command}: command not found on PATH{hint}")
        for name in self.options.get_all("env"):
            if not _ENV_NAME.match(name):
                problems.append(f"{env_flag} {name!r}: not a variable name (give the name only, not NAME=value)")
            elif name not in os.environ:
                problems.append(f"{env_flag} {name}: not set in waza's environment")
        return problems

    def call(self, request: dict[str, Any], *, timeout, cancel) -> AdapterReply:
        # deferred: shutil adds ~4.8 ms to importing this module
        import shutil
        import tempfile

        # deferred: waza_core adds ~5.0 ms to importing this module
        from waza_core import ProcessStartError
        from waza_core import run_process as run

        data = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        workdir = tempfile.mkdtemp(prefix="waza-adapter-")
        try:
            try:
                result = run(self.argv, cwd=workdir, env=self.env, input=data, timeout=timeout or None,
                             max_stdout=STDOUT_LIMIT, max_stderr=STDERR_TAIL_BYTES, kill_on_overflow=True,
                             stderr_tail=True, cancel=cancel, tag_environment=False)
            except ProcessStartError as exc:
                raise AdapterFailure(f"adapter command: {exc}") from None
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        tail = stderr_tail(result.stderr, result.stderr_truncated)
        what = f"adapter command {self.argv[0]!r}"
        if result.cancelled:
            raise AdapterFailure(f"{what} was cancelled; its process group was killed", stderr_tail=tail)
        if result.timed_out:
            raise AdapterFailure(f"{what} timed out after {timeout:g}s (--adapter-timeout); its process "
                                 f"group was killed{_last_words(tail)}", stderr_tail=tail)
        if result.overflowed:
            raise AdapterFailure(f"{what} wrote more than {STDOUT_LIMIT} bytes (8 MiB) to stdout; its process "
                                 "group was killed", stderr_tail=tail)
        if result.returncode < 0:
            raise AdapterFailure(f"{what} was killed by {_signal_name(result.returncode)}{_last_words(tail)}",
                                 stderr_tail=tail)
        if result.returncode != 0:
            raise AdapterFailure(f"{what} exited with status {result.returncode}{_last_words(tail)}",
                                 stderr_tail=tail)
        return AdapterReply(raw=result.stdout, stderr_tail=tail)


@hookimpl
def waza_register_optimizer_adapters(register):
    register(CommandAdapter)
