"""The `cli` executor reading an agent's event stream (Claude Code stream-json) into tool
calls, tool events, skill invocations, transcript and usage, shaped like copilot-sdk's."""

from __future__ import annotations

import json
import sys

import pytest

from waza_core.errors import WazaError

from .conftest import HERE

REPLAY = HERE / "replay_agent.py"

# A stream in the shape `claude -p --output-format stream-json --verbose` prints.
CLAUDE_STREAM = [
    {"type": "system", "subtype": "init", "session_id": "9b2c", "model": "claude-sonnet-4-5",
     "tools": ["Bash", "Read", "Write", "Skill"], "cwd": "/w"},
    "not json: a log line the agent printed",
    {"type": "assistant", "session_id": "9b2c", "message": {"id": "msg_1", "role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "Skill", "input": {"skill": "pdf"}},
        {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "ls -la", "description": "list",
                                                                          "timeout": 5000}}],
        "usage": {"input_tokens": 10, "output_tokens": 5}}},
    {"type": "user", "session_id": "9b2c", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "loaded"}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "permission denied", "is_error": True}]}},
    {"type": "assistant", "session_id": "9b2c", "parent_tool_use_id": None, "message": {"content": [
        {"type": "tool_use", "id": "toolu_3", "name": "Write",
         "input": {"file_path": "out.md", "content": "# Out\n"}},
        {"type": "tool_use", "id": "toolu_4", "name": "Read", "input": {"file_path": "never.txt"}}]}},
    {"type": "user", "session_id": "9b2c", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": "File created"}]}},
    {"type": "assistant", "session_id": "9b2c", "message": {"content": [{"type": "text", "text": "All done."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "session_id": "9b2c", "result": "All done.",
     "num_turns": 3, "total_cost_usd": 0.0123,
     "usage": {"input_tokens": 120, "output_tokens": 45, "cache_read_input_tokens": 7,
               "cache_creation_input_tokens": 3},
     "modelUsage": {"claude-sonnet-4-5": {"inputTokens": 120, "outputTokens": 45, "cacheReadInputTokens": 7,
                                          "cacheCreationInputTokens": 3, "costUSD": 0.0123}}},
]


def write_stream(path, events) -> str:
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events))
    return str(path)


def replay_cli(*streams: str, **options) -> dict:
    return {"command": [sys.executable, str(REPLAY), *streams], "output": "jsonl", "output_path": "result",
            "events": "claude-stream-json", **options}


def one_run(exec_suite, exec_registry, cli: dict, tasks=None) -> dict:
    from waza_core.results.codec import results_to_json
    from waza_core.run.engine import Engine

    suite = exec_suite({"cli": cli}, tasks=tasks)
    outcome = results_to_json(Engine(suite, exec_registry).run())
    return outcome["tasks"][0]["runs"][0]


def test_claude_stream_maps_to_copilot_shaped_evidence(exec_suite, exec_registry, tmp_path):
    run = one_run(exec_suite, exec_registry, replay_cli(write_stream(tmp_path / "s.jsonl", CLAUDE_STREAM)))
    assert run["status"] == "passed" and run["final_output"] == "All done."
    calls = run["session_digest"]["tool_calls"]
    assert calls == [
        {"id": "toolu_1", "name": "Skill", "success": True, "result": {"content": "loaded"},
         "arguments": {"path": "", "file_text": "", "command": "", "description": "", "skill": "pdf"}},
        {"id": "toolu_2", "name": "Bash", "success": False, "result": {"content": "permission denied"},
         "arguments": {"path": "", "file_text": "", "command": "ls -la", "description": "list", "skill": ""}},
        {"id": "toolu_3", "name": "Write", "success": True, "result": {"content": "File created"},
         "arguments": {"path": "out.md", "file_text": "# Out\n", "command": "", "description": "", "skill": ""}},
        {"id": "toolu_4", "name": "Read", "success": False,
         "arguments": {"path": "never.txt", "file_text": "", "command": "", "description": "", "skill": ""}},
    ]
    assert run["session_digest"]["tools_used"] == ["Skill", "Bash", "Write", "Read"]
    events = run["tool_events"]
    assert [(e["turn"], e["sequence"], e["tool_call_id"], e["tool_name"], e["success"]) for e in events] == [
        (1, 1, "toolu_1", "Skill", True), (1, 2, "toolu_2", "Bash", False), (1, 3, "toolu_3", "Write", True),
        (1, 4, "toolu_4", "Read", False)]
    assert events[1]["args"] == {"command": "ls -la", "description": "list", "timeout": 5000}
    assert events[1]["error"] == "permission denied"
    assert events[3]["error"] == "no tool result (the run ended first)" and "result" not in events[3]
    assert run["skill_invocations"] == [
        {"name": "pdf", "detected_by": "skill_tool", "tool": "Skill"}]
    assert run["session_id"] == "9b2c"
    assert run["usage"] == {"input_tokens": 120, "output_tokens": 45, "cache_read_tokens": 7, "cache_write_tokens": 3,
                            "cost_usd": 0.0123, "cost_source": "agent", "turns": 3,
                            "model_metrics": {"claude-sonnet-4-5": {
                                "input_tokens": 120, "output_tokens": 45, "cache_read_tokens": 7,
                                "cache_write_tokens": 3, "request_cost": 0.0123}}}
    kinds = [(e["type"], e.get("tool_call_id") or e.get("content") or e.get("skill")) for e in run["transcript"]]
    assert kinds == [
        ("user.message", "say hello"), ("assistant.message", "Let me look."),
        ("tool.execution_start", "toolu_1"),
        ("tool.execution_start", "toolu_2"), ("tool.execution_complete", "toolu_1"),
        ("skill.invoked", {"name": "pdf"}),  # once the Skill call succeeded
        ("tool.execution_complete", "toolu_2"), ("tool.execution_start", "toolu_3"),
        ("tool.execution_start", "toolu_4"), ("tool.execution_complete", "toolu_3"),
        ("assistant.message", "All done."),  # the answer is not repeated
    ]


def test_turns_continue_the_sequence_and_sum_usage(exec_suite, exec_registry, tmp_path):
    first = write_stream(tmp_path / "1.jsonl", [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "a", "name": "Read", "input": {}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]}},
        {"type": "result", "result": "one", "session_id": "s1", "num_turns": 2,
         "usage": {"input_tokens": 5, "output_tokens": 1}}])
    second = write_stream(tmp_path / "2.jsonl", [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "b", "name": "Edit",
                                                       "input": {"file_path": "f"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "b", "content": "ok"}]}},
        {"type": "result", "result": "two", "session_id": "s1", "num_turns": 1,
         "usage": {"input_tokens": 7, "output_tokens": 2}}])
    tasks = [{"id": "t1", "name": "t", "inputs": {"prompt": "first", "follow_up_prompts": ["second"]}}]
    run = one_run(exec_suite, exec_registry, replay_cli(first, second), tasks)
    assert [(e["turn"], e["sequence"], e["tool_name"]) for e in run["tool_events"]] == [(1, 1, "Read"), (2, 2, "Edit")]
    assert run["usage"] == {"input_tokens": 12, "output_tokens": 3, "turns": 3}
    assert run["final_output"] == "one\ntwo"


