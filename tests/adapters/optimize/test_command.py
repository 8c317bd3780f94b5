"""``--adapter command``: real child processes, real pipes, real signals.

Unit-level tests call :meth:`CommandAdapter.call` directly; end-to-end tests run the
optimizer loop over a copy of the walkthrough suite, so every reply also goes through
the core's validation exactly as in production.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.proc_helpers import alive
from waza_adapters import command as command_mod
from waza_adapters.command import BASE_ENV, CommandAdapter
from waza_core.optimize import contract
from waza_core.optimize.adapter import AdapterFailure, AdapterOptions
from waza_core.procs import CancelEvent

from .conftest import PY, adapter_script, wait_for

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process-group tests are POSIX only")

DESCRIBE = contract.describe_request("context-overlay")
PROBE = '''
def reply(req):
    note("probe.json", {"cwd": os.getcwd(), "listing": os.listdir("."), "env": dict(os.environ),
                        "argv": sys.argv, "request": req})
    return describe_ok()
'''


def adapter(command=PY, args=(), env_names=(), timeout=30.0) -> CommandAdapter:
    a = CommandAdapter(AdapterOptions.of({"command": command, "arg": [str(x) for x in args],
                                          "env": list(env_names)}, timeout_seconds=timeout))
    assert a.check_options() == []
    return a


def call(a: CommandAdapter, request=DESCRIBE, timeout=30.0, cancel=None):
    return a.call(request, timeout=timeout, cancel=cancel or threading.Event())


# -- how the process is started -----------------------------------------------------------------


def test_environment_is_only_the_base_list_plus_named_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("WAZA_CANARY", "tweet")
    monkeypatch.setenv("WAZA_PASSED", "yes")
    monkeypatch.setenv("LANG", "C.UTF-8")
    script = adapter_script(tmp_path, PROBE)
    (tmp_path / "obs").mkdir()
    call(adapter(args=[script, tmp_path / "obs"]))
    env = json.loads((tmp_path / "obs" / "probe.json").read_text())["env"]
    assert "WAZA_CANARY" not in env and "WAZA_PASSED" not in env
    assert env["LANG"] == "C.UTF-8" and env["PATH"] == os.environ["PATH"]
    # the seed's contract, exactly: the base names that are set and nothing else (no process
    # tag either; LANG is a UTF-8 locale, so Python does not add LC_CTYPE by locale coercion)
    assert set(env) == {name for name in BASE_ENV if name in os.environ}
    assert env == {name: os.environ[name] for name in BASE_ENV if name in os.environ}

    call(adapter(args=[script, tmp_path / "obs"], env_names=["WAZA_PASSED"]))
    env = json.loads((tmp_path / "obs" / "probe.json").read_text())["env"]
    assert env["WAZA_PASSED"] == "yes" and "WAZA_CANARY" not in env
    assert set(env) == {name for name in BASE_ENV if name in os.environ} | {"WAZA_PASSED"}


def test_runs_in_a_fresh_empty_temporary_folder_that_is_removed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "visible.txt").write_text("waza's working directory")
    script = adapter_script(tmp_path, PROBE)
    (tmp_path / "obs").mkdir()
    a = adapter(args=[script, tmp_path / "obs"])
    dirs = set()
    for _ in range(2):
        call(a)
        probe = json.loads((tmp_path / "obs" / "probe.json").read_text())
        assert probe["listing"] == []
        assert Path(probe["cwd"]).resolve() != tmp_path.resolve()
        assert Path(probe["cwd"]).name.startswith("waza-adapter-")
        assert not Path(probe["cwd"]).exists()  # removed after the call
        dirs.add(probe["cwd"])
    assert len(dirs) == 2  # a new one per call
    assert probe["request"] == DESCRIBE  # the request arrived on stdin, whole


def test_relative_paths_in_args_and_command_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    adapter_script(tmp_path, PROBE, name="probe.py")
    (tmp_path / "obs").mkdir()
    (tmp_path / "bin").mkdir()
    launcher = tmp_path / "bin" / "run-python"
    launcher.write_text(f"#!/bin/sh\nexec {PY} \"$@\"\n")
    launcher.chmod(0o755)
    a = adapter(command="bin/run-python", args=["probe.py", "obs", "--verbose", "no-such-file.txt"])
    call(a)
    argv = json.loads((tmp_path / "obs" / "probe.json").read_text())["argv"]
    assert argv == [str(tmp_path / "probe.py"), str(tmp_path / "obs"), "--verbose", "no-such-file.txt"]
    assert a.argv[0] == str(launcher)
    monkeypatch.chdir("/")  # resolved once, when the adapter was made
    call(a)


@pytest.mark.parametrize("opts,expected", [
    ({"command": None}, "needs --adapter-command"),
    ({"command": "waza-no-such-command-xyz"}, "command not found on PATH"),
    ({"command": "./missing/adapter.sh"}, "no such file"),
    ({"command": PY, "env": ["WAZA_SURELY_UNSET_VAR"]}, "not set in waza's environment"),
    ({"command": PY, "env": ["KEY=value"]}, "not a variable name"),
])
def test_flag_problems_are_found_before_any_call(opts, expected):
    problems = CommandAdapter(AdapterOptions.of(opts)).check_options()
    assert len(problems) == 1 and expected in problems[0]


def test_a_bare_name_is_looked_up_on_path_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adapter.sh").write_text("#!/bin/sh\n")
    (tmp_path / "adapter.sh").chmod(0o755)
    problems = CommandAdapter(AdapterOptions.of({"command": "adapter.sh"})).check_options()
    assert problems == ["--adapter-command adapter.sh: command not found on PATH "
                        "(for the file in this folder, write ./adapter.sh)"]
    assert CommandAdapter(AdapterOptions.of({"command": "./adapter.sh"})).check_options() == []


def test_a_script_that_is_not_executable_says_how_to_run_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adapter.py").write_text("print('hi')\n")
    problems = CommandAdapter(AdapterOptions.of({"command": "./adapter.py"})).check_options()
    assert "not executable" in problems[0] and "--adapter-command python3" in problems[0]


# -- output limits ---------------------------------------------------------------------------------


def test_stdout_limit_is_the_contract_limit():
    assert command_mod.STDOUT_LIMIT == contract.ADAPTER_STDOUT_LIMIT == 8 * 1024 * 1024


def test_endless_stdout_is_killed_at_8_mib_with_bounded_memory(tmp_path):
    script = tmp_path / "flood.py"
    script.write_text("import sys\nchunk = b'x' * 65536\nwhile True:\n    sys.stdout.buffer.write(chunk)\n")
    a = adapter(args=[script])
    tracemalloc.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(AdapterFailure) as info:
            call(a, timeout=60)
        elapsed = time.monotonic() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.category == "optimizer_failure"
    assert "more than 8388608 bytes (8 MiB) to stdout" in str(info.value)
    assert peak < 3 * command_mod.STDOUT_LIMIT, peak  # kept 8 MiB, never the flood
    assert elapsed < 30  # killed at the limit, not at the timeout


def test_reply_of_exactly_8_mib_is_read_and_one_byte_more_is_not(tmp_path):
    body = json.dumps({"kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "describe",
                       "contract_versions": ["1.0"], "adapter": {"name": "big", "version": "1"},
                       "required_capabilities": ["propose.files"],
                       "optional_capabilities": ["target.context-overlay"], "paid_calls": False}).encode()
    exact = tmp_path / "exact.json"
    exact.write_bytes(body + b" " * (command_mod.STDOUT_LIMIT - len(body)))
    over = tmp_path / "over.json"
    over.write_bytes(exact.read_bytes() + b" ")
    cat = tmp_path / "cat.py"
    cat.write_text("import sys, shutil\nsys.stdin.read()\n"
                   "shutil.copyfileobj(open(sys.argv[1], 'rb'), sys.stdout.buffer)\n")
    reply = call(adapter(args=[cat, exact]))
    assert len(reply.raw) == command_mod.STDOUT_LIMIT
    assert contract.parse_reply(reply.raw, "describe", ("1.0",))["adapter"]["name"] == "big"
    with pytest.raises(AdapterFailure, match="8 MiB"):
        call(adapter(args=[cat, over]))


def test_stderr_keeps_its_tail(tmp_path):
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nsys.stdin.read()\nfor i in range(20000):\n    print('line', i, file=sys.stderr)\n"
                      "print('the real reason', file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(AdapterFailure) as info:
        call(adapter(args=[script]))
    tail = info.value.stderr_tail
    assert tail.startswith("[...]\n") and tail.endswith("the real reason\n")
    assert len(tail.encode()) <= command_mod.STDERR_TAIL_BYTES + 16
    assert "exited with status 3" in str(info.value) and "stderr ends with: the real reason" in str(info.value)


# -- killing the whole tree ------------------------------------------------------------------------

SPAWNER = '''
import subprocess, sys, time
sys.stdin.read()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1], "w") as fh:
    fh.write(str(child.pid))
print("spawned", child.pid, file=sys.stderr, flush=True)
time.sleep(300)
'''


def _spawner(tmp_path):
    script = tmp_path / "spawner.py"
    script.write_text(SPAWNER)
    return adapter(args=[script, tmp_path / "grandchild.pid"])


def _grandchild(tmp_path) -> int:
    return int((tmp_path / "grandchild.pid").read_text())


def test_timeout_kills_the_grandchild_too(tmp_path):
    a = _spawner(tmp_path)
    t0 = time.monotonic()
    with pytest.raises(AdapterFailure) as info:
        call(a, timeout=1.5)
    assert time.monotonic() - t0 < 10
    assert info.value.category == "optimizer_failure"
    assert "timed out after 1.5s (--adapter-timeout)" in str(info.value)
    assert "spawned" in info.value.stderr_tail
    pid = _grandchild(tmp_path)
    assert wait_for(lambda: not alive(pid)), "the grandchild survived the timeout"


def test_cancellation_kills_the_grandchild_too(tmp_path):
    a = _spawner(tmp_path)
    cancel = CancelEvent()
    threading.Timer(1.0, cancel.set).start()
    with pytest.raises(AdapterFailure, match="cancelled"):
        call(a, timeout=60, cancel=cancel)
    pid = _grandchild(tmp_path)
    assert wait_for(lambda: not alive(pid)), "the grandchild survived the cancellation"


def test_a_plain_event_cancels_as_well(tmp_path):
    a = _spawner(tmp_path)
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    with pytest.raises(AdapterFailure, match="cancelled"):
        call(a, timeout=60, cancel=cancel)
    assert wait_for(lambda: not alive(_grandchild(tmp_path)))


def test_grandchildren_do_not_outlive_a_successful_call(tmp_path):
    script = adapter_script(tmp_path, '''
import subprocess
def reply(req):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    note("pid.json", child.pid)
    return describe_ok()
''')
    (tmp_path / "obs").mkdir()
    call(adapter(args=[script, tmp_path / "obs"]))
    pid = json.loads((tmp_path / "obs" / "pid.json").read_text())
    assert wait_for(lambda: not alive(pid)), "a background child kept running after the call"


# -- exits and crashes -----------------------------------------------------------------------------


def test_crash_by_signal_is_named(tmp_path):
    script = tmp_path / "segv.py"
    script.write_text("import os, signal, sys\nsys.stdin.read()\nprint('about to crash', file=sys.stderr, flush=True)\n"
                      "os.kill(os.getpid(), signal.SIGSEGV)\n")
    with pytest.raises(AdapterFailure) as info:
        call(adapter(args=[script]))
    assert "killed by SIGSEGV" in str(info.value) and info.value.stderr_tail == "about to crash\n"


def test_command_that_cannot_start_is_an_optimizer_failure(tmp_path):
    a = adapter(args=[])
    a.argv = [str(tmp_path / "vanished")]  # it existed when checked, then went away
    with pytest.raises(AdapterFailure) as info:
        call(a)
    assert info.value.category == "optimizer_failure" and "cannot start" in str(info.value)


def test_adapter_that_exits_early_without_reading_stdin_is_fine(tmp_path):
    script = tmp_path / "early.py"
    script.write_text("import json, sys\nprint(json.dumps({'x': 1}))\n")  # ignores the request
    big = dict(DESCRIBE, waza_version="v" * (4 * 1024 * 1024))  # more than a pipe buffer
    reply = call(adapter(args=[script]), request=big)
    assert json.loads(reply.raw) == {"x": 1}


def test_signal_names_for_unknown_numbers():
    assert command_mod._signal_name(-signal.SIGKILL) == "SIGKILL"
    assert command_mod._signal_name(-200) == "signal 200"


def test_an_adapter_descendant_that_left_the_session_is_killed_without_an_environment_tag(tmp_path):
    """No process tag in the adapter's environment: a grandchild in a new session is found
    by the pipe it still holds, and killed when the adapter ends."""
    pid_file = tmp_path / "escapee.pid"
    script = adapter_script(tmp_path, f'''
import subprocess
def reply(req):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True,
                         stderr=subprocess.DEVNULL)
    open({str(pid_file)!r}, "w").write(str(p.pid))
    return describe_ok()
''')
    call(adapter(args=[script, tmp_path]))
    pid = int(pid_file.read_text())
    try:
        assert wait_for(lambda: not alive(pid), 10), "the escaped grandchild outlived the adapter"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
