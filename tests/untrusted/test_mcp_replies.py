"""``mcp_mocks`` under hostile input: the fixture files that hold a mock server's replies
(malformed, huge, deep, NaN, wrong types, a FIFO) and an agent that sends the real mock
server malformed and huge requests. A bad fixture is a load error naming the file (with
line and column for broken JSON), exit 2, no traceback; the server survives every hostile
message, keeps answering, and records every call in a form waza reads back, so no run loses
its evidence. Each CLI case runs under a 2 GB address-space limit and a time limit."""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core.mocks import records
from waza_core.suite import mocks as suite_mocks
from waza_core.suite.schema import plain_validator

pytest.importorskip("mcp")  # the `mcp` extra: the mock server is built on the SDK

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "waza_core" / "mocks" / "_mcp_entry.py"
CAP = 2 << 30


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def waza(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "waza_core", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout, preexec_fn=capped)


@pytest.fixture
def suite(tmp_path):
    root = tmp_path / "s"
    shutil.copytree(REPO / "examples" / "mcp-mocks", root)
    return root


def fixture_file(suite: Path) -> Path:
    return suite / "fixtures" / "mcp" / "get_stock.json"


GOOD_TOOL = {"description": "d", "responses": [{"return": 1}]}


# -- fixture files: the replies the server gives ---------------------------------------------------

BAD_FIXTURES = [
    ("broken JSON", b'{"responses": [\n  {"return": 1,}\n]}', "get_stock.json:2:"),
    ("NaN", b'{"responses": [{"return": NaN}]}', "NaN is not a JSON number"),
    ("Infinity", b'{"responses": [{"return": -Infinity}]}', "-Infinity is not a JSON number"),
    ("overflow", b'{"responses": [{"return": 1e999}]}', "overflows"),
    ("big integer", b'{"responses": [{"return": 1' + b"0" * 30 + b'}]}', "out of range"),
    ("deep", b'{"responses": [{"return": ' + b"[" * 200 + b"]" * 200 + b"}]}", "nested more than 100"),
    ("very deep", b'{"responses": [{"return": ' + b"[" * 200000 + b"]" * 200000 + b"}]}", "nested more than"),
    ("not UTF-8", b'{"responses": [{"return": "\xff"}]}', "not UTF-8"),
    ("responses an object", b'{"responses": {"return": 1}}', "responses: {'return': 1} is not of type 'array'"),
    ("match_regex not strings", b'{"responses": [{"match_regex": {"a": 5}, "return": 1}]}',
     "responses[0].match_regex.a: 5 is not of type 'string'"),
    ("error not a string", b'{"responses": [{"error": {"x": 1}}]}', "responses[0].error"),
    ("description a number", b'{"description": 7, "responses": [{"return": 1}]}', "description: 7 is not"),
    ("a list", b"[1, 2]", "must be an object"),
]


@pytest.mark.parametrize("data,expect", [case[1:] for case in BAD_FIXTURES], ids=[case[0] for case in BAD_FIXTURES])
def test_a_malformed_fixture_is_a_load_error_naming_the_file(suite, data, expect):
    fixture_file(suite).write_bytes(data)
    proc = waza("validate", "eval.yaml", cwd=suite)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err, err[-2000:]
    assert "get_stock.json" in err and expect in err, err[-2000:]


def test_a_huge_fixture_is_refused_unread(suite):
    with open(fixture_file(suite), "wb") as fh:  # 17 MiB of valid JSON
        fh.write(b'{"responses": [{"return": "' + b"x" * (17 << 20) + b'"}]}')
    proc = waza("validate", "eval.yaml", cwd=suite)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert "get_stock.json" in err and "more than the 16777216 allowed" in err and "docs/safety.md" in err, err


def test_the_fixtures_of_one_mock_are_bounded_together(suite, monkeypatch):
    monkeypatch.setattr(suite_mocks, "MAX_FIXTURES_BYTES", 3000)
    for i in range(4):
        (suite / "fixtures" / "mcp" / f"t{i}.json").write_text(json.dumps({**GOOD_TOOL, "pad": "x" * 900}))
    with pytest.raises(ValueError, match=r"t\d\.json: with it the fixture files of this mock hold .* more than the "
                                         "3,000 allowed together"):
        suite_mocks.load_mcp_fixtures(suite, "fixtures/mcp")


