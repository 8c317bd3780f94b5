"""schemaVersion: waza's policy for eval suites (versions.py and its use by the loader)."""

from __future__ import annotations

import pytest

from tests.suite.conftest import LEGACY, SCENARIO
from waza_core.suite import versions


@pytest.mark.parametrize("declared", [None, "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.99"])
def test_every_1x_minor_is_read(declared):
    v = versions.check_eval(declared)
    assert v.effective == (declared or versions.CURRENT_EVAL) and not v.scenario


@pytest.mark.parametrize("declared,why", [
    ("1", "expected MAJOR.MINOR"),
    ("1.2.3", "expected MAJOR.MINOR"),
    ("1.", "expected MAJOR.MINOR"),
    ("a.1", "major version must be a non-negative integer"),
    ("1.-1", "minor version must be a non-negative integer"),
    ("1.x", "minor version must be a non-negative integer"),
    ("１.0", "major version must be a non-negative integer"),  # a full-width digit is not ASCII
])
def test_malformed_versions(declared, why):
    with pytest.raises(versions.VersionError, match=why):
        versions.check_eval(declared)


def test_another_major_points_at_migrate():
    with pytest.raises(versions.VersionError) as exc:
        versions.check_eval("3.0")
    assert "major 3" in str(exc.value) and 'run "waza migrate <file>"' in str(exc.value)


def test_2_0_without_scenario_says_what_2_0_is_for():
    with pytest.raises(versions.VersionError, match="is for scenario suites: add a scenario: key"):
        versions.check_eval("2.0")


@pytest.mark.parametrize("declared", [None, "1.5", "2.1", "3.0"])
def test_scenario_needs_exactly_2_0(declared):
    with pytest.raises(versions.VersionError, match='scenario requires explicit schemaVersion "2.0"'):
        versions.check_eval(declared, "release-notes")


def test_blank_scenario():
    with pytest.raises(versions.VersionError, match="non-empty workflow identity"):
        versions.check_eval("2.0", "  ")


@pytest.mark.parametrize("declared,key,ok", [
    ("1.0", "mcp_mocks", False), ("1.1", "mcp_mocks", True),
    ("1.1", "adversarial", False), ("1.2", "adversarial", True),
    ("1.2", "command_mocks", False), ("1.3", "command_mocks", True),
    (None, "command_mocks", True),  # no version = the current one
    ("1.10", "command_mocks", True),  # 1.10 is newer than 1.3, not 1.1
])
def test_feature_gates(declared, key, ok):
    assert versions.check_eval(declared).allows(key) is ok


def test_scenario_passes_every_gate():
    v = versions.check_eval("2.0", "x")
    assert all(v.allows(k) for k in versions.EVAL_FEATURES)


@pytest.mark.parametrize("declared", [None, "", "1.0", "1.4", "1.5", "1.7"])
def test_results_versions_read(declared):
    assert versions.check_results(declared) == (declared or versions.CURRENT_RESULTS)


@pytest.mark.parametrize("declared", ["2.0", "0.9", "x", 1.5])
def test_results_versions_refused(declared):
    with pytest.raises(versions.VersionError):
        versions.check_results(declared)


# -- through the loader ----------------------------------------------------------------------------

def test_missing_version_is_current(load):
    assert load(LEGACY).schema_version == versions.CURRENT_EVAL


def test_unquoted_version_is_read_as_written(load):
    """YAML reads 1.10 as the number 1.1; waza (Go) reads the text "1.10". So do we."""
    suite = load("schemaVersion: 1.10\n" + LEGACY)
    assert suite.schema_version == "1.10"


def test_future_minor_loads(load):
    assert load('schemaVersion: "1.99"\n' + LEGACY).schema_version == "1.99"


def test_other_major_is_one_problem_at_the_key(problems):
    out = problems('schemaVersion: "3.0"\n' + LEGACY + "whatever: 1\n")
    assert len(out) == 1, out  # the rest of a 3.0 file is not ours to judge
    assert out[0].endswith('eval.yaml:1:16: schemaVersion \'3.0\' (major 3) is not supported: this waza reads '
                           'eval schema major 1 (current 1.5) and scenario suites (2.0); run "waza migrate '
                           '<file>" to migrate the file')


def test_malformed_version_position(problems):
    out = problems('schemaVersion: "1.2.3"\n' + LEGACY)
    assert "eval.yaml:1:16: invalid schemaVersion '1.2.3': expected MAJOR.MINOR" in out[0]


def test_version_of_the_wrong_type(problems):
    out = problems("schemaVersion: [1, 5]\n" + LEGACY)
    assert "eval.yaml:1:16: schemaVersion: expected string or number or null, got list" in out[0]


def test_adversarial_below_its_version(problems, load):
    adv = "adversarial:\n  packs: [prompt-injection]\n"
    out = problems('schemaVersion: "1.1"\n' + LEGACY + adv)
    assert any("adversarial requires schemaVersion 1.2 or newer (this file says '1.1')" in p for p in out)
    suite = load('schemaVersion: "1.2"\n' + LEGACY + adv)
    assert suite.adversarial == {"packs": ["prompt-injection"]}


def test_adversarial_packs_are_checked(problems):
    out = problems(LEGACY + "adversarial:\n  packs: [a, ' a ', '  ']\n  on_unsafe_outcome: block\n")
    assert any("adversarial.packs[1] 'a' is duplicated" in p for p in out)
    assert any("adversarial.packs[2] is empty" in p for p in out)
    assert any("adversarial.on_unsafe_outcome" in p for p in out)


def test_scenario_version_through_the_loader(problems, load):
    assert load(SCENARIO).scenario == "release-notes"
    out = problems(SCENARIO.replace('schemaVersion: "2.0"\n', ""))
    assert "eval.yaml:1:11: scenario requires explicit schemaVersion \"2.0\" (found no schemaVersion)" in out[0]
    out = problems('schemaVersion: "2.0"\n' + LEGACY)
    assert "is for scenario suites: add a scenario: key" in out[0]


def test_null_scenario_is_absent(load):
    """waza (Go) reads ``scenario:`` with no value as no scenario at all."""
    suite = load("scenario:\n" + LEGACY)
    assert suite.scenario is None and suite.schema_version == "1.5"
