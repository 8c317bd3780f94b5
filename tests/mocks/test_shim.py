"""Command-mock shims run as real processes: waza's matching rules, recording, pass-through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from waza_core.errors import WazaError
from waza_core.mocks.command import MockRuntime
from waza_core.mocks.spec import parse_command_mocks


@pytest.fixture
def runtime():
    rt = MockRuntime()
    yield rt
    rt.close()


@pytest.fixture
def ws(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    return path


def session_for(runtime, ws, mocks, base=None):
    return runtime.open_session(str(ws), parse_command_mocks(mocks), Path(base or ws))


def call(session, argv, cwd, extra_env=None, drop_session=False, stdout=subprocess.PIPE):
    env = dict(os.environ)
    env.update(session.environment())
    if drop_session:
        env.pop("WAZA_COMMAND_MOCK_SESSION")
    env.update(extra_env or {})
    env["PATH"] = os.pathsep.join([*session.path_prepend, env.get("PATH", "")])
    return subprocess.run(argv, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=60)


AZ = [{"name": "az", "responses": [
    {"args": ["account", "show"], "stdout": {"user": {"name": "a<b>&c"}, "n": 1.0}},
    {"args_regex": ["group", "list", "--query=.*"], "stdout": "groups\n", "stderr": "warn\n", "exit_code": 3},
    {"args": ["group", "list", "--query=x"], "stdout": "never: the regex above matches first"},
    {"args": []},
]}]


def test_exact_args_answer_with_go_json_stdout_and_are_recorded(runtime, ws):
    session = session_for(runtime, ws, AZ)
    done = call(session, ["az", "account", "show"], ws)
    assert done.returncode == 0
    assert done.stdout == b'{"n":1,"user":{"name":"a\\u003cb\\u003e\\u0026c"}}'  # Go's json.Marshal
    calls, problem = session.close()
    assert calls == [{"command": "az", "args": ["account", "show"], "exit_code": 0, "response_index": 0}]
    assert problem is None


def test_first_matching_response_wins_and_regex_is_anchored(runtime, ws):
    session = session_for(runtime, ws, AZ)
    first = call(session, ["az", "group", "list", "--query=x"], ws)
    assert (first.returncode, first.stdout, first.stderr) == (3, b"groups\n", b"warn\n")
    # anchored: "lists" is not "list", so nothing matches
    miss = call(session, ["az", "group", "lists", "--query=x"], ws)
    assert miss.returncode == 127
    empty = call(session, ["az"], ws)  # args: [] matches only a call without arguments
    assert (empty.returncode, empty.stdout) == (0, b"")
    calls, _ = session.close()
    assert [c["response_index"] for c in calls] == [1, -1, 3]
    assert "args" not in calls[2]  # omitted when empty, as waza writes it


def test_unmatched_call_exits_127_with_waza_message_and_redacts_secrets(runtime, ws):
    session = session_for(runtime, ws, AZ)
    done = call(session, ["az", "login", "--password", "hunter2", "--token=abc", "ghp_" + "a" * 30], ws,
                extra_env={"MY_API_KEY": "s3cr3t-value"})
    assert done.returncode == 127
    assert done.stdout == b""
    message = done.stderr.decode()
    assert message == ('waza command mock: no matching response for executable "az" with arguments '
                       '["login" "[REDACTED]" "[REDACTED]" "--token=[REDACTED]" "[REDACTED]"] in working directory '
                       f'"{os.path.realpath(ws)}"; add a command_mocks.responses fixture for this CLI invocation\n')
    calls, _ = session.close()
    assert calls == [{"command": "az", "args": ["login", "[REDACTED]", "[REDACTED]", "--token=[REDACTED]",
                                                 "[REDACTED]"], "exit_code": 127, "response_index": -1}]


def test_environment_and_workdir_matchers(runtime, ws):
    (ws / "sub" / "dir").mkdir(parents=True)
    session = session_for(runtime, ws, [{"name": "tool", "responses": [
        {"args": [], "environment": {"STAGE": "prod"}, "stdout": "prod"},
        {"args": [], "workdir": "sub/./dir", "stdout": "in sub/dir"},
        {"args": [], "workdir": ".", "stdout": "at the root"},
    ]}])
    assert call(session, ["tool"], ws, {"STAGE": "prod"}).stdout == b"prod"
    assert call(session, ["tool"], ws / "sub" / "dir").stdout == b"in sub/dir"
    assert call(session, ["tool"], ws).stdout == b"at the root"
    assert call(session, ["tool"], ws / "sub").returncode == 127


def test_fixture_bytes_are_replayed_exactly(runtime, ws, tmp_path):
    suite = tmp_path / "suite"
    (suite / "fx").mkdir(parents=True)
    blob = bytes(range(256)) * 1000
    (suite / "fx" / "blob.bin").write_bytes(blob)
    session = session_for(runtime, ws, [{"name": "dump", "responses": [{"args": [], "fixture": "fx/blob.bin"}]}],
                          base=suite)
    assert call(session, ["dump"], ws).stdout == blob


def test_fixture_leaving_the_base_folder_through_a_symlink_is_refused(runtime, ws, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    (suite / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(WazaError, match="leaves"):
        session_for(runtime, ws, [{"name": "x", "responses": [{"args": [], "fixture": "leak.txt"}]}], base=suite)


def test_a_flood_into_a_closed_pipe_ends_quietly(runtime, ws, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "big.txt").write_bytes(b"y" * (32 << 20))
    session = session_for(runtime, ws, [{"name": "flood", "responses": [{"args": [], "fixture": "big.txt"}]}],
                          base=suite)
    env = dict(os.environ, **session.environment(), PATH=os.pathsep.join([*session.path_prepend, os.environ["PATH"]]))
    # `flood | head -c 10`: the reader goes away after 10 bytes
    proc = subprocess.Popen(["flood"], cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(10) == b"y" * 10
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 1  # as waza: a failed stdout write exits 1
    assert stderr == b""  # no traceback
    full = call(session, ["flood"], ws)
    assert len(full.stdout) == 32 << 20


def test_names_without_a_mock_pass_through_to_the_real_program(runtime, ws, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    real = host / "hello"
    real.write_text("#!/bin/sh\necho \"real hello $*\"\nenv | grep '^WAZA_COMMAND_MOCK' || true\n"
                    "case \":$PATH:\" in *waza-mocks-*) echo SHIMS-ON-PATH;; esac\n")
    real.chmod(0o755)
    runtime.ensure_shim("hello")  # another run mocks `hello`; this one does not
    session = session_for(runtime, ws, AZ)
    done = call(session, ["hello", "there"], ws, {"PATH": f"{host}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"real hello there\n"  # no WAZA_COMMAND_MOCK_* and no shim folder left
    assert session.close()[0] == []  # pass-through calls are not recorded


def test_pass_through_without_a_real_program_exits_127(runtime, ws):
    runtime.ensure_shim("no-such-tool-anywhere")
    session = session_for(runtime, ws, AZ)
    done = call(session, ["no-such-tool-anywhere"], ws)
    assert done.returncode == 127
    assert done.stderr == (b'waza command mock: no fixture for "no-such-tool-anywhere" and no host executable '
                           b"was found\n")


def test_without_a_session_variable_the_newest_session_holding_the_cwd_answers(runtime, tmp_path):
    older_ws, newer_ws = tmp_path / "a", tmp_path / "b"
    older_ws.mkdir()
    newer_ws.mkdir()
    older = session_for(runtime, older_ws, [{"name": "who", "responses": [{"args": [], "stdout": "older"}]}])
    newer = session_for(runtime, newer_ws, [{"name": "who", "responses": [{"args": [], "stdout": "newer"}]}])
    assert call(older, ["who"], older_ws, drop_session=True).stdout == b"older"
    assert call(newer, ["who"], newer_ws, drop_session=True).stdout == b"newer"


@pytest.mark.parametrize("bad", ["../task-x", "other", "task-x/../../y"])
def test_a_forged_session_id_is_refused(runtime, ws, bad):
    session = session_for(runtime, ws, AZ)
    done = call(session, ["az", "account", "show"], ws, {"WAZA_COMMAND_MOCK_SESSION": bad})
    assert done.returncode == 127
    assert done.stderr == b"waza command mock: failed to load task configuration\n"


def test_a_closed_session_no_longer_answers(runtime, ws):
    session = session_for(runtime, ws, AZ)
    session.close()
    done = call(session, ["az", "account", "show"], ws)
    assert (done.returncode, done.stderr) == (127, b"waza command mock: failed to load task configuration\n")


def test_expect_calls_counts_unmatched_calls_and_names_case_insensitively(runtime, ws):
    session = session_for(runtime, ws, [{"name": "az", "expect_calls": 1, "responses": [{"args": ["ok"]}]}])
    call(session, ["az", "ok"], ws)
    call(session, ["az", "nope"], ws)
    calls, problem = session.close()
    assert len(calls) == 2
    assert problem == 'command mock "az" expected 1 call(s), got 2'


def test_calls_are_listed_in_the_order_they_happened(runtime, ws):
    session = session_for(runtime, ws, [{"name": "n", "responses": [{"args_regex": [".*"]}]}])
    for i in range(12):
        call(session, ["n", str(i)], ws)
    assert [c["args"] for c in session.close()[0]] == [[str(i)] for i in range(12)]


@pytest.mark.parametrize("name", ["bin/az", "..", "a\\b"])
def test_a_shim_name_with_a_slash_is_refused(runtime, name):
    with pytest.raises(WazaError, match="bare executable name"):
        runtime.ensure_shim(name)
    assert os.listdir(runtime.bin) == []


def test_the_shim_ignores_python_files_in_the_workspace(runtime, ws):
    (ws / "json.py").write_text("raise SystemExit('hijacked')\n")
    (ws / "waza_core").mkdir()
    (ws / "waza_core" / "__init__.py").write_text("raise SystemExit('hijacked')\n")
    session = session_for(runtime, ws, AZ)
    done = call(session, ["az", "account", "show"], ws, {"PYTHONPATH": str(ws)})
    assert done.returncode == 0, done.stderr


def test_runtime_folder_is_private_and_removed(tmp_path):
    rt = MockRuntime()
    shim = rt.ensure_shim("az")
    assert oct(os.stat(rt.root).st_mode & 0o777) == "0o700"
    assert oct(os.stat(shim).st_mode & 0o777) == "0o700"
    assert shim.read_text().startswith("#!/bin/sh\nexec ")
    assert sys.executable in shim.read_text()
    rt.close()
    assert not rt.root.exists()