def test_events_from_a_file_the_agent_writes(exec_suite, exec_registry, tmp_path):
    stream = write_stream(tmp_path / "s.jsonl", CLAUDE_STREAM)
    cli = {"command": [sys.executable, str(REPLAY), stream, "--to", "{events_file}", "--say", "plain answer"],
           "events": "claude-stream-json", "events_from": "file"}
    run = one_run(exec_suite, exec_registry, cli)
    assert run["final_output"] == "plain answer"
    assert len(run["tool_events"]) == 4 and run["skill_invocations"] == [
        {"name": "pdf", "detected_by": "skill_tool", "tool": "Skill"}]


def test_no_events_file_means_no_tool_calls_recorded_as_empty(exec_suite, exec_registry, tmp_path):
    cli = {"command": [sys.executable, "-c", "print('hi')"], "events": "claude-stream-json", "events_from": "file"}
    run = one_run(exec_suite, exec_registry, cli)
    assert (run["tool_events"], run["skill_invocations"], run["session_digest"]["tool_calls"]) == ([], [], [])


def test_events_file_path_reaches_the_agent_in_the_environment(exec_suite, exec_registry):
    code = ("import os; open(os.environ['WAZA_EVENTS_FILE'], 'w')"
            ".write('{{\"type\": \"result\", \"session_id\": \"e\"}}')")
    cli = {"command": [sys.executable, "-c", code], "events": "claude-stream-json", "events_from": "file"}
    assert one_run(exec_suite, exec_registry, cli)["session_id"] == "e"


def test_without_events_nothing_changes(exec_suite, exec_registry, tmp_path):
    stream = write_stream(tmp_path / "s.jsonl", CLAUDE_STREAM)
    cli = {"command": [sys.executable, str(REPLAY), stream], "output": "jsonl", "output_path": "result"}
    run = one_run(exec_suite, exec_registry, cli)
    assert (run["tool_events"], run["skill_invocations"], run["usage"]) == (None, None, None)
    assert run["session_digest"]["tool_calls"] == []


def test_explicit_usage_and_session_paths_win(exec_suite, exec_registry, tmp_path):
    stream = write_stream(tmp_path / "s.jsonl", CLAUDE_STREAM)
    run = one_run(exec_suite, exec_registry, replay_cli(stream, usage_path="message.usage",
                                                       session_id_path="model"))
    assert run["usage"] == {"input_tokens": 10, "output_tokens": 5, "turns": 1}
    assert run["session_id"] == "claude-sonnet-4-5"


def test_a_failed_turn_keeps_the_tool_calls_it_made(exec_suite, exec_registry, tmp_path):
    stream = write_stream(tmp_path / "s.jsonl", CLAUDE_STREAM[:4])  # no result event: no answer
    run = one_run(exec_suite, exec_registry, replay_cli(stream))
    assert run["status"] == "error" and "printed JSON without config.cli.output_path" in run["error_msg"]


@pytest.mark.parametrize("cli,message", [
    ({"command": ["x"], "events": "claude-stream-json"}, "needs output: jsonl (or set events_from: file)"),
    ({"command": ["x"], "events_from": "file"}, "config.cli.events_from is set but events is not"),
    ({"command": ["x", "{events_file}"]}, "uses {events_file}, which needs events_from: file"),
])
def test_event_options_are_checked_before_any_run(exec_suite, exec_registry, cli, message):
    from waza_core.run.engine import Engine

    suite = exec_suite({"cli": cli})
    with pytest.raises(WazaError) as exc:
        Engine(suite, exec_registry)
    assert message in str(exc.value)


def test_an_unknown_event_format_names_the_known_ones(exec_suite, exec_registry):
    """Formats are plugins: an unknown name is caught when the executor is made, with the list."""
    from waza_core.run.engine import Engine

    suite = exec_suite({"cli": {"command": ["x"], "output": "jsonl", "output_path": "r", "events": "codex-jsonl"}})
    with pytest.raises(WazaError) as exc:
        Engine(suite, exec_registry)
    assert "events: unknown format 'codex-jsonl'; known: claude-stream-json, codex-json, copilot-cli-json" in str(
        exc.value)