def test_a_fifo_fixture_is_refused_without_blocking(suite):
    fixture_file(suite).unlink()
    os.mkfifo(fixture_file(suite))
    t0 = time.monotonic()
    proc = waza("validate", "eval.yaml", cwd=suite, timeout=60)
    assert proc.returncode == 2 and b"a FIFO, not a regular file" in proc.stderr, proc.stderr
    assert time.monotonic() - t0 < 60


def test_a_run_with_a_malformed_fixture_stops_before_the_first_run(suite):
    fixture_file(suite).write_bytes(b'{"responses": [{"return": NaN}]}')
    proc = waza("run", "eval.yaml", "-o", "r.json", cwd=suite)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert b"get_stock.json" in proc.stderr and not (suite / "r.json").exists()


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                           st.sampled_from(["responses", "return", "error", "match", "match_regex",
                                            "match_schema", "description", "input_schema", "tools", "x"]),
                           inner, max_size=4), max_leaves=12)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=JSONISH, cut=st.integers(min_value=0, max_value=400))
def test_any_fixture_file_loads_or_is_refused_naming_it(tmp_path, doc, cut):
    """Whatever a fixture file holds (any JSON value, Python's NaN spelling, a cut-off
    text), loading gives tools or a ValueError that names the file: never another error."""
    folder = tmp_path / "fx"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    text = json.dumps(doc)  # NaN and Infinity written as Python writes them
    (folder / "tool.json").write_text(text[:cut] if cut < len(text) else text)
    try:
        tools = suite_mocks.load_mcp_fixtures(tmp_path, "fx")
    except ValueError as exc:
        assert str(exc).startswith(str(Path("fx") / "tool.json")) or "tool.json" in str(exc).split(":")[0]
        return
    for tool in tools.values():  # what loads is what the server can answer from
        assert isinstance(tool.get("responses"), list) and tool["responses"]
        json.dumps(tool, allow_nan=False)


# -- the real server, and an agent sending it malformed and huge requests ---------------------------

def rpc(ident, method, params=None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}).encode()


HOSTILE_REQUESTS = [
    b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {',  # broken JSON
    rpc(3, "tools/call", {"name": 5, "arguments": "x"}),  # wrong types
    b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "t", "arguments": {"a": NaN}}}',
    b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {"a": '
    + b"[" * 100000 + b"]" * 100000 + b"}}}",
    b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "t", "arguments": {"a": "'
    + b"x" * (8 << 20) + b'"}}}',  # 8 MiB of arguments
    b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t", "arguments": {"a": '
    + b"9" * 5000 + b"}}}",
    rpc(8, "tools/call", {"name": "t", "arguments": {"a": [[[[[[]]]]]] * 3}}),
    b"\xff\xfe not even UTF-8",
    rpc(9, "no/such/method"),
]


def replies(fd: int, until: float):
    """The lines the server writes, read from its pipe unbuffered: ``select`` on a buffered
    file misses a line already read into the file's buffer (with the 4 MB reply before it,
    the last answer often arrives in the same read), and the loop would wait out its time."""
    pending = b""
    while time.monotonic() < until:
        ready, _, _ = select.select([fd], [], [], 5)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        yield from lines


def test_the_server_survives_hostile_requests_and_records_every_call_readably(tmp_path):
    config, calls = tmp_path / "config.json", tmp_path / "calls"
    calls.mkdir()
    config.write_text(json.dumps({"name": "inv", "tools": {"t": {"responses": [
        {"match": {"q": 1}, "return": {"big": "y" * (4 << 20)}}, {"return": {"ok": 1}}]}}}))
    server = subprocess.Popen([sys.executable, "-I", str(ENTRY), "--config-file", str(config), "--log-dir",
                               str(calls)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              preexec_fn=capped)
    answers: dict = {}
    try:
        server.stdin.write(rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                 "clientInfo": {"name": "hostile", "version": "1"}}) + b"\n")
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for message in HOSTILE_REQUESTS:
            server.stdin.write(message + b"\n")
        server.stdin.write(rpc(99, "tools/call", {"name": "t", "arguments": {"q": 1}}) + b"\n")  # a huge reply
        server.stdin.write(rpc(100, "tools/call", {"name": "t", "arguments": {"q": 2}}) + b"\n")
        server.stdin.flush()
        for line in replies(server.stdout.fileno(), until=time.monotonic() + 120):
            message = json.loads(line)
            answers[message.get("id")] = message
            if 100 in answers:
                break
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert 100 in answers, f"the server stopped answering: {sorted(answers, key=str)}"
    assert json.loads(answers[99]["result"]["content"][0]["text"]) == {"big": "y" * (4 << 20)}
    assert answers[100]["result"]["content"][0]["text"] == '{"ok":1}'
    assert "error" in answers[3] and "error" in answers[9]
    skipped: list[str] = []
    recorded = records.read_records(calls, records.MCP_FIELDS, skipped)
    assert skipped == []  # every record the server wrote is one waza reads
    by_tool = [(c["tool"], c.get("arguments"), "arguments_dropped" in c) for c in recorded]
    assert ("t", {"q": 1}, False) in by_tool and ("t", {"q": 2}, False) in by_tool
    dropped = [c["arguments_dropped"] for c in recorded if "arguments_dropped" in c]
    assert any("not a finite number" in d for d in dropped)  # the NaN the SDK let through
    assert any("more than the" in d for d in dropped)  # the 8 MiB of arguments
    assert all(c["arguments"] == {} for c in recorded if "arguments_dropped" in c)


