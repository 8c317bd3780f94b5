"""The mcp_mocks server: waza's answers, spoken over stdio to the MCP SDK's own client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from waza_core.mocks import mcp_match
from waza_core.mocks.mcp_match import go_sprint
from waza_core.mocks.records import read_records

ENTRY = Path(__file__).resolve().parents[2] / "waza_core" / "mocks" / "_mcp_entry.py"

CONFIG = {"name": "inventory", "tools": {
    "zeta": {"responses": [{"return": "ok"}]},
    "list_items": {"description": "List items",
                   "input_schema": {"type": "object", "properties": {"owner": {"type": "string"}}},
                   "responses": [
                       {"match": {"owner": "alice"}, "return": {"items": ["a", "b"]}},
                       {"match_regex": {"owner": "^b"}, "error": "owner not found"},
                       {"match_schema": {"required": ["n"]}, "return": None},
                   ]},
}}


def test_exact_match_is_whole_object_equality():
    assert mcp_match.call(CONFIG, "list_items", {"owner": "alice"}) == ('{"items":["a","b"]}', False, 0)
    text, is_error, index = mcp_match.call(CONFIG, "list_items", {"owner": "alice", "extra": 1})
    assert (is_error, index) == (True, -1)
    assert text == ('mcp mock "inventory": unmatched tool call "list_items" (arguments omitted); '
                    "add a matching fixture response")


def test_numbers_compare_as_go_marshals_them():
    config = {"name": "n", "tools": {"t": {"responses": [{"match": {"count": 2}, "return": 1}]}}}
    assert mcp_match.call(config, "t", {"count": 2.0})[1] is False


def test_a_return_is_written_as_go_json_marshal_writes_it():
    ret = {"small": 1e-7, "ratio": 0.00001, "big": 1e21, "whole": 3.0, "html": "<b>&"}
    config = {"name": "n", "tools": {"t": {"responses": [{"return": ret}]}}}
    assert mcp_match.call(config, "t", {})[0] == ('{"big":1e+21,"html":"\\u003cb\\u003e\\u0026",'
                                                 '"ratio":0.00001,"small":1e-7,"whole":3}')


def test_regex_is_unanchored_and_needs_the_field():
    config = {"name": "r", "tools": {"t": {"responses": [{"match_regex": {"q": "ell", "n": "^1$"}, "return": 1}]}}}
    assert mcp_match.call(config, "t", {"q": "hello", "n": 1})[2] == 0
    assert mcp_match.call(config, "t", {"q": "hello"})[2] == -1
    assert go_sprint(True) == "true" and go_sprint(2.0) == "2" and go_sprint({"b": 1, "a": [1]}) == '{"a":[1],"b":1}'


def test_empty_matchers_are_a_catch_all_and_strings_return_quoted():
    config = {"name": "c", "tools": {"t": {"responses": [{"match": {}, "return": "ok"}]}}}
    assert mcp_match.call(config, "t", {"anything": 1}) == ('"ok"', False, 0)


def test_tool_list_is_sorted_with_a_default_schema():
    assert [t["name"] for t in mcp_match.tool_list(CONFIG)] == ["list_items", "zeta"]
    assert mcp_match.tool_list(CONFIG)[1]["inputSchema"] == {"type": "object"}


@pytest.fixture
def server_files(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    calls = tmp_path / "calls"
    calls.mkdir()
    return config, calls


def talk(config: Path, calls: Path, script, env=None):
    """Start the server as an agent would, through the SDK's stdio client, and run ``script``."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-I", str(ENTRY), "--config-file", str(config),
                                                                 "--log-dir", str(calls)], env=env)
    out = {}

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out["init"] = await session.initialize()
                await script(session, out)

    anyio.run(main)
    return out


def test_a_real_mcp_client_lists_calls_and_gets_waza_answers(server_files):
    config, calls = server_files

    async def script(session, out):
        out["tools"] = await session.list_tools()
        out["results"] = [await session.call_tool(name, args) for name, args in [
            ("list_items", {"owner": "alice"}), ("list_items", {"owner": "bob"}), ("list_items", {"n": 1}),
            ("zeta", None), ("nope", {}), ("list_items", {"owner": "carol"})]]

    out = talk(config, calls, script)
    assert (out["init"].server_info.name, out["init"].server_info.version) == ("inventory", "0.0.0-mock")
    assert [t.name for t in out["tools"].tools] == ["list_items", "zeta"]
    assert out["tools"].tools[0].description == "List items"
    got = [(r.is_error, [c.text for c in r.content]) for r in out["results"]]
    assert got == [
        (False, ['{"items":["a","b"]}']),
        (True, ['mcp mock "inventory" tool "list_items" fixture error: owner not found']),
        (False, ["null"]),
        (False, ['"ok"']),
        (True, ['mcp mock "inventory": unknown tool "nope"; add a fixture for this tool']),
        (True, ['mcp mock "inventory": unmatched tool call "list_items" (arguments omitted); '
                "add a matching fixture response"]),
    ]
    recorded = read_records(calls)
    assert [(c["tool"], c["response_index"], c["is_error"]) for c in recorded] == [
        ("list_items", 0, False), ("list_items", 1, True), ("list_items", 2, False), ("zeta", 0, False),
        ("nope", -1, True), ("list_items", -1, True)]
    assert recorded[0] == {"server": "inventory", "tool": "list_items", "arguments": {"owner": "alice"},
                           "response_index": 0, "is_error": False}


def test_recorded_arguments_are_sanitized(server_files):
    config, calls = server_files

    async def script(session, out):
        await session.call_tool("zeta", {"api_key": "k-123", "note": "Bearer abcdefghijklmnopqrstu", "n": 2})

    import os
    talk(config, calls, script, env=dict(os.environ))
    assert read_records(calls)[0]["arguments"] == {"api_key": "[REDACTED]", "note": "[REDACTED]", "n": 2}


def test_a_config_that_cannot_be_read_is_a_clear_exit(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-I", str(ENTRY), "--config-file", str(tmp_path / "missing.json")],
                          capture_output=True, timeout=60)
    assert done.returncode == 2
    assert b"cannot read" in done.stderr and b"Traceback" not in done.stderr
