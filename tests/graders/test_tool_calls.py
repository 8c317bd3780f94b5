"""tool_calls: required/forbidden/min/max checks and ``expect`` with argument matchers."""

from __future__ import annotations

import pytest

from .conftest import TOY_CLI, ctx, only_run


def call(name, i=0, **args):
    legacy = {k: args.pop(k, "") for k in ("path", "file_text", "command", "description", "skill")}
    return {"id": f"id{i}", "name": name, "arguments": {**legacy, **args}, "success": True}


def test_all_checks_pass(build):
    g = build("tool_calls", {"required_tools": ["bash"], "forbidden_tools": ["rm"], "min_calls": 1, "max_calls": 3})
    res = g.grade(ctx(tool_calls=[call("bash"), call("view", 1), call("bash", 2)]))
    assert (res.type, res.score, res.passed, res.feedback) == ("tool_calls", 1.0, True,
                                                               "all tool_calls checks passed")
    assert res.details == {"total_calls": 3, "unique_tools": ["bash", "view"], "passed_checks": 4,
                           "total_checks": 4}


def test_failures_with_go_quoting_and_fractional_score(build):
    g = build("tool_calls", {"required_tools": ["grep", "bash"], "forbidden_tools": ["view"], "min_calls": 3})
    res = g.grade(ctx(tool_calls=[call("bash"), call("view", 1)]))
    assert res.score == pytest.approx(1 / 4)
    assert res.feedback == ('required tool "grep" was not called; forbidden tool "view" was called; '
                            "expected at least 3 tool calls, got 2")
    assert res.details["passed_checks"] == 1 and res.details["total_checks"] == 4
    res = build("tool_calls", {"max_calls": 1}).grade(ctx(tool_calls=[call("bash"), call("view", 1)]))
    assert (res.score, res.feedback) == (0.0, "expected at most 1 tool calls, got 2")


def test_min_zero_is_a_check(build):
    res = build("tool_calls", {"min_calls": 0}).grade(ctx(tool_calls=[]))
    assert res.details["total_checks"] == 1 and res.passed


def test_expect_matches_tool_events_and_reports_the_call(build):
    g = build("tool_calls", {"expect": [{"tool": "SEARCH", "args": {"query": {"regex": "^auth"}}}]})
    events = [{"tool_call_id": "id0", "tool_name": "search", "sequence": 4, "args": {"query": "billing"}},
              {"tool_call_id": "id1", "tool_name": "search", "sequence": 7, "args": {"query": "auth flow"}}]
    res = g.grade(ctx(tool_calls=[call("search"), call("search", 1)], tool_events=events))
    assert res.passed
    assert res.details["expect"] == [{"tool": "SEARCH", "args": {"query": {"regex": "^auth"}},
                                      "matched_call_index": 6, "matched_tool_event_index": 1,
                                      "matched_call_id": "id1"}]


def test_expect_reports_the_last_reason(build):
    g = build("tool_calls", {"expect": [{"tool": "search", "args": {"limit": {"range": {"gt": 2, "lt": 10}},
                                                                    "query": {"contains": "auth"}}}]})
    events = [{"tool_call_id": "a", "tool_name": "search", "args": {"query": "auth", "limit": 2}},
              {"tool_call_id": "b", "tool_name": "search", "args": {"limit": 2.5}}]
    res = g.grade(ctx(tool_calls=[], tool_events=events))
    assert res.feedback == 'expectation tool="search" not satisfied: argument "query": not present on tool call'
    assert res.details["expect"][0]["reason"] == 'argument "query": not present on tool call'


