"""tool_constraint: expect/reject specs (case-insensitive RE2), allow_only, argument matchers."""

from __future__ import annotations

import time

import pytest

from .conftest import ctx


def call(name, i=0, **args):
    legacy = {k: args.get(k, "") for k in ("path", "file_text", "command", "description", "skill")}
    return {"id": f"c{i}", "name": name, "arguments": legacy, "success": True}


def test_expect_and_reject_pass(build):
    g = build("tool_constraint", {"expect_tools": [{"tool": "^BASH$", "command_pattern": "pytest"}],
                                  "reject_tools": [{"tool": "rm"}, {"tool": "edit", "path_pattern": r"\.env$"}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="python -m pytest -q"), call("edit", 1, path="a.py")],
                      usage={"input_tokens": 3, "output_tokens": 4, "turns": 2}))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All tool constraint checks passed")
    assert res.details == {"expect_tools": ["^BASH$ (command_pattern: pytest)"],
                           "reject_tools": ["rm", "edit (path_pattern: \\.env$)"], "failures": None,
                           "tools_used": ["bash", "edit"], "tokens_total": 7, "total_turns": 2}


def test_failures_and_fractional_score(build):
    g = build("tool_constraint", {"expect_tools": [{"tool": "view"}, {"tool": "skill", "skill_pattern": "^pdf$"}],
                                  "reject_tools": [{"tool": "bash", "command_pattern": "rm -rf"}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="RM -RF build/x"), call("skill", 1, skill="xlsx")]))
    assert res.score == pytest.approx(0 / 3)
    assert res.feedback == ("Expected tool not used: view; Expected tool not used: skill (skill_pattern: ^pdf$); "
                            "Rejected tool was used: bash (command_pattern: rm -rf)")
    assert "tokens_total" not in res.details and "total_turns" not in res.details


def test_tool_regex_is_a_search_not_a_full_match(build):
    g = build("tool_constraint", {"expect_tools": [{"tool": "ash"}]})
    assert g.grade(ctx(tool_calls=[call("bash")])).passed


def test_args_matchers_read_the_tool_events_full_arguments(build):
    g = build("tool_constraint", {"expect_tools": [{"tool": "search", "args": {"limit": {"range": {"lte": 5}},
                                                                              "query": {"regex": "^auth"}}}]})
    events = [{"tool_call_id": "c0", "tool_name": "search", "sequence": 1, "args": {"query": "auth flow", "limit": 3}}]
    assert g.grade(ctx(tool_calls=[call("search")], tool_events=events)).passed
    bad = [{**events[0], "args": {"query": "auth", "limit": 9}}]
    res = g.grade(ctx(tool_calls=[call("search")], tool_events=bad))
    assert res.feedback == "Expected tool not used: search (args: [limit, query])"


def test_args_fall_back_to_the_calls_own_arguments(build):
    g = build("tool_constraint", {"reject_tools": [{"tool": "bash", "args": {"command": {"contains": "sudo"}}}]})
    res = g.grade(ctx(tool_calls=[call("bash", command="sudo ls")], tool_events=None))
    assert res.feedback == "Rejected tool was used: bash (args: [command])"


# -- allow_only -------------------------------------------------------------------------------------


def test_allow_only_counts_one_check_per_call(build):
    g = build("tool_constraint", {"allow_only": [{"tool": "read"}, {"tool": "bash", "command_pattern": "^ls"}]})
    res = g.grade(ctx(tool_calls=[call("view"), call("bash", 1, command="ls"), call("bash", 2, command="rm x"),
                                  call("grep", 3), call("bash", 4, command="cat")]))
    assert res.score == pytest.approx(2 / 5)
    allowed = "[read, bash (command_pattern: ^ls)]"
    assert res.feedback == (f"Undeclared tool used: bash (2 calls; not in allow_only: {allowed}); "
                            f"Undeclared tool used: grep (not in allow_only: {allowed})")
    assert res.details["allow_only"] == ["read", "bash (command_pattern: ^ls)"]
    assert res.details["allow_only_declared"] is True
    assert res.details["allow_only_violations"] == ["bash", "grep"]


def test_allow_only_names_are_exact_not_regexes(build):
    g = build("tool_constraint", {"allow_only": [{"tool": "bash"}]})
    res = g.grade(ctx(tool_calls=[call("bash-experimental"), call("BASH", 1), call("runCommand", 2)]))
    assert res.details["allow_only_violations"] == ["bash-experimental"]


@pytest.mark.parametrize("declared,observed,same", [
    ("mcp:github-search", "github-search", True),
    ("mcp:github-search", "mcp:github-search", True),
    ("builtin:edit", "write", True),
    ("custom:deploy", "deploy", True),
    ("web_fetch", "FETCH", True),
    ("mcp:github", "github-search", False),
])
def test_allow_only_aliases(declared, observed, same):
    from waza_graders.tool_constraint import same_tool

    assert same_tool(declared, observed) is same


def test_allow_only_with_no_calls_is_one_passed_check(build):
    g = build("tool_constraint", {"allow_only": [{"tool": "read"}], "expect_tools": [{"tool": "bash"}]})
    res = g.grade(ctx(tool_calls=[]))
    assert res.score == 0.5 and res.details["allow_only_violations"] is None


def test_empty_allow_only_denies_every_call(build):
    res = build("tool_constraint", {"allow_only": []}).grade(ctx(tool_calls=[call("read")]))
    assert (res.score, res.feedback) == (0.0, "Undeclared tool used: read (not in allow_only: [])")


def test_an_unnamed_call_is_reported_as_such(build):
    res = build("tool_constraint", {"allow_only": [{"tool": "read"}]}).grade(ctx(tool_calls=[{"arguments": {}}]))
    assert res.details["allow_only_violations"] == ["<unnamed>"]


def test_a_catastrophic_pattern_runs_in_linear_time(build):
    g = build("tool_constraint", {"expect_tools": [{"tool": "x", "command_pattern": "(a+)+$"}]})
    t0 = time.perf_counter()
    res = g.grade(ctx(tool_calls=[call("x", command="a" * 50_000 + "!")]))
    assert time.perf_counter() - t0 < 2 and not res.passed  # Python's re would take ages on this


@pytest.mark.parametrize("config,message", [
    ({}, "must have at least one constraint configured (expect_tools, reject_tools or allow_only)"),
    ({"expect_tools": [{"tool": "  "}]}, "config.expect_tools[0].tool: required non-empty string"),
    ({"reject_tools": [{"tool": "(?<=x)y"}]}, "config.reject_tools[0].tool: invalid regex"),
    ({"expect_tools": [{"tool": "a", "command_pattern": "("}]},
     "config.expect_tools[0].command_pattern: invalid regex"),
    ({"expect_tools": [{"command_pattern": "x"}]}, "missing required key 'tool'"),
    ({"expect_tools": [{"tool": "a", "args": {"q": {"regex": ""}}}]},
     "config.expect_tools[0].args[q]: argmatcher: regex matcher requires a non-empty pattern"),
    ({"allow_only": [{"tool": "a", "comand_pattern": "x"}]}, "unknown key 'comand_pattern' (did you mean"),
])
def test_config_errors(problems, config, message):
    assert any(message in p for p in problems("tool_constraint", config)), problems("tool_constraint", config)


def test_lookahead_gets_an_re2_hint(problems):
    out = problems("tool_constraint", {"expect_tools": [{"tool": "a(?=b)"}]})
    assert any("lookahead is not supported (waza uses RE2 syntax)" in p for p in out), out
