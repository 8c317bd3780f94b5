"""The trigger grader: waza's SKILL.md keyword heuristic, step by step."""

from __future__ import annotations

import pytest

from waza_core.errors import WazaError
from waza_core.model import GraderSpec
from waza_graders.trigger import tokenize, use_for_phrases

from .conftest import ctx, suite_at

SKILL = """---
name: pdf-tools
description: 'Work with PDF files. USE FOR: "merge pdf files", "split a pdf". DO NOT USE FOR: image editing.'
---
Merge, split and rotate documents.
"""


@pytest.fixture
def skill(tmp_path):
    path = tmp_path / "skills" / "pdf-tools" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(SKILL)
    return path


def grade(build, skill, prompt, **config):
    g = build("trigger", {"skill_path": str(skill), "mode": "positive", **config})
    return g.grade(ctx(prompt=prompt, output="the output is not graded"))


def test_keywords_and_phrases_come_from_name_description_body(build, skill):
    g = build("trigger", {"skill_path": str(skill), "mode": "positive"})
    assert g.keywords == {"pdf", "tools", "work", "files", "use", "merge", "split", "rotate", "documents"}
    assert g.phrases == ["merge pdf files", "split a pdf"]


def test_token_score_is_matched_over_distinct_prompt_tokens(build, skill):
    res = grade(build, skill, "rotate the scanned documents, rotate them")
    assert res.score == pytest.approx(2 / 4) and not res.passed
    assert res.feedback == "Prompt is not trigger-aligned enough (score 0.50 < 0.60)"
    assert res.details == {"mode": "positive", "threshold": 0.6, "skill_path": str(skill),
                           "matched_keywords": ["rotate", "documents"], "matched_count": 2,
                           "keyword_count": 9, "phrase_score": 0.0}


def test_phrase_tokens_all_present_score_one(build, skill):
    res = grade(build, skill, "Please merge these PDF files for me")  # token score alone: 3/5
    assert (res.score, res.details["phrase_score"], res.passed) == (1.0, 1.0, True)
    assert res.feedback == "Prompt is trigger-aligned (score 1.00 >= 0.60)"


def test_verbatim_phrase_scores_one(build, skill):
    res = grade(build, skill, "Can you SPLIT A PDF now?", threshold=1)
    assert res.score == 1.0 and res.passed


def test_partial_phrase_score(build, skill):
    # "split a pdf" -> tokens [split, pdf]; prompt has split only: 0.5; token score 1/3
    res = grade(build, skill, "split the spreadsheet quickly")
    assert res.details["phrase_score"] == 0.5 and res.score == 0.5


def test_no_tokens_scores_zero_and_threshold_zero_passes(build, skill):
    res = grade(build, skill, "is it ok?")
    assert (res.score, res.details["matched_keywords"], res.details["phrase_score"]) == (0.0, None, 0.0)
    assert not res.passed
    assert grade(build, skill, "is it ok?", threshold=0).passed


def test_negative_mode(build, skill):
    g = build("trigger", {"skill_path": str(skill), "mode": " Negative ", "threshold": 0.5})
    res = g.grade(ctx(prompt="what is the weather today"))
    assert res.passed and res.feedback == "Prompt correctly treated as non-trigger (score 0.00 < 0.50)"
    assert res.details["mode"] == "negative"
    res = g.grade(ctx(prompt="rotate documents"))
    assert not res.passed and res.feedback == "Prompt appears trigger-aligned unexpectedly (score 1.00 >= 0.50)"


def test_tokenizer_is_gos():
    # lower case; letters and digits only; >= 3 *bytes* (so a two-letter non-ASCII word stays); stop words out
    assert tokenize("The quick PDF-files: naïve ää 12 123 with über") == [
        "quick", "pdf", "files", "naïve", "ää", "123", "über"]


def test_use_for_phrases_parsing():
    assert use_for_phrases("Use for: merge PDFs, split a pdf (pages), fill forms. INVOKES: pdftk") == [
        "merge PDFs", "split a pdf", "fill forms"]
    assert use_for_phrases("DO NOT USE FOR: x, y") == []
    assert use_for_phrases("x.\nUSE FOR: \u201cone thing\u201d, \u201ctwo\u201d\nDO NOT USE FOR: z") == [
        "one thing", "two"]


def test_folder_path_and_suite_relative_path(build, skill, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path / "skills")
    g = build("trigger", {"skill_path": "pdf-tools", "mode": "positive"})
    assert g.grade(ctx(prompt="merge pdf files")).passed
    monkeypatch.chdir(skill.parent.parent.parent.parent)  # somewhere with no ./SKILL.md
    suite = suite_at(skill.parent)
    g = build("trigger", {"skill_path": "SKILL.md", "mode": "positive"}, suite=suite)
    assert g.keywords


@pytest.mark.parametrize("text,message", [
    (None, "not found (looked for"),
    ("  \n", "SKILL.md is empty"),
    ("---\nname: x\n", "closing frontmatter delimiter not found"),
    ("---\nname: [a\n---\n", "parsing frontmatter"),
    ("---\n- a\n---\nbody words", "the frontmatter is not a mapping"),
    ("---\nname: {a: b}\n---\nbody words", "name must be a string"),
    ("---\nname: ab\n---\n!! ?? 12", "does not contain usable keywords"),
])
def test_unusable_skill_stops_the_run(registry, tmp_path, text, message):
    path = tmp_path / "SKILL.md"
    if text is not None:
        path.write_text(text)
    spec = GraderSpec("trigger", "trig", config={"skill_path": str(path), "mode": "positive"}, where="eval.yaml")
    with pytest.raises(WazaError) as exc:
        registry.get("grader", "trigger")(spec, None)
    assert str(exc.value).startswith("eval.yaml: grader 'trig': ") and message in str(exc.value)


def test_no_frontmatter_uses_the_whole_file_as_body(build, tmp_path):
    (tmp_path / "SKILL.md").write_text("Rotate documents.\n")
    g = build("trigger", {"skill_path": str(tmp_path / "SKILL.md"), "mode": "positive"})
    assert g.keywords == {"rotate", "documents"} and g.phrases == []


def test_config_errors(problems):
    assert problems("trigger", {"skill_path": "x"}) == ["missing required key 'mode'"]
    assert problems("trigger", {"skill_path": "x", "mode": "maybe"}) == [
        "invalid mode 'maybe' (must be positive or negative)"]
    assert problems("trigger", {"skill_path": "x", "mode": "positive", "threshold": 1.5}) == [
        "threshold: 1.5 is greater than the maximum of 1"]
    assert problems("trigger", {"skill_path": "  ", "mode": "positive"}) == ["skill_path must not be blank"]


def test_needs_no_workspace(registry):
    assert registry.get("grader", "trigger").needs_workspace is False
