"""The event readers against each agent's own source for its event types.

What each test pins, and where it comes from:

* Codex: ``turn.completed`` usage is the thread's running total (``usage_from_last_total`` in
  ``codex-rs/exec/src/event_processor_with_jsonl_output.rs``); a live probe of a resumed thread
  (gitmoot/gitmoot#661, codex-cli 0.142.4) saw input 16504 -> 85681 -> 103779. ``plan`` items,
  ``item.plan.delta`` and ``request_user_input`` are ``ThreadEvent``s of ``exec_events.rs``.
* Gemini CLI: ``ErrorEvent.severity`` is ``warning`` or ``error``; ``StreamStats`` (with
  ``models`` in newer releases, as in the recorded switchboard stream).
* OpenCode: ``run --format json`` ends with ``done`` (``reason``, ``rejected``).
* Cursor: tool outcomes of Cursor CLI 2026.08 (captured by ZhengyiLuo/AgentsServer); the
  ``--stream-partial-output`` message forms described on the Cursor forum.
* Copilot CLI: ``assistant.usage.cost`` is premium requests, ``copilotUsage.totalNanoAiu`` AI
  credits, ``session.shutdown`` the session's totals (the Copilot SDK's session events).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.test_event_formats import FAIL, OK, OPEN, outcomes, read

STREAMS = Path(__file__).parent / "event_streams"


def lines(*events) -> list[str]:
    return [json.dumps(e) for e in events]


def codex_turn(thread, total):
    return lines({"type": "thread.started", "thread_id": thread}, {"type": "turn.started"},
                 {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "ok"}},
                 {"type": "turn.completed", "usage": total})


def test_codex_resumed_thread_counts_each_turn_once():
    from waza_core.plugins import find_registered

    reader = find_registered("event_format", "codex-json")()
    from waza_core.run.execution import RunEvidence

    totals = [{"input_tokens": 16504, "cached_input_tokens": 0, "output_tokens": 20},
              {"input_tokens": 85681, "cached_input_tokens": 60000, "output_tokens": 40},
              {"input_tokens": 103779, "cached_input_tokens": 80000, "output_tokens": 45}]
    per_turn = []
    for turn, total in enumerate(totals, start=1):
        evidence = RunEvidence(output="", transcript=[], tool_calls=[])
        reader.feed_lines(codex_turn("thread-1", total), turn, evidence)
        per_turn.append(reader.take_usage())
    assert [u["input_tokens"] for u in per_turn] == [16504, 85681 - 16504, 103779 - 85681]
    assert sum(u["output_tokens"] for u in per_turn) == 45  # the thread's own final total
    assert sum(u["cache_read_tokens"] for u in per_turn) == 80000
    evidence = RunEvidence(output="", transcript=[], tool_calls=[])
    reader.feed_lines(codex_turn("thread-2", {"input_tokens": 500, "output_tokens": 5}), 4, evidence)
    assert reader.take_usage()["input_tokens"] == 500  # another thread starts from its own total
    fresh = find_registered("event_format", "codex-json")()
    for turn in (1, 2):  # no thread.started: each turn's figure as it is
        fresh.feed_lines(codex_turn("x", {"input_tokens": 100 * turn})[1:], turn,
                         RunEvidence(output="", transcript=[], tool_calls=[]))
        assert fresh.take_usage()["input_tokens"] == 100 * turn


def test_codex_plan_items_and_user_input_requests_are_known():
    reader, evidence = read("codex-json", lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.started", "item": {"id": "item_1", "type": "plan", "text": "1. read"}},
        {"type": "item.plan.delta", "item_id": "item_1", "delta": " 2. write"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "plan", "text": "1. read 2. write"}},
        {"type": "request_user_input", "id": "turn-1", "call_id": "call-9",
         "questions": [{"id": "q", "header": "Which?", "question": "Which file?"}]},
        {"type": "item.completed", "item": {"id": "item_2", "type": "web_search", "id2": "ws", "query": "x",
                                            "action": {"type": "search", "query": "x"}}},
    ))
    assert reader.unknown == {}
    assert any(e["type"] == "user_input.requested" and e["call_id"] == "call-9" for e in evidence.transcript)
    assert evidence.tool_events[0]["args"]["action"] == {"type": "search", "query": "x"}


def test_gemini_warnings_are_not_errors_and_usage_is_kept_per_model():
    path = STREAMS / "switchboard-gemini-benign-trailing-error.stream.jsonl"
    reader, evidence = read("gemini-stream-json", path.read_text().splitlines())
    assert reader.model_metrics == {
        "gemini-3.1-flash-lite": {"input_tokens": 3787, "output_tokens": 46, "cache_read_tokens": 0},
        "gemini-3-flash-preview": {"input_tokens": 55454, "output_tokens": 475, "cache_read_tokens": 46121}}
    reader, evidence = read("gemini-stream-json", lines(
        {"type": "init", "session_id": "s", "model": "auto"},
        {"type": "error", "severity": "warning", "message": "Loop detected, continuing"},
        {"type": "error", "severity": "error", "message": "quota exceeded"},
        {"type": "result", "status": "success", "stats": {"input_tokens": 10, "output_tokens": 2, "cached": 4}}))
    assert reader.errors == ["quota exceeded"]
    assert {"type": "agent.warning", "message": "Loop detected, continuing"} in evidence.transcript
    assert reader.take_usage() == {"input_tokens": 10, "output_tokens": 2, "cache_read_tokens": 4}


def test_opencode_done_event_is_known_and_keeps_rejected_permissions():
    reader, evidence = read("opencode-json", lines(
        {"type": "step_start", "sessionID": "ses_1", "part": {"type": "step-start"}},
        {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": "Done."}},
        {"type": "done", "sessionID": "ses_1", "reason": "idle", "rejected": ["question"]}))
    assert reader.unknown == {}
    assert {"type": "session.done", "reason": "idle", "rejected_permissions": ["question"]} in evidence.transcript


def test_cursor_captured_outcomes_and_usage():
    path = STREAMS / "agentsserver-cursor_cli_2026_08_captured.jsonl"
    reader, evidence = read("cursor-stream-json", path.read_text().splitlines())
    assert outcomes(evidence) == [("globToolCall", OK), ("editToolCall", OK), ("shellToolCall", FAIL),
                                  ("shellToolCall", OK)]
    assert reader.take_usage() == {"input_tokens": 14948, "output_tokens": 103}
    assert reader.session_id == "00000000-0000-4000-8000-000000000001" and reader.unknown == {}


@pytest.mark.parametrize("outcome, expected", [
    ("spawnError", FAIL), ("fileNotFound", FAIL), ("writePermissionDenied", FAIL), ("needsConfirmation", FAIL),
    ("toolNotFound", FAIL), ("complete", OK), ("saveSuccess", OK), ("stillRunning", OPEN), ("async", OPEN)])
def test_cursor_every_outcome_of_the_cli(outcome, expected):
    reader, evidence = read("cursor-stream-json", lines(
        {"type": "tool_call", "subtype": "started", "call_id": "c1",
         "tool_call": {"readToolCall": {"args": {"path": "a.txt"}}}, "session_id": "s"},
        {"type": "tool_call", "subtype": "completed", "call_id": "c1",
         "tool_call": {"readToolCall": {"args": {"path": "a.txt"}, "result": {outcome: {}}}}, "session_id": "s"}))
    assert outcomes(evidence) == [("readToolCall", expected)]


def test_cursor_partial_output_is_one_message_not_fragments():
    whole = "Reading the file... It prints hello."
    reader, evidence = read("cursor-stream-json", lines(
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Reading the file..."}]},
         "timestamp_ms": 1774846267524},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Reading the file..."}]},
         "model_call_id": "a594", "timestamp_ms": 1774846267693},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": " It prints"}]},
         "timestamp_ms": 1774846272384},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": " hello."}]},
         "timestamp_ms": 1774846272390},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": whole}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": whole, "session_id": "s"}))
    assert reader.messages == [whole]
    reader, _ = read("cursor-stream-json", lines(  # chunks only (the whole message never came)
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Hel"}]}, "timestamp_ms": 1},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "lo"}]}, "timestamp_ms": 2}))
    assert reader.messages == ["Hello"]


def copilot_call(model, tokens_in, tokens_out, cost, nano=None):
    data = {"model": model, "inputTokens": tokens_in, "outputTokens": tokens_out, "cacheReadTokens": 0,
            "cacheWriteTokens": 0, "cost": cost}
    if nano is not None:
        data["copilotUsage"] = {"totalNanoAiu": nano, "model": model}
    return {"type": "assistant.usage", "data": data}


def test_copilot_cost_is_premium_requests_never_money():
    reader, _ = read("copilot-cli-json", lines(
        copilot_call("claude-sonnet-4.6", 100, 10, 1.0, nano=2e9),
        copilot_call("gpt-5-mini", 50, 5, 0.0, nano=5e8),
        {"type": "result", "sessionId": "s", "exitCode": 0, "usage": {"premiumRequests": 1}}))
    usage = reader.take_usage()
    reader.finish_usage(usage)
    assert "cost_usd" not in usage and usage["premium_requests"] == 1.0
    assert usage["ai_credits"] == 2.5 and usage["input_tokens"] == 150
    assert usage["model_metrics"]["claude-sonnet-4.6"]["request_cost"] == 1.0
    from waza_core.run.prices import apply, builtin

    apply(builtin(), usage, "")
    assert usage["cost_usd"] == pytest.approx(0.025) and usage["cost_source"] == "price_table"


def test_copilot_credits_of_only_some_calls_are_unknown_and_shutdown_totals_win():
    reader, _ = read("copilot-cli-json", lines(
        copilot_call("gpt-5-mini", 50, 5, 0.0, nano=5e8), copilot_call("gpt-5-mini", 50, 5, 0.0)))
    assert "ai_credits" not in reader.take_usage()
    reader, _ = read("copilot-cli-json", lines(
        copilot_call("gpt-5-mini", 50, 5, 1.0, nano=5e8),
        {"type": "session.shutdown", "data": {
            "totalPremiumRequests": 3, "totalNanoAiu": 4e9,
            "modelMetrics": {"gpt-5-mini": {"usage": {"inputTokens": 900, "outputTokens": 90, "cacheReadTokens": 0,
                                                      "cacheWriteTokens": 0},
                                            "requests": {"count": 3, "cost": 3}, "totalNanoAiu": 4e9}}}},
        {"type": "model.call_failure", "data": {"errorMessage": "rate limited"}}))
    usage = reader.take_usage()
    assert usage["input_tokens"] == 900 and usage["premium_requests"] == 3 and usage["ai_credits"] == 4.0
    assert reader.model_metrics["gpt-5-mini"]["ai_credits"] == 4.0
    assert reader.errors == ["rate limited"] and reader.unknown == {}


def test_copilot_skill_invoked_ref_and_runtime_families_are_known():
    reader, evidence = read("copilot-cli-json", lines(
        {"type": "skill.invoked_ref", "data": {"name": "pdf", "path": "/s/pdf/SKILL.md", "contentId": "c",
                                                "contentLength": 10}},
        {"type": "permission.requested", "data": {}}, {"type": "sandbox.decision", "data": {}},
        {"type": "mcp.tools.list_changed", "data": {}}))
    assert [s["name"] for s in evidence.skill_invocations] == ["pdf"] and reader.unknown == {}


def claude_process(version, session, *costs):
    events = [{"type": "system", "subtype": "init", "session_id": session, "model": "claude-sonnet-4-5",
               "claude_code_version": version}]
    for cost in costs:
        events.append({"type": "result", "subtype": "success", "is_error": False, "session_id": session,
                       "num_turns": 1, "total_cost_usd": cost, "usage": {"input_tokens": 10, "output_tokens": 2}})
    return lines(*events)


def claude_turn_costs(version, *processes):
    from waza_core.plugins import find_registered
    from waza_core.run.execution import RunEvidence

    reader = find_registered("event_format", "claude-stream-json")()
    out = []
    for turn, costs in enumerate(processes, start=1):
        reader.feed_lines(claude_process(version, "ses", *costs), turn, RunEvidence(output="", transcript=[],
                                                                                     tool_calls=[]))
        usage = reader.take_usage()
        out.append((round(usage["cost_usd"], 6), usage["input_tokens"]))
    return out


def test_claude_cost_is_a_running_total_counted_once():
    # one process, two result events (AionCore#767's figures): the process spent the last total
    assert claude_turn_costs("2.1.221", [0.250686, 0.278994]) == [(0.278994, 20)]
    # a --resume turn before 2.1.277 starts again from zero: its own figure
    assert claude_turn_costs("2.1.221", [0.250686], [0.028596]) == [(0.250686, 10), (0.028596, 10)]
    # from 2.1.277 the resumed process restores the session's total first (claw-orchestrator#112)
    assert claude_turn_costs("2.1.278", [0.363044], [0.386463]) == [(0.363044, 10), (0.023419, 10)]