HOSTILE_AGENT = r'''
import json, runpy, subprocess, sys
if "hostile" not in sys.argv[-1]:
    runpy.run_path(sys.argv[0].replace("mcp_agent.py", "toy_agent.py"), run_name="__main__")
    sys.exit(0)
with open(sys.argv[2], encoding="utf-8") as fh:
    server = json.load(fh)["mcpServers"]["inventory"]
proc = subprocess.Popen([server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(data):
    proc.stdin.write(data + b"\n")
    proc.stdin.flush()
def answer(ident):
    while True:
        line = proc.stdout.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == ident:
            return message
send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}).encode())
answer(1)
send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {')
send(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_stock", "arguments": {"a": NaN}}}')
send(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_stock", "arguments": {"a": "'
     + b"x" * (3 << 20) + b'"}}}')
send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                 "params": {"name": "get_stock", "arguments": {"item": "big"}}}).encode())
reply = answer(5)
text = "".join(c["text"] for c in reply["result"]["content"]) if reply else ""
print("big reply:", len(text), "characters")
proc.stdin.close()
proc.wait(timeout=30)
'''


def test_a_hostile_agent_and_a_huge_reply_cost_no_run_its_results(suite):
    """End to end under ``waza run``: the agent sends the mock broken, NaN and 3 MiB
    requests and gets a 6 MiB reply; both tasks keep their results and every call of the
    hostile agent is in its run's evidence."""
    fixture_file(suite).write_text(json.dumps({"description": "stock", "responses": [
        {"match": {"item": "laptop"}, "return": 12}, {"match": {"item": "big"}, "return": {"pad": "z" * (6 << 20)}},
        {"return": 0}]}))
    agent = suite / "agent"
    (agent / "mcp_agent.py").rename(agent / "toy_agent.py")
    (agent / "mcp_agent.py").write_text(HOSTILE_AGENT)
    (suite / "tasks" / "hostile.yaml").write_text("id: hostile\ninputs: {prompt: hostile stock please}\n")
    proc = waza("run", "eval.yaml", "-o", "r.json", cwd=suite, timeout=300)
    err = proc.stderr.decode()
    assert proc.returncode in (0, 1) and "Traceback" not in err, err[-3000:]
    doc = json.loads((suite / "r.json").read_text())
    assert list(plain_validator("results").iter_errors(doc)) == []
    runs = {t["test_id"]: t["runs"][0] for t in doc["tasks"]}
    hostile = runs.pop("hostile")
    assert f"big reply: {len(json.dumps({'pad': 'z' * (6 << 20)}, separators=(',', ':')))} characters" \
        in hostile["final_output"]
    calls = hostile["mcp_invocations"]
    assert [c["tool"] for c in calls] == ["get_stock"] * 3
    assert sum("arguments_dropped" in c for c in calls) == 2 and calls[-1]["arguments"] == {"item": "big"}
    assert sorted(runs) == ["alice", "bob"] and all(r["status"] == "passed" for r in runs.values()), runs
    assert [c["tool"] for c in runs["alice"]["mcp_invocations"]] == ["list_items", "get_stock"]
