"""skill_invocation: modes, the allow_extra penalty, forbidden skills, waza's messages."""

from __future__ import annotations

import pytest

from .conftest import ctx


def grade(build, config, skills):
    invocations = None if skills is None else [{"name": s, "path": f"/skills/{s}/SKILL.md"} for s in skills]
    return build("skill_invocation", config).grade(ctx(skill_invocations=invocations))


def test_exact_match(build):
    res = grade(build, {"required_skills": ["pdf", "docx"], "mode": "exact_match"}, ["pdf", "docx"])
    assert (res.score, res.passed, res.feedback) == (1.0, True, "Skill invocation sequence matched")
    assert res.details == {"mode": "exact_match", "required_skills": ["pdf", "docx"], "forbidden_skills": [],
                           "forbidden_violations": [], "actual_skills": ["pdf", "docx"], "allow_extra": True,
                           "precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_extras_allowed_by_default_cost_only_precision(build):
    res = grade(build, {"required_skills": ["pdf"], "mode": "any_order"}, ["pdf", "xlsx"])
    assert res.passed and res.score == pytest.approx(2 / 3)
    assert res.feedback == "Skill invocation sequence matched"


def test_allow_extra_false_penalises_the_score_but_not_passed(build):
    res = grade(build, {"required_skills": ["pdf", "docx"], "mode": "any_order", "allow_extra": False},
                ["docx", "pdf", "xlsx"])
    f1 = 2 * (2 / 3) * 1 / (2 / 3 + 1)
    assert res.passed is True
    assert res.score == pytest.approx(f1 * (1 - 0.6 * 1 / 3))
    assert res.details["f1"] == pytest.approx(f1)
    assert res.feedback == "Skill invocation sequence matched but had extra invocations (got 3, expected 2)"


def test_exact_mode_fails_on_extras_and_says_both(build):
    res = grade(build, {"required_skills": ["pdf"], "mode": "exact_match", "allow_extra": False}, ["pdf", "docx"])
    assert res.passed is False
    assert res.score == pytest.approx((2 / 3) * 0.7)
    assert res.feedback == ("Exact match failed: expected 1 skills [pdf], got 2 skills [pdf docx]; "
                            "Extra invocations not allowed (got 2, expected 1)")


def test_in_order_failure_message(build):
    res = grade(build, {"required_skills": ["a", "b"], "mode": "in_order"}, ["b", "a"])
    assert res.feedback == ("In-order match failed: not all required skills [a b] appeared in order "
                            "within actual [b a]")


def test_any_order_missing_message(build):
    res = grade(build, {"required_skills": ["a", "a", "b"], "mode": "any_order"}, ["a"])
    assert res.feedback == ("Any-order match failed: missing or insufficient skills: a (need 2, got 1), "
                            "b (need 1, got 0)")


def test_forbidden_only_defaults_to_any_order(build):
    res = grade(build, {"forbidden_skills": ["xlsx"]}, ["pdf"])
    assert (res.score, res.passed, res.feedback) == (1.0, True, "Forbidden skills were not invoked")
    assert res.details["mode"] == "any_order"


def test_a_forbidden_skill_zeroes_the_score(build):
    res = grade(build, {"required_skills": ["pdf"], "mode": "any_order", "forbidden_skills": ["xlsx", "xlsx"]},
                ["pdf", "xlsx", "xlsx"])
    assert (res.score, res.passed) == (0.0, False)
    assert res.feedback == "Forbidden skills invoked: xlsx"
    assert res.details["forbidden_violations"] == ["xlsx"]


def test_skills_not_recorded_count_as_none_invoked(build):
    res = grade(build, {"required_skills": ["pdf"], "mode": "exact_match"}, None)
    assert res.details["actual_skills"] == [] and res.score == 0.0
    assert res.feedback == "Exact match failed: expected 1 skills [pdf], got 0 skills []"


@pytest.mark.parametrize("config,message", [
    ({}, "must have at least one required_skills or forbidden_skills entry"),
    ({"required_skills": ["a"]}, "needs 'mode' with required_skills"),
    ({"required_skills": ["a"], "mode": "in_order_match"}, "'in_order_match' is not one of"),
    ({"forbidden_skills": ["a"], "allow_extra": "no"}, "expected boolean"),
])
def test_config_errors(problems, config, message):
    assert any(message in p for p in problems("skill_invocation", config)), problems("skill_invocation", config)