def test_expect_falls_back_to_calls_without_events(build):
    g = build("tool_calls", {"expect": [{"tool": "bash", "args": {"command": {"equals": "ls"}}},
                                        {"tool": "view"}, {"tool": "grep"}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="ls -l"), call("bash", 1, command="ls"), call("view", 2)]))
    exp = res.details["expect"]
    assert exp[0] == {"tool": "bash", "args": {"command": {"equals": "ls"}}, "matched_call_index": 1,
                      "matched_call_id": "id1"}
    assert exp[1] == {"tool": "view", "matched_call_index": 2, "matched_call_id": "id2"}
    assert exp[2] == {"tool": "grep", "reason": "no tool call with matching name"}
    assert res.score == pytest.approx(2 / 3)


def test_expect_names_the_mismatch(build):
    g = build("tool_calls", {"expect": [{"tool": "bash", "args": {"command": {"equals": "ls"}}}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="pwd")]))
    assert res.feedback == 'expectation tool="bash" not satisfied: argument "command": expected "ls", got "pwd"'


def test_legacy_empty_fields_are_not_present_arguments(build):
    g = build("tool_calls", {"expect": [{"tool": "bash", "args": {"path": {"equals": ""}}}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="ls")]))
    assert res.details["expect"][0]["reason"] == 'argument "path": not present on tool call'


def test_event_args_that_are_not_an_object(build):
    g = build("tool_calls", {"expect": [{"tool": "x", "args": {"a": {"equals": 1}}}]})
    res = g.grade(ctx(tool_calls=[], tool_events=[{"tool_call_id": "1", "tool_name": "x", "args": [1, 2]}]))
    assert res.details["expect"][0]["reason"] == "unmarshaling tool event args as object: not a JSON object"


@pytest.mark.parametrize("config,message", [
    ({}, "tool_calls grader needs at least one constraint"),
    ({"min_calls": 3, "max_calls": 2}, "min_calls (3) must be <= max_calls (2)"),
    ({"max_calls": -1}, "-1 is less than the minimum of 0"),
    ({"expect": [{"tool": ""}]}, "expect[0].tool: required non-empty string"),
    ({"expect": [{"tool": "a", "args": {"q": {"regex": "x", "contains": "y"}}}]},
     "argmatcher: exactly one matcher kind allowed, got 2 (regex, contains)"),
    ({"expect": [{"tool": "a", "args": {"q": {"contains": ""}}}]},
     "expect[0].args[q]: argmatcher: contains matcher requires a non-empty substring"),
    ({"expect": [{"tool": "a", "args": {"q": {"range": {}}}}]},
     "argmatcher: range matcher requires at least one bound (gte, lte, gt, lt)"),
    ({"expect": [{"tool": "a", "args": {"q": {"json_schema": {"type": "nope"}}}}]},
     "argmatcher: invalid json_schema"),
    ({"expect": [{"tool": "a", "args": {"q": {"startswith": "x"}}}]}, "unknown key 'startswith'"),
])
def test_config_errors(problems, config, message):
    out = problems("tool_calls", config)
    assert any(message in p for p in out), out


def test_against_the_toy_agent_with_waza_grade(suite_dir, registry):
    from waza_core.run.regrade import regrade

    suite_dir.write(config={"executor": "cli", "model": "toy-1", "cli": TOY_CLI},
                    graders=[{"type": "tool_calls", "name": "tc", "config": {
                        "required_tools": ["Write"], "max_calls": 3,
                        "expect": [{"tool": "^write$", "args": {"file_path": {"regex": r"\.md$"},
                                                                 "content": {"contains": "# Title"}}}]}}],
                    tasks=[{"id": "t", "name": "t", "inputs": {"prompt": "write notes.md: # Title\nsay done"}}])
    outcome = suite_dir.run()
    v = only_run(outcome)["validations"]["tc"]
    assert v["passed"] and v["details"]["expect"][0]["matched_call_id"] == "toolu_01"
    from waza_core.results.codec import results_to_json

    again = results_to_json(regrade(suite_dir.load(), registry, outcome).outcome)["tasks"][0]["runs"][0]
    again = again["validations"]["tc"]
    assert again == {**v, "duration_ms": again["duration_ms"]}
