"""Event formats (``config.cli.events``) read real recorded streams of six agents.

Each stream in ``event_streams/`` was recorded by someone else and published in a
public repository (sources in ``event_streams/README.md``). The expected values are
what a person reads in the stream: the tool calls by name in order, which failed,
the skills loaded, the session id. The last tests replay streams through the real
``cli`` executor in a subprocess, the way a suite runs an agent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from waza_core.plugins import find_registered
from waza_core.run.execution import RunEvidence

STREAMS = Path(__file__).parent / "event_streams"
REPLAY = Path(__file__).parent / "replay_agent.py"

OK, FAIL, OPEN = "ok", "failed", "unfinished"

#: stream file -> (format, [(tool name, outcome)], skills, session id, error events)
REAL = {
    "switchboard-claude-tool-use.jsonl": ("claude-stream-json", [("Bash", OK)], [],
                                          "00000000-0000-7000-8000-000000000011", 0),
    "switchboard-claude-background-agent-interleaved.jsonl": (
        "claude-stream-json", [], [], "00000000-0000-7000-8000-0000000000b1", 0),
    "switchboard-claude-truncated.jsonl": ("claude-stream-json", [], [], "00000000-0000-7000-8000-000000000031", 0),
    "switchboard-claude-malformed-json.jsonl": ("claude-stream-json", [], [], None, 0),
    "takopi-claude_stream_json_session.jsonl": ("claude-stream-json", [("Bash", OK), ("Write", OK)], [],
                                                "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb", 1),
    "switchboard-codex-tool-use.jsonl": ("codex-json", [("command_execution", OK)], [],
                                         "00000000-0000-7000-8000-000000000002", 0),
    "switchboard-codex-file-change.jsonl": ("codex-json", [("command_execution", FAIL), ("file_change", OK)], [],
                                            "00000000-0000-7000-8000-000000000030", 0),
    "switchboard-codex-mcp-tool-call.jsonl": ("codex-json", [("list_tags", FAIL)], [],
                                              "00000000-0000-7000-8000-000000000004", 0),
    "switchboard-codex-errored.jsonl": ("codex-json", [], [], "00000000-0000-7000-8000-000000000003", 2),
    "takopi-codex_exec_json_all_formats.jsonl": (
        "codex-json", [("command_execution", OK), ("command_execution", FAIL), ("file_change", OK),
                       ("file_change", FAIL), ("search_issues", OK), ("search_issues", FAIL), ("web_search", OK)],
        [], "0199a213-81c0-7800-8aa1-bbab2a035a53", 3),
    "takopi-codex_exec_json_phase_and_unknown.jsonl": ("codex-json", [("spawn_agent", OK)], [],
                                                       "0199a213-81c0-7800-8aa1-bbab2a035a53", 0),
    "switchboard-gemini-tool-use.stream.jsonl": ("gemini-stream-json", [("update_topic", OK), ("read_file", OK)], [],
                                                 "00000000-0000-4000-8000-000000000002", 0),
    "switchboard-gemini-benign-trailing-error.stream.jsonl": (
        "gemini-stream-json", [("update_topic", OK), ("list_directory", OK)] + [("read_file", OK)] * 5
        + [("update_topic", OK)], [], "3dcef4a2-52a3-42ec-978f-3a92863f6e97", 2),
    "switchboard-gemini-error-invalid-model.stream.jsonl": ("gemini-stream-json", [], [],
                                                            "00000000-0000-4000-8000-000000000003", 1),
    "switchboard-gemini-mcp-content-mutations.stream.jsonl": (
        "gemini-stream-json", [("mcp__notes_alias__edit_content", OK), ("mcp__notes_alias__get_context", OK)],
        [], None, 0),
    "takopi-opencode_stream_success.jsonl": ("opencode-json", [("bash", OK)], [], "ses_494719016ffe85dkDMj0FPRbHK", 0),
    "takopi-opencode_run_json.jsonl": ("opencode-json", [("bash", OK)], [], "ses_1f2e3d4c5b6aAbCdEfGhIjKlMn", 1),
    "takopi-opencode_stream_error.jsonl": ("opencode-json", [], [], "ses_error123", 1),
    "takopi-cursor_stream_success.jsonl": ("cursor-stream-json", [("readToolCall", OK)], [],
                                           "a1b2c3d4-e5f6-7890-abcd-ef1234567890", 0),
    "takopi-cursor_stream_error.jsonl": ("cursor-stream-json", [], [], "b2c3d4e5-f6a7-8901-bcde-f12345678901", 1),
    "ralph-copilot_stream_rs_tests.jsonl": ("copilot-cli-json", [("bash", OK)], [], None, 0),
}


def read(fmt: str, lines: list[str], turn: int = 1):
    reader = find_registered("event_format", fmt)()
    evidence = RunEvidence(output="", transcript=[], tool_calls=[])
    evidence.tool_events, evidence.skill_invocations = [], []
    reader.feed_lines(lines, turn, evidence)
    return reader, evidence


def outcomes(evidence) -> list[tuple[str, str]]:
    return [(e["tool_name"], OPEN if e.get("unfinished") else OK if e["success"] else FAIL)
            for e in evidence.tool_events]


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_recorded_stream_reads_as_a_person_reads_it(name):
    fmt, calls, skills, session_id, errors = REAL[name]
    reader, evidence = read(fmt, (STREAMS / name).read_text(encoding="utf-8").splitlines())
    assert outcomes(evidence) == calls
    assert [s["name"] for s in evidence.skill_invocations] == skills
    assert reader.session_id == session_id
    assert len(reader.errors) == errors
    assert [c["name"] for c in evidence.tool_calls] == [n for n, _ in calls]  # the legacy list agrees


def test_every_format_has_at_least_one_real_stream():
    assert {fmt for fmt, *_ in REAL.values()} == {
        "claude-stream-json", "codex-json", "gemini-stream-json", "opencode-json", "cursor-stream-json",
        "copilot-cli-json"}


def test_usage_comes_from_where_each_agent_reports_it():
    _, ev = read("codex-json", (STREAMS / "switchboard-codex-tool-use.jsonl").read_text().splitlines())
    reader, _ = read("codex-json", (STREAMS / "switchboard-codex-tool-use.jsonl").read_text().splitlines())
    assert reader.take_usage() == {"input_tokens": 31259, "output_tokens": 65, "cache_read_tokens": 22784}
    reader, _ = read("gemini-stream-json", (STREAMS / "switchboard-gemini-tool-use.stream.jsonl").read_text()
                     .splitlines())
    assert reader.take_usage() == {"input_tokens": 20525, "output_tokens": 100, "cache_read_tokens": 7559}
    reader, _ = read("opencode-json", (STREAMS / "takopi-opencode_stream_success.jsonl").read_text().splitlines())
    usage = reader.take_usage()
    assert usage["input_tokens"] == 22443 and usage["cache_read_tokens"] == 21415 and usage["cost_usd"] > 0


def test_gemini_deltas_join_into_one_message():
    reader, ev = read("gemini-stream-json", (STREAMS / "switchboard-gemini-tool-use.stream.jsonl").read_text()
                      .splitlines())
    assert reader.messages == ["SWITCHBOARD_GEMINI_PROBE_TOOL_5F8A21"]


# -- robustness: what real streams contain --------------------------------------------


def claude_use(call_id, name, args):
    return json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": call_id, "name": name, "input": args}]}})


def claude_result(call_id, content="ok", error=False):
    return json.dumps({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": error}]}})


def test_log_lines_overlapping_calls_odd_ids_unfinished_errors_unknown_and_malformed():
    odd = 'toolu_01:"{weird}/id é'
    lines = [
        "YOLO mode is enabled. All tool calls will be automatically approved.",
        "[INFO] loading extensions",
        claude_use("a", "Read", {"file_path": "x.py"}),
        claude_use(odd, "Bash", {"command": "false"}),
        claude_use("c", "Grep", {"pattern": "x"}),
        claude_result(odd, "exit 1", error=True),  # results arrive out of order, matched by id
        claude_result("a", "content"),
        json.dumps({"type": "result", "is_error": True, "result": "API Error: overloaded"}),
        json.dumps({"type": "brand_new_event", "x": 1}),
        '{"type": "assistant", "message": {"content": [',  # a line cut in the middle
        "[1, 2, 3]",
        claude_result("never-started", "orphan"),
    ]
    reader, ev = read("claude-stream-json", lines)
    assert outcomes(ev) == [("Read", OK), ("Bash", FAIL), ("Grep", OPEN)]
    assert ev.tool_events[1]["tool_call_id"] == odd
    assert ev.tool_events[2]["error"] == "no tool result (the run ended first)"
    assert reader.errors == ["API Error: overloaded"]
    summary = reader.summary()
    assert summary["unknown_event_types"] == {"brand_new_event": 1}
    assert summary["malformed_lines"] == 4 and summary["results_without_call"] == 1


def test_an_event_of_a_known_type_in_an_odd_shape_is_skipped_not_fatal():
    lines = [json.dumps({"type": "tool_use", "tool_name": ["not", "a", "string"], "tool_id": {"a": 1}}),
             json.dumps({"type": "tool_result", "tool_id": None, "status": "success"}),
             json.dumps({"type": "tool_use", "tool_name": "read_file", "tool_id": 7, "parameters": "odd"}),
             json.dumps({"type": "tool_result", "tool_id": 7, "status": "error", "error": {"message": "nope"}})]
    _, ev = read("gemini-stream-json", lines)
    assert outcomes(ev) == [("read_file", FAIL)]
    assert ev.tool_events[0]["error"] == "nope"


# -- skills: however the agent loaded one ----------------------------------------------


SKILL_CASES = {
    "claude Skill tool": ("claude-stream-json", [claude_use("s1", "Skill", {"skill": "pdf"}), claude_result("s1")],
                          [("pdf", "skill_tool")]),
    "claude Read of SKILL.md": ("claude-stream-json", [
        claude_use("r1", "Read", {"file_path": "/home/dev/.claude/skills/docx/SKILL.md"}), claude_result("r1")],
        [("docx", "skill_file_read")]),
    "claude Bash cat": ("claude-stream-json", [
        claude_use("b1", "Bash", {"command": "cat ~/.agents/skills/csv-report/SKILL.md | head -50"}),
        claude_result("b1")], [("csv-report", "skill_file_read")]),
    "gemini activate_skill": ("gemini-stream-json", [
        json.dumps({"type": "tool_use", "tool_name": "activate_skill", "tool_id": "activate_skill_1_0",
                    "parameters": {"name": "code-review"}}),
        json.dumps({"type": "tool_result", "tool_id": "activate_skill_1_0", "status": "success", "output": ""})],
        [("code-review", "skill_tool")]),
    "codex command_execution cat": ("codex-json", [
        json.dumps({"type": "item.started", "item": {"id": "item_1", "type": "command_execution",
                                                     "command": "bash -lc 'sed -n 1,80p skills/pdf/SKILL.md'",
                                                     "status": "in_progress"}}),
        json.dumps({"type": "item.completed", "item": {"id": "item_1", "type": "command_execution",
                                                       "command": "bash -lc 'sed -n 1,80p skills/pdf/SKILL.md'",
                                                       "aggregated_output": "---\nname: pdf", "exit_code": 0,
                                                       "status": "completed"}})], [("pdf", "skill_file_read")]),
    "copilot view": ("copilot-cli-json", [
        json.dumps({"type": "tool.execution_start", "data": {"toolCallId": "call_1", "toolName": "view", "arguments": {
            "path": "/home/u/skills/code-review-workspace/skill-snapshot-old/SKILL.md"}}}),
        json.dumps({"type": "tool.execution_complete", "data": {"toolCallId": "call_1", "success": True,
                                                                "result": {"content": "1. ---"}}})],
        [("skill-snapshot-old", "skill_file_read")]),
    "opencode skill tool": ("opencode-json", [json.dumps({"type": "tool_use", "sessionID": "ses_1", "part": {
        "callID": "c1", "tool": "skill", "state": {"status": "completed", "input": {"name": "git-release"},
                                                   "output": "loaded"}}})], [("git-release", "skill_tool")]),
    "cursor read": ("cursor-stream-json", [
        json.dumps({"type": "tool_call", "subtype": "started", "call_id": "c1",
                    "tool_call": {"readToolCall": {"args": {"path": "skills/xlsx/SKILL.md"}}}}),
        json.dumps({"type": "tool_call", "subtype": "completed", "call_id": "c1",
                    "tool_call": {"readToolCall": {"result": {"success": {"content": "---"}}}}})],
        [("xlsx", "skill_file_read")]),
}


@pytest.mark.parametrize("case", sorted(SKILL_CASES))
def test_a_skill_counts_however_it_was_loaded(case):
    fmt, lines, expected = SKILL_CASES[case]
    _, ev = read(fmt, lines)
    assert [(s["name"], s["detected_by"]) for s in ev.skill_invocations] == expected


def test_writing_a_skill_file_or_a_failed_read_is_not_an_invocation():
    lines = [claude_use("w", "Write", {"file_path": "skills/new/SKILL.md", "content": "---"}), claude_result("w"),
             claude_use("b", "Bash", {"command": "echo x > skills/other/SKILL.md"}), claude_result("b"),
             claude_use("r", "Read", {"file_path": "skills/missing/SKILL.md"}),
             claude_result("r", "File does not exist", error=True)]
    _, ev = read("claude-stream-json", lines)
    assert ev.skill_invocations == []


def test_a_skill_is_recorded_once_per_run():
    lines = [claude_use("s1", "Skill", {"skill": "pdf"}), claude_result("s1"),
             claude_use("r1", "Read", {"file_path": "skills/pdf/SKILL.md"}), claude_result("r1")]
    _, ev = read("claude-stream-json", lines)
    assert ev.skill_invocations == [{"name": "pdf", "detected_by": "skill_tool", "tool": "Skill"}]


# -- through the cli executor, as a suite runs an agent -------------------------------


@pytest.mark.parametrize("name", ["switchboard-codex-file-change.jsonl", "switchboard-gemini-tool-use.stream.jsonl",
                                  "takopi-opencode_stream_success.jsonl", "takopi-cursor_stream_success.jsonl",
                                  "ralph-copilot_stream_rs_tests.jsonl", "takopi-claude_stream_json_session.jsonl"])
def test_the_cli_executor_replays_a_real_stream(exec_suite, exec_registry, tmp_path, name):
    from .test_cli_events import one_run

    fmt, calls, _, session_id, _ = REAL[name]
    cli = {"command": [sys.executable, str(REPLAY), str(STREAMS / name), "--say", '{{"answer": "done"}}'],
           "output": "jsonl", "output_path": "answer", "events": fmt}
    run = one_run(exec_suite, exec_registry, cli)
    assert run["status"] != "error", run.get("error_msg")
    assert [(e["tool_name"], OK if e["success"] else FAIL) for e in run["tool_events"]] == calls
    assert run["session_id"] == session_id


def test_without_output_path_the_answer_is_the_streams_last_message(exec_suite, exec_registry):
    """Gemini's stream-json has no field holding the whole answer: it streams deltas."""
    from .test_cli_events import one_run

    name = "switchboard-gemini-tool-use.stream.jsonl"
    cli = {"command": [sys.executable, str(REPLAY), str(STREAMS / name)], "output": "jsonl",
           "events": "gemini-stream-json"}
    run = one_run(exec_suite, exec_registry, cli)
    assert run["status"] != "error", run.get("error_msg")
    assert run["final_output"] == "SWITCHBOARD_GEMINI_PROBE_TOOL_5F8A21"
    assert run["usage"]["input_tokens"] == 20525


