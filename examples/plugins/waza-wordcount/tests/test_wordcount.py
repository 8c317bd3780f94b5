"""Tests of the word_count grader, written with ``waza_core.testing``.

Run them from this folder: ``python -m pytest tests`` (the plugin need not be
installed: the class is registered for each call).
"""

import pytest
from waza_wordcount import WordCountGrader

from waza_core import SuiteError, testing


def test_counts_words_within_bounds():
    result = testing.grade(WordCountGrader, "one two three", config={"min": 2, "max": 5})
    assert result.passed is True
    assert result.score == 1.0
    assert result.feedback == "3 words (wanted 2..5)"
    assert result.details == {"words": 3}


def test_too_many_words_fail():
    result = testing.grade(WordCountGrader, "a b c d e f", config={"max": 3})
    assert (result.passed, result.score) == (False, 0.0)
    assert result.feedback == "6 words (wanted 0..3)"


def test_config_mistakes_are_load_errors():
    assert testing.config_problems(WordCountGrader, {"min": 9, "max": 2}) == [
        "config.min: min (9) is greater than max (2)"]
    assert "unknown key 'minimum'" in testing.config_problems(WordCountGrader, {"minimum": 3})[0]
    with pytest.raises(SuiteError):
        testing.grade(WordCountGrader, "x", config={})  # minProperties: 1


def test_a_suite_with_a_scripted_agent(tmp_path):
    agent = testing.scripted_executor({
        "brief": "Hello there, friend.",
        "rambling": " ".join(["word"] * 50),
    })
    run = testing.run_suite(
        {"graders": [{"type": "word_count", "name": "concise", "config": {"min": 2, "max": 10}}]},
        tasks=[{"id": "brief", "inputs": {"prompt": "Say hello briefly."}},
               {"id": "rambling", "inputs": {"prompt": "Say hello at length."}}],
        executor=agent, plugins=[WordCountGrader], folder=tmp_path)
    assert run.exit_code == 1  # one task failed
    assert run.validation("brief", "concise")["passed"] is True
    assert run.validation("rambling", "concise")["feedback"] == "50 words (wanted 2..10)"


def test_the_example_suite_passes(tmp_path):
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "example"
    run = testing.run_suite(example, plugins=[WordCountGrader], folder=tmp_path)
    assert run.exit_code == 0, run.stderr
    assert run.validation("short-answer", "concise")["type"] == "word_count"
