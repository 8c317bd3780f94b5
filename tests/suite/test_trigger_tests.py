"""trigger_tests.yaml next to eval.yaml: checked when the suite loads."""

from __future__ import annotations

import pytest

from tests.suite.conftest import LEGACY

GOOD = """\
skill: demo
should_trigger_prompts:
  - prompt: explain this code
    reason: direct ask
    confidence: high
  - {prompt: what does it do, confidence: medium}
should_not_trigger_prompts:
  - prompt: book a flight
"""


def test_trigger_tests_load(load):
    suite = load(LEGACY, files={"trigger_tests.yaml": GOOD})
    t = suite.trigger_tests
    assert t["skill"] == "demo" and len(t["should_trigger_prompts"]) == 2
    assert t["should_not_trigger_prompts"] == [{"prompt": "book a flight"}]


def test_no_file_no_trigger_tests(load):
    assert load(LEGACY).trigger_tests is None


@pytest.mark.parametrize("text,message", [
    ("should_trigger_prompts: [{prompt: x}]\n", "missing required key 'skill'"),
    ("skill: demo\n", "trigger tests must define at least one prompt"),
    ("skill: demo\nshould_trigger_prompts: [{prompt: ''}]\n", "should be non-empty"),
    ("skill: demo\nshould_trigger_prompts: [{prompt: x, confidence: low}]\n", "'low' is not one of"),
    ("skill: demo\nshould_trigger_prompts: {prompt: x}\n", "expected list or null, got mapping"),
    ("- a list\n", "expected a mapping at the top level"),
])
def test_bad_trigger_tests(problems, text, message):
    out = problems(LEGACY, files={"trigger_tests.yaml": text})
    assert any(message in p and "trigger_tests.yaml" in p for p in out), out


def test_camel_case_keys_are_a_near_miss_error(problems):
    """waza (Go) ignores unknown keys here, so a camelCase file silently has no prompt at all; a
    near miss of a known key is an error here, naming the key it misspells (docs/suite-format.md)."""
    out = problems(LEGACY, files={"trigger_tests.yaml": "skill: demo\nshouldTriggerPrompts: [{prompt: x}]\n"})
    assert "trigger_tests.yaml:2:1: unknown key 'shouldTriggerPrompts' (did you mean 'should_trigger_prompts'?)" \
        in out[0]


def test_unknown_keys_warn(load):
    suite = load(LEGACY, files={"trigger_tests.yaml": GOOD + "notes: hi\n"})
    assert any("trigger_tests.yaml:9:1: warning: unknown key 'notes'" in w for w in suite.warnings)
