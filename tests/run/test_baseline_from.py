"""A/B runs end to end: the paired test of the skills' impact (``--baseline``) and
``--baseline-from``, which compares against a stored results file instead of running the
without-skills pass again. Real ``waza run`` subprocesses, real results files."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import REPO
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.suite.schema import plain_validator

PLUGIN = ("-p", "tests.suite.skill_agent")  # skill-echo: names its skill folders in its output

EVAL = """\
name: feats
skill: demo
config:
  executor: skill-echo
  model: m1
  trials_per_task: 2
  skill_directories: [skills]
graders:
  - {type: text, name: uses-skills, config: {regex_match: ["skills=/.+"]}}
tasks: ["tasks/*.yaml"]
"""

TASKS = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: greet {i}}}\n" for i in range(1, 7)}


@pytest.fixture
def suite(make_suite):
    return make_suite(EVAL, TASKS, {"skills/demo/SKILL.md": "---\nname: demo\n---\n"})


def run(waza, suite, out, *args):
    res = waza("run", str(suite), "-o", str(out), *PLUGIN, *args)
    return res, (json.loads(out.read_text()) if out.exists() else None)


@pytest.fixture
def stored_ab(waza, suite, tmp_path):
    """A full A/B run (both passes) stored as a results file."""
    res, doc = run(waza, suite, tmp_path / "ab.json", "-q", "--baseline")
    assert res.returncode == 0, res.stderr
    return tmp_path / "ab.json", doc


def test_an_ab_run_carries_the_paired_test_and_prints_its_line(waza, suite, tmp_path):
    res, doc = run(waza, suite, tmp_path / "r.json", "--baseline")
    assert res.returncode == 0, res.stderr
    sig = doc["skill_impact_significance"]
    # six tasks, every one up from 0 to 1: the only sign pattern as high of 2^6 -> p = 1/64
    assert sig["test"] == "paired_sign_flip_permutation" and sig["tasks_compared"] == 6
    assert sig["direction"] == "improvement" and sig["verdict"] == "significant improvement"
    assert sig["p_value_improvement"] == pytest.approx(1 / 64)
    assert (sig["ci_low"], sig["ci_high"]) == (1.0, 1.0)
    out = res.stdout.decode()
    assert "SKILL IMPACT" in out
    assert ("Significance: significant improvement: mean task change +100.0 pp (95% CI +100.0 to +100.0"
            in out), out


def test_baseline_from_an_ab_run_reuses_its_without_skills_pass(waza, suite, tmp_path, stored_ab):
    path, ab = stored_ab
    res, doc = run(waza, suite, tmp_path / "again.json", "--baseline-from", str(path))
    assert res.returncode == 0, res.stderr
    assert res.stderr.decode().count("waza: running") == 1  # one pass, not two
    assert doc["is_baseline"] is True
    assert doc["baseline_outcome"]["eval_id"] == ab["baseline_outcome"]["eval_id"]  # the stored pass itself
    src = doc["baseline_from"]
    assert src["file"] == str(path) and src["part"] == "baseline_outcome"
    assert src["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() and src["eval_id"] == ab["eval_id"]
    assert (src["tasks_compared"], src["tasks_only_in_run"], src["tasks_only_in_file"]) == (6, 0, 0)
    assert src["warnings"] == []
    assert [t["skill_impact"] for t in doc["tasks"]] == [t["skill_impact"] for t in ab["tasks"]]
    assert not list(plain_validator("results").iter_errors(doc))
    assert not list(plain_validator("results").iter_errors(ab))
    for key in ("verdict", "p_value_improvement", "ci_low", "ci_high", "tasks_compared", "mean_task_delta"):
        assert doc["skill_impact_significance"][key] == ab["skill_impact_significance"][key]
    out = res.stdout.decode()
    assert f"baseline from:  {path} (its without-skills pass" in out and "6 task(s) compared" in out


def test_a_plain_results_file_is_the_baseline_side_and_no_gain_is_exit_1(waza, suite, tmp_path):
    res, plain = run(waza, suite, tmp_path / "plain.json", "-q")  # with skills: every task passes
    assert res.returncode == 0 and "is_baseline" not in plain
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(tmp_path / "plain.json"))
    assert res.returncode == 1, res.stderr  # waza's rule: the skills did not raise the success rate
    assert doc["baseline_from"]["part"] == "document"
    assert doc["baseline_outcome"]["eval_id"] == plain["eval_id"]
    sig = doc["skill_impact_significance"]
    assert sig["verdict"] == "within noise" and sig["tasks_with_evidence"] == 0


def test_tasks_in_one_side_only_are_no_evidence(waza, suite, tmp_path, stored_ab):
    path, _ = stored_ab
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(path), "--task", "t1",
                   "--task", "t2")
    assert res.returncode == 0, res.stderr
    src = doc["baseline_from"]
    assert (src["tasks_compared"], src["tasks_only_in_run"], src["tasks_only_in_file"]) == (2, 0, 4)
    assert (src["compared_success_rate"], src["compared_baseline_success_rate"]) == (1.0, 0.0)
    assert doc["skill_impact_significance"]["tasks_compared"] == 2
    assert doc["skill_impact_significance"]["tasks_only_in_one_file"] == 4
    assert "comparing 2 task(s); 0 only in this run and 4 only in the file are no evidence" in res.stderr.decode()


def test_the_exit_code_compares_only_the_tasks_both_sides_ran(waza, suite, tmp_path):
    # the stored side ran t1 only, with a grader every run passes: t1 is at 100 % there
    text = suite.read_text()
    suite.write_text(text.replace('["skills=/.+"]', '["answer"]'))
    res, _ = run(waza, suite, tmp_path / "part.json", "-q", "--task", "t1")
    assert res.returncode == 0, res.stderr
    suite.write_text(text)
    # this run: all six pass (success rate 100 % over all tasks, above the stored 100 %? no:
    # over the one compared task both are 100 %, so the skills raised nothing)
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(tmp_path / "part.json"))
    assert doc["summary"]["success_rate"] == 1.0
    assert res.returncode == 1, res.stderr
    assert doc["baseline_from"]["tasks_compared"] == 1


def test_other_model_and_trial_count_are_warnings_kept_in_the_file(waza, suite, tmp_path, stored_ab):
    path, _ = stored_ab
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(path), "-m", "m2",
                   "--trials", "3")
    assert res.returncode == 0, res.stderr
    err = res.stderr.decode()
    assert "its model is 'm1', this run's is 'm2': the difference is then not the skills' alone" in err
    assert "its trials per task is 2, this run's is 3" in err
    assert len(doc["baseline_from"]["warnings"]) == 2
    assert doc["skill_impact_significance"]["verdict"] == "significant improvement"


def test_graders_that_differ_are_a_warning(waza, suite, tmp_path, stored_ab):
    path, _ = stored_ab
    suite.write_text(suite.read_text().replace("name: uses-skills", "name: renamed"))
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(path))
    assert res.returncode == 0, res.stderr
    assert "6 compared task(s) were graded by other graders there (first: 't1')" in res.stderr.decode()


@pytest.mark.parametrize("case, message", [
    ("other-suite", "it is a run of suite 'feats', not of 'other'; a skill-impact comparison across suites "
                    "means nothing"),
    ("no-common-task", "no task in common with this run (this run: 't2'; the file: 't1')"),
    ("not-graded", "no run of the tasks this run runs was graded there (was it run with --skip-graders?"),
    ("not-json", "not valid JSON"),
    ("missing", "cannot read results file"),
    ("skip-graders", "--baseline-from compares graded runs, and --skip-graders grades none"),
])
def test_a_meaningless_comparison_is_refused_before_anything_runs(waza, suite, tmp_path, case, message):
    stored = tmp_path / "stored.json"
    args: tuple[str, ...] = ()
    if case == "other-suite":
        run(waza, suite, stored, "-q")
        suite.write_text(suite.read_text().replace("name: feats", "name: other"))
    elif case == "no-common-task":
        run(waza, suite, stored, "-q", "--task", "t1")
        args = ("--task", "t2")
    elif case == "not-graded":
        run(waza, suite, stored, "-q", "--skip-graders")
    elif case == "not-json":
        stored.write_text("{ not json")
    elif case == "skip-graders":
        run(waza, suite, stored, "-q")
        args = ("--skip-graders",)
    assert case == "missing" or stored.exists()
    out = tmp_path / "r.json"
    res, doc = run(waza, suite, out, "--baseline-from", str(stored), *args)
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert message in err and "Traceback" not in err
    assert "waza: running" not in err and doc is None  # nothing ran, nothing written


def test_the_example_runs_as_its_readme_says(waza, tmp_path):
    example = REPO / "examples" / "baseline-from"
    res = waza("run", str(example), "--baseline-from", str(example / "baseline.json"), "-o", str(tmp_path / "n.json"))
    out, err = res.stdout.decode(), res.stderr.decode()
    assert res.returncode == 0, err
    assert err.count("waza: running") == 1 and "6 task(s) compared" in out
    assert "Significance: significant improvement: mean task change +100.0 pp (95% CI +100.0 to +100.0" in out
    assert "p=0.0156" in out
    res = waza("run", str(REPO / "examples" / "ab-baseline"), "--baseline-from", str(example / "baseline.json"),
               "-o", str(tmp_path / "x.json"))
    assert res.returncode == 2
    assert "it is a run of suite 'baseline-from-example', not of 'ab-baseline-example'" in res.stderr.decode()


def test_each_model_of_a_multi_model_run_is_compared_with_the_stored_side(waza, suite, tmp_path, stored_ab):
    path, _ = stored_ab
    res, _ = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(path), "-m", "m1", "-m", "m2")
    assert res.returncode == 0, res.stderr
    first, second = (json.loads((tmp_path / f"r_{m}.json").read_text()) for m in ("m1", "m2"))
    assert first["baseline_from"]["warnings"] == []  # the stored side ran m1
    assert second["baseline_from"]["warnings"] == [
        f"--baseline-from {path}: its model is 'm1', this run's is 'm2': the difference is then not the skills' alone"]
    assert first["skill_impact_significance"]["verdict"] == second["skill_impact_significance"]["verdict"] == \
        "significant improvement"


def test_a_hand_made_file_in_waza_go_shape_is_a_baseline(waza, suite, tmp_path):
    """No schemaVersion, no waza_version, no summary, statuses only: what waza (Go) files and
    hand-made ones look like; it is read the tolerant way gate and compare read it."""
    stored = tmp_path / "go.json"
    stored.write_text(json.dumps({"eval_name": "feats", "config": {"runs_per_test": 2, "model_id": "m1"}, "tasks": [
        {"test_id": f"t{i}", "display_name": f"t{i}", "status": "failed",
         "runs": [{"run_number": k, "status": "failed", "validations": {"uses-skills": {"passed": False}}}
                  for k in (1, 2)]} for i in range(1, 7)]}))
    res, doc = run(waza, suite, tmp_path / "r.json", "-q", "--baseline-from", str(stored))
    assert res.returncode == 0, res.stderr
    assert doc["baseline_from"]["part"] == "document" and doc["baseline_from"]["tasks_compared"] == 6
    assert doc["baseline_outcome"]["summary"]["success_rate"] == 0.0  # computed from its tasks
    assert doc["skill_impact_significance"]["verdict"] == "significant improvement"


def test_no_task_in_common_is_refused_before_the_audit_runs(waza, suite, tmp_path):
    run(waza, suite, tmp_path / "part.json", "-q", "--task", "t1")
    res, doc = run(waza, suite, tmp_path / "r.json", "--audit", "--task", "t2",
                   "--baseline-from", str(tmp_path / "part.json"))
    err = res.stderr.decode()
    assert res.returncode == 2 and "no task in common with this run" in err
    assert "--audit: running" not in err and doc is None