def test_waza_plugins_lists_each_built_in_format_as_its_own_plugin(exec_registry):
    by_module = {p.module: p.registers for p in exec_registry.plugins}
    assert by_module["waza_events.codex_json"] == {"event_format": ["codex-json"]}
    assert exec_registry.names("event_format") == sorted([
        "claude-stream-json", "codex-json", "gemini-stream-json", "opencode-json", "cursor-stream-json",
        "copilot-cli-json"])


def test_skipped_lines_are_shown_with_verbose(exec_suite, exec_registry, capsys):
    from waza_core.results import console

    from .test_cli_events import one_run

    console.set_console(console.Console(verbosity=console.VERBOSE, color="never"))
    try:
        name = "takopi-codex_exec_json_phase_and_unknown.jsonl"
        cli = {"command": [sys.executable, str(REPLAY), str(STREAMS / name), "--say", "log line, not JSON"],
               "output": "jsonl", "output_path": "item.text", "events": "codex-json"}
        run = one_run(exec_suite, exec_registry, cli)
    finally:
        console.set_console(console.Console())
    assert run["status"] != "error", run.get("error_msg")
    err = capsys.readouterr().err
    assert "events codex-json: skipped 1 event(s) of unknown types ['item:future_item'], 1 line(s)" in err


def test_codex_exec_json_before_0_44_reads_the_same():
    """The older {"id", "msg"} shape (openai/codex before PR #4525) maps to the same names."""
    lines = [json.dumps({"id": "0", "msg": {"type": "session_configured", "session_id": "s-old"}}),
             json.dumps({"id": "0", "msg": {"type": "exec_command_begin", "call_id": "call_A",
                                            "command": ["bash", "-lc", "cat skills/pdf/SKILL.md"]}}),
             json.dumps({"id": "0", "msg": {"type": "exec_command_begin", "call_id": "call_B",
                                            "command": ["bash", "-lc", "false"]}}),
             json.dumps({"id": "0", "msg": {"type": "exec_command_end", "call_id": "call_B", "exit_code": 1}}),
             json.dumps({"id": "0", "msg": {"type": "exec_command_end", "call_id": "call_A", "exit_code": 0,
                                            "stdout": "---\\nname: pdf"}}),
             json.dumps({"id": "0", "msg": {"type": "agent_message", "message": "done"}})]
    reader, ev = read("codex-json", lines)
    assert outcomes(ev) == [("command_execution", OK), ("command_execution", FAIL)]
    assert [s["name"] for s in ev.skill_invocations] == ["pdf"] and reader.session_id == "s-old"
