"""Scenario suites (schemaVersion 2.0): scenario instead of skill, no ambient skills."""

from __future__ import annotations

import pytest

from tests.suite.conftest import LEGACY, SCENARIO, TASK


def test_scenario_suite_needs_no_skill(load):
    suite = load(SCENARIO)
    assert suite.scenario == "release-notes" and suite.skill == "" and suite.schema_version == "2.0"
    assert not suite.warnings


def test_legacy_suite_without_skill_warns(load):
    suite = load(LEGACY.replace("skill: demo\n", ""))
    assert suite.skill == ""
    assert any("no skill: key" in w for w in suite.warnings)


def test_scenario_required_skills_need_skill_directories(problems, load):
    bad = SCENARIO.replace("  executor: mock\n", "  executor: mock\n  required_skills: [notes]\n")
    out = problems(bad)
    assert "scenario required_skills requires explicit skill_directories" in out[0]
    # a skill: or skill_directories makes it fine (the runner then checks the folders)
    assert load(bad + "skill: notes\n").config.required_skills == ("notes",)


@pytest.mark.parametrize("eval_extra,task_extra,disabled", [
    ("", "", True),  # a pure scenario: no ambient skill discovery
    ("skill: notes\n", "", False),  # explicit skill context opts back in
    ("", "skill_directories: [skills]\n", False),
    ("skill: notes\n", "skill_directories: []\n", True),  # an explicit empty list disables
])
def test_scenario_skill_discovery(load, eval_extra, task_extra, disabled):
    suite = load(SCENARIO + eval_extra, tasks={"tasks/t1.yaml": TASK + task_extra})
    assert suite.skills_disabled_for(suite.tasks[0]) is disabled


@pytest.mark.parametrize("config_extra,disabled", [
    ("", False),  # legacy suites keep ambient discovery
    ("  disabled_skills: ['*']\n", True),
    ("  skill_directories: [none]\n", True),
])
def test_legacy_skill_discovery(load, config_extra, disabled):
    suite = load(LEGACY.replace("  executor: mock\n", "  executor: mock\n" + config_extra),
                 tasks={"tasks/t1.yaml": TASK + "skill_directories: []\n"})
    assert suite.skills_disabled_for(suite.tasks[0]) is disabled


def test_none_is_not_resolved_as_a_folder(load):
    suite = load(LEGACY.replace("  executor: mock\n", "  executor: mock\n  skill_directories: [none, sk]\n"))
    assert suite.config.skill_directories[0] == "none"
    assert suite.config.skill_directories[1].endswith("/suite/sk")


@pytest.mark.parametrize("key", ["reasoning_effort", "judge_reasoning_effort"])
def test_reasoning_effort_needs_copilot_sdk(problems, load, key):
    out = problems(SCENARIO.replace("  executor: mock\n", f"  executor: mock\n  {key}: high\n"))
    assert f"config.{key} requires executor copilot-sdk (config.executor is 'mock')" in out[0]
    bad = problems(SCENARIO.replace("  executor: mock\n", f"  executor: copilot-sdk\n  {key}: extreme\n"))
    assert f"config.{key}" in bad[0]


def test_first_event_timeout(load, problems):
    suite = load(SCENARIO.replace("  executor: mock\n", "  executor: mock\n  first_event_timeout_seconds: 20\n"),
                 tasks={"tasks/t1.yaml": TASK + "first_event_timeout_seconds: 0\n"})
    assert suite.config.first_event_timeout_seconds == 20 and suite.tasks[0].first_event_timeout_seconds == 0
    out = problems(SCENARIO.replace("  executor: mock\n", "  executor: mock\n  first_event_timeout_seconds: -1\n"))
    assert "config.first_event_timeout_seconds" in out[0]
