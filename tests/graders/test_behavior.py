"""behavior: waza's checks, messages, details (nulls included) and score formula."""

from __future__ import annotations

import pytest

from .conftest import TOY_CLI, ctx, only_run


def calls(*names):
    return [{"id": f"c{i}", "name": n, "arguments": {}, "success": True} for i, n in enumerate(names)]


def test_all_rules_pass(build):
    g = build("behavior", {"max_tool_calls": 3, "max_tokens": 100, "required_tools": ["bash"],
                           "forbidden_tools": ["rm"], "max_duration_ms": 5000})
    res = g.grade(ctx(tool_calls=calls("bash", "view"), usage={"input_tokens": 60, "output_tokens": 40},
                      duration_ms=1200))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All behavior checks passed")
    assert res.details == {"max_tool_calls": 3, "max_tokens": 100, "required_tools": ["bash"],
                           "forbidden_tools": ["rm"], "max_duration_ms": 5000, "failures": None,
                           "tool_call_count": 2, "tools_used": ["bash", "view"], "actual_duration": 1200,
                           "tokens_total": 100}


def test_failures_in_waza_order_and_fractional_score(build):
    g = build("behavior", {"max_tool_calls": 1, "max_tokens": 10, "required_tools": ["bash", "grep"],
                           "forbidden_tools": ["view", "rm"], "max_duration_ms": 100})
    res = g.grade(ctx(tool_calls=calls("bash", "view", "bash"), usage={"input_tokens": 7, "output_tokens": 5},
                      duration_ms=250))
    assert res.feedback == ("Tool call count 3 exceeds max allowed 1; Token usage 12 exceeds max allowed 10; "
                            "Required tool not used: grep; Forbidden tool was used: view; "
                            "Duration 250ms exceeds max allowed 100ms")
    assert res.score == pytest.approx(2 / 7)  # 7 checks: 3 scalar rules + 2 required + 2 forbidden
    assert res.passed is False
    assert res.details["tools_used"] == ["bash", "view", "bash"] and res.details["tool_call_count"] == 3


def test_max_tokens_without_usage_fails_and_leaves_tokens_total_out(build):
    res = build("behavior", {"max_tokens": 10}).grade(ctx(usage=None))
    assert (res.score, res.feedback) == (0.0, "No usage data available to check max tokens")
    assert "tokens_total" not in res.details


def test_limits_are_inclusive(build):
    g = build("behavior", {"max_tool_calls": 2, "max_duration_ms": 50})
    assert g.grade(ctx(tool_calls=calls("a", "b"), duration_ms=50)).passed


def test_zero_turns_a_rule_off(build):
    g = build("behavior", {"max_tool_calls": 0, "required_tools": ["bash"]})
    res = g.grade(ctx(tool_calls=calls("a", "b", "c")))
    assert res.feedback == "Required tool not used: bash" and res.score == 0.0
    assert res.details["required_tools"] == ["bash"] and res.details["forbidden_tools"] is None


def test_no_tool_evidence_is_no_tool_calls(build):
    res = build("behavior", {"forbidden_tools": ["rm"]}).grade(ctx())
    assert res.passed and res.details["tools_used"] == [] and res.details["tool_call_count"] == 0


@pytest.mark.parametrize("config,message", [
    ({}, "behavior grader must have at least one rule configured"),
    ({"max_tool_calls": 0, "required_tools": []}, "must have at least one rule configured"),
    ({"max_tool_calls": -1}, "-1 is less than the minimum of 0"),
    ({"max_tokens": "many"}, "expected integer"),
    ({"required_tool": ["x"]}, "unknown key 'required_tool' (did you mean 'required_tools'?)"),
])
def test_config_errors(problems, config, message):
    assert any(message in p for p in problems("behavior", config)), problems("behavior", config)


def test_not_deterministic_so_the_cache_stays_off(registry):
    assert registry.get("grader", "behavior").deterministic is False


def test_against_the_toy_agent(suite_dir):
    suite_dir.write(config={"executor": "cli", "model": "toy-1", "cli": TOY_CLI},
                    graders=[{"type": "behavior", "name": "b",
                              "config": {"max_tool_calls": 2, "max_tokens": 100, "required_tools": ["Bash"]}}],
                    tasks=[{"id": "t", "name": "t", "inputs": {
                        "prompt": 'tool Bash {"command": "ls"}\ntool Read {"file_path": "a"}\nusage 80 30\nsay ok'}}])
    v = only_run(suite_dir.run())["validations"]["b"]
    assert v["score"] == pytest.approx(2 / 3)
    assert v["feedback"] == "Token usage 110 exceeds max allowed 100"
    assert v["details"]["tools_used"] == ["Bash", "Read"]


def test_regrading_a_waza_results_run_reads_usage_from_the_session_digest(build):
    """waza (Go) writes usage only inside session_digest; its `waza grade` reads it there."""
    from waza_core.results.codec import decode_run

    waza_run = {"run_number": 1, "status": "failed", "duration_ms": 5400, "final_output": "done",
                "session_digest": {"tool_call_count": 1, "tools_used": ["bash"], "errors": [],
                                   "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}, "success": True}],
                                   "usage": {"turns": 1, "input_tokens": 17712, "output_tokens": 24}}}
    ev = decode_run(waza_run).evidence()
    res = build("behavior", {"max_tokens": 1200, "max_tool_calls": 3}).grade(
        ctx(output=ev.output, tool_calls=ev.tool_calls, usage=ev.usage, duration_ms=ev.duration_ms))
    assert res.feedback == "Token usage 17736 exceeds max allowed 1200"
    assert res.score == 0.5 and res.details["tokens_total"] == 17736
