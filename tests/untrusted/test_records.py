"""Records the agent can write: the command-mock and MCP-mock call records sit in a folder
in the agent's reach (docs/safety.md). A FIFO, a link, a huge or deep record, NaN, a 64-bit
overflow or a field of the wrong type is skipped with a warning; the good records and the
results file are kept."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_waza
from tests.depth import examples
from waza_core.mocks import records
from waza_core.suite.schema import plain_validator

REPO = Path(__file__).resolve().parents[2]

HOSTILE_AGENT = r'''
import json, os, subprocess, sys
subprocess.run(["az", "account", "show"], capture_output=True)
calls = os.path.join(os.environ["WAZA_COMMAND_MOCK_ROOT"], "sessions", os.environ["WAZA_COMMAND_MOCK_SESSION"], "calls")
def put(name, data):
    with open(os.path.join(calls, name), "w") as fh:
        fh.write(data)
put("call-1-fake-wrongtype.json", json.dumps({"recorded_at": 1, "invocation": {"command": "az", "args": "x"}}))
put("call-2-fake-name.json", json.dumps({"recorded_at": 2, "invocation": {"command": 5}}))
put("call-3-fake-huge-number.json",
    '{"recorded_at": 3, "invocation": {"command": "az", "exit_code": 1' + "0" * 40 + '}}')
put("call-4-fake-deep.json",
    '{"recorded_at": 4, "invocation": {"command": "az", "x": ' + "[" * 100000 + "]" * 100000 + "}}")
put("call-5-fake-nan.json", '{"recorded_at": NaN, "invocation": {"command": "az"}}')
put("call-6-fake-big.json", '{"recorded_at": 6, "invocation": {"command": "az", "pad": "' + "x" * (2 << 20) + '"}}')
put("call-7-fake-bool.json", json.dumps({"recorded_at": True, "invocation": {"command": "az"}}))
os.mkfifo(os.path.join(calls, "call-8-fake-fifo.json"))
os.symlink("/etc/passwd", os.path.join(calls, "call-9-fake-link.json"))
print("You are signed in.")
'''


def test_hostile_records_are_skipped_and_the_results_file_is_kept(tmp_path):
    suite = tmp_path / "s"
    shutil.copytree(REPO / "examples" / "command-mocks", suite)
    (suite / "agent" / "toy_agent.py").write_text(HOSTILE_AGENT)
    (suite / "tasks" / "unmatched.yaml").unlink()
    proc = run_waza("run", "eval.yaml", "-o", "results.json", cwd=suite, timeout=150)
    assert b"Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr.decode()[-3000:]
    doc = json.loads((suite / "results.json").read_text())
    assert list(plain_validator("results").iter_errors(doc)) == []
    [run] = doc["tasks"][0]["runs"]
    assert run["command_invocations"] == [
        {"command": "az", "args": ["account", "show"], "exit_code": 0, "response_index": 0}]
    err = proc.stderr.decode()
    for name, reason in [("wrongtype", "'args' must be a list of strings"), ("name", "'command' must be a string"),
                         ("huge-number", "out of range"), ("deep", "nested more than"), ("nan", "NaN"),
                         ("big", "more than the 1048576"), ("bool", "'recorded_at' must be"),
                         ("fifo", "a FIFO"), ("link", "a symbolic link")]:
        assert "call-" in err and f"fake-{name}.json" in err and reason in err, (name, err[-3000:])


def test_read_records_keeps_the_good_ones_in_order(tmp_path):
    records.write_record(str(tmp_path), {"command": "b"})
    records.write_record(str(tmp_path), {"command": "a", "args": ["x"]})
    (tmp_path / "call-0.json").write_text('{"invocation": {"command": ["no"]}}')
    skipped: list[str] = []
    got = records.read_records(tmp_path, records.COMMAND_FIELDS, skipped)
    assert [r["command"] for r in got] == ["b", "a"]
    assert skipped == ["call record call-0.json: invocation: 'command' must be a string, not [\"no\"]; skipped"]


def test_a_fifo_record_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "call-1.json")
    skipped: list[str] = []
    worker = threading.Thread(target=records.read_records, args=(tmp_path, records.MCP_FIELDS, skipped), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and "a FIFO" in skipped[0]


_leaf = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 80, max_value=2 ** 80), st.floats(),
                  st.text(max_size=6))
_value = st.recursive(_leaf, lambda k: st.lists(k, max_size=3) | st.dictionaries(st.text(max_size=4), k, max_size=3),
                      max_leaves=12)


@settings(max_examples=examples(200), deadline=None)
@given(recorded_at=_value, invocation=st.dictionaries(st.sampled_from(["server", "tool", "arguments", "response_index",
                                                                       "is_error", "other"]), _value, max_size=6))
def test_any_mcp_record_is_kept_as_valid_json_or_skipped(tmp_path_factory, recorded_at, invocation):
    folder = tmp_path_factory.mktemp("calls")
    (folder / "call-1.json").write_text(json.dumps({"recorded_at": recorded_at, "invocation": invocation}))
    skipped: list[str] = []
    got = records.read_records(folder, records.MCP_FIELDS, skipped)
    assert len(got) + len(skipped) == 1
    for inv in got:
        assert isinstance(inv["server"], str) and isinstance(inv["tool"], str)
        json.dumps(inv, allow_nan=False)
    for reason in skipped:
        assert reason.startswith("call record call-1.json") and reason.endswith("; skipped")
