"""The text grader: waza's verdicts, scores, messages and details, with RE2 patterns."""

from __future__ import annotations

import threading

from .conftest import ctx


def test_fractional_score_feedback_order_and_details(build):
    g = build("text", {"contains": ["HELLO", "absent"], "not_contains": ["world"], "contains_cs": ["Hello"],
                       "not_contains_cs": ["hello"], "regex_match": ["^H\\w+"], "regex_not_match": ["\\d"]})
    res = g.grade(ctx("Hello world 7"))
    # 7 checks; failing: contains 'absent', not_contains 'world', regex_not_match \d
    assert res.score == 4 / 7 and not res.passed
    assert res.feedback == ("Missing expected substring: absent; Found forbidden substring: world; "
                            "Found forbidden pattern: \\d")
    assert res.details["failures"] == res.feedback.split("; ")
    assert res.details["contains"] == ["HELLO", "absent"] and res.details["regex_not_match"] == ["\\d"]


def test_all_pass_and_waza_nulls(build):
    """waza (Go) writes null for a list that was not configured and for no failures."""
    res = build("text", {"contains": ["ok"], "regex_match": []}).grade(ctx("OK"))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All text checks passed")
    assert res.details == {"contains": ["ok"], "not_contains": None, "contains_cs": None,
                           "not_contains_cs": None, "regex_match": [], "regex_not_match": None,
                           "failures": None}


def test_case_sensitive_messages(build):
    res = build("text", {"contains_cs": ["Hi"], "not_contains_cs": ["yo"]}).grade(ctx("hi yo"))
    assert res.feedback == ("Missing expected substring (case-sensitive): Hi; "
                            "Found forbidden substring (case-sensitive): yo")
    assert res.score == 0.0


def test_zero_checks_scores_one(build):
    res = build("text", {"contains": []}).grade(ctx("anything"))
    assert (res.score, res.passed) == (1.0, True)


def test_case_insensitive_compare_is_gos_simple_case_mapping(build):
    # Python lowers "İ" to "i̇" (two code points) and a final "Σ" to "ς"; Go to "i" and "σ"
    g = build("text", {"contains": ["istanbul", "οδοσ"]})
    assert g.grade(ctx("İSTANBUL ΟΔΟΣ")).passed


def test_regexes_are_re2(build):
    g = build("text", {"regex_match": ["\\pL+", "(?i)HELLO", "[[:digit:]]", "\\Ahello", "o\\z"]})
    assert g.grade(ctx("hello 2 o")).score == 1.0
    # RE2's \d and [[:digit:]] are ASCII only (Python's \d would match Arabic-Indic digits)
    g = build("text", {"regex_match": ["\\d", "[[:digit:]]"]})
    res = g.grade(ctx("\u0663"))
    assert res.score == 0.0 and res.feedback == "Missing expected pattern: \\d; Missing expected pattern: [[:digit:]]"


def test_unanchored_search_and_multiline_flag(build):
    assert build("text", {"regex_match": ["b"]}).grade(ctx("abc")).passed
    assert not build("text", {"regex_match": ["^b"]}).grade(ctx("a\nb")).passed
    assert build("text", {"regex_match": ["(?m)^b$"]}).grade(ctx("a\nb")).passed


def test_catastrophic_pattern_runs_in_linear_time(build):
    """(a+)+$ against a long run of a's backtracks for ever in a backtracking engine."""
    g = build("text", {"regex_not_match": ["(a+)+$", "(x|x)*y"]})
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("res", g.grade(ctx("a" * 200_000 + "!" + "x" * 5000))))
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the regex stalled"
    assert box["res"].passed


def test_output_with_a_lone_surrogate_is_matched_not_crashed(build):
    res = build("text", {"regex_match": ["ab"], "contains": ["b"]}).grade(ctx("a\ud800b ab"))
    assert res.passed


def test_invalid_or_non_re2_patterns_are_load_errors(problems):
    out = problems("text", {"regex_match": ["ok", "a(b"], "regex_not_match": ["(?<=x)y", "(a)\\1", "\\C"]})
    assert out == [
        "invalid regex_match pattern 'a(b': missing ): a(b",
        "invalid regex_not_match pattern '(?<=x)y': invalid perl operator: (?<= "
        "(lookbehind is not supported (waza uses RE2 syntax))",
        "invalid regex_not_match pattern '(a)\\\\1': invalid escape sequence: \\1 "
        "(backreferences are not supported (waza uses RE2 syntax))",
        "invalid regex_not_match pattern '\\\\C': invalid escape sequence: \\C at position 0 "
        "(it matches single bytes; Go's regexp and waza reject it)",
    ]


def test_config_schema(problems):
    assert problems("text", {}) == ["config: must not be empty"]
    assert problems("text", {"contain": ["x"]}) == ["unknown key 'contain' (did you mean 'contains'?)"]
    assert problems("text", {"contains": "x"})[0].startswith("contains: expected list")


def test_text_needs_no_workspace(registry):
    assert registry.get("grader", "text").needs_workspace is False
