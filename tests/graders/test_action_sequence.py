"""action_sequence: pass rule by mode, F1 as the score, waza's feedback strings."""

from __future__ import annotations

import pytest

from .conftest import ctx


def run(build, mode, expected, actual):
    g = build("action_sequence", {"matching_mode": mode, "expected_actions": expected})
    return g.grade(ctx(tool_calls=[{"name": n, "arguments": {}} for n in actual]))


def test_exact_match(build):
    res = run(build, "exact_match", ["view", "edit"], ["view", "edit"])
    assert (res.score, res.passed, res.feedback) == (1.0, True, "Action sequence matched")
    assert res.details == {"matching_mode": "exact_match", "expected_actions": ["view", "edit"],
                           "actual_actions": ["view", "edit"], "precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_exact_match_with_an_extra_step_fails_with_f1(build):
    res = run(build, "exact_match", ["view", "edit"], ["view", "bash", "edit"])
    assert res.passed is False
    assert res.score == pytest.approx(0.8)  # P = 2/3, R = 1
    assert res.feedback == "Exact match failed: expected 2 actions [view edit], got 3 actions [view bash edit]"


def test_in_order_allows_steps_between(build):
    res = run(build, "in_order_match", ["view", "edit"], ["view", "bash", "edit"])
    assert res.passed and res.score == pytest.approx(0.8)


def test_in_order_wrong_order_fails_with_perfect_f1(build):
    res = run(build, "in_order_match", ["view", "edit"], ["edit", "view"])
    assert (res.passed, res.score) == (False, 1.0)
    assert res.feedback == ("In-order match failed: not all expected actions [view edit] appeared in order "
                            "within actual [edit view]")


def test_any_order_counts_repeats(build):
    res = run(build, "any_order_match", ["view", "view", "edit", "bash"], ["edit", "view", "grep"])
    assert res.passed is False
    assert res.details["precision"] == pytest.approx(2 / 3) and res.details["recall"] == 0.5
    assert res.score == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert res.feedback == ("Any-order match failed: missing or insufficient actions: view (need 2, got 1), "
                            "bash (need 1, got 0)")


def test_any_order_passes_with_extras(build):
    res = run(build, "any_order_match", ["edit", "view"], ["view", "grep", "edit", "view"])
    assert res.passed and res.score == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_no_calls_scores_zero(build):
    res = run(build, "exact_match", ["view", "edit"], [])
    assert (res.score, res.details["precision"], res.details["recall"]) == (0.0, 0.0, 0.0)
    assert res.feedback == "Exact match failed: expected 2 actions [view edit], got 0 actions []"
    assert res.details["actual_actions"] == []


@pytest.mark.parametrize("config,message", [
    ({"expected_actions": ["a"]}, "missing required key 'matching_mode'"),
    ({"matching_mode": "in_order", "expected_actions": ["a"]}, "'in_order' is not one of"),
    ({"matching_mode": "exact_match", "expected_actions": []}, "should be non-empty"),
    ({"matching_mode": "exact_match"}, "missing required key 'expected_actions'"),
])
def test_config_errors(problems, config, message):
    assert any(message in p for p in problems("action_sequence", config)), problems("action_sequence", config)
