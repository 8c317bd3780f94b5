"""Triggers, A/B runs, multi-model runs, group_by and the 1.5 summary statistics, end to end."""

from __future__ import annotations

import json

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.run import finish, triggers
from waza_core.run.multimodel import per_model_path, sanitize

PLUGIN = ("-p", "tests.suite.skill_agent")

EVAL = """\
name: feats
skill: demo
config:
  executor: {executor}
  model: m1
  trials_per_task: {trials}
  skill_directories: [skills]
{extra}graders:
  - {{type: text, name: uses-skills, config: {{regex_match: ["skills=/.+"]}}}}
metrics:
  - {{name: trigger_accuracy, weight: 1, threshold: {threshold}}}
tasks: ["tasks/*.yaml"]
"""

TRIGGERS = """\
skill: demo
should_trigger_prompts:
  - {prompt: greet the team, confidence: high}
  - {prompt: please greet Bob, confidence: medium}
  - {prompt: write a haiku}
should_not_trigger_prompts:
  - {prompt: greet nobody}
  - {prompt: boom goes the prompt}
"""


def make(make_suite, executor="skill-echo", trials=1, threshold=0.5, extra="", tasks=None, triggers_yaml=TRIGGERS):
    files = {"skills/demo/SKILL.md": "---\nname: demo\n---\n"}
    if triggers_yaml is not None:
        files["trigger_tests.yaml"] = triggers_yaml
    return make_suite(EVAL.format(executor=executor, trials=trials, threshold=threshold, extra=extra),
                      tasks or {"tasks/a.yaml": "id: a\ntags: [x, y]\ninputs: {prompt: greet a}\n",
                                "tasks/b.yaml": "id: b\ntags: [y]\ninputs: {prompt: b}\n"}, files)


def run(waza, path, *args):
    out = path.parent / "results.json"
    res = waza("run", str(path), "-q", "-o", str(out), *PLUGIN, *args)
    return res, (json.loads(out.read_text()) if out.exists() else None)


# -- trigger tests ------------------------------------------------------------------------------

def test_trigger_tests_through_a_real_executor(waza, make_suite):
    res, doc = run(waza, make(make_suite, threshold=0.5))
    assert res.returncode == 1, res.stderr  # accuracy 0.3333 is below the threshold
    got = [(r["prompt"], r["should_trigger"], r["did_trigger"], "error_msg" in r) for r in doc["trigger_results"]]
    assert got == [("greet the team", True, True, False), ("please greet Bob", True, True, False),
                   ("write a haiku", True, False, False), ("greet nobody", False, True, False),
                   ("boom goes the prompt", False, True, True)]  # an error counts as wrong
    # weights: high 1, medium 0.5 -> TP 1.5, FN 1, FP 2 (one of them the error), TN 0
    assert doc["trigger_metrics"] == {"true_positives": 2, "false_positives": 2, "true_negatives": 0,
                                      "false_negatives": 1, "errors": 1, "precision": 0.4286,
                                      "recall": 0.6, "f1": 0.5, "accuracy": 0.3333}
    assert doc["metrics"]["trigger_accuracy"] == {"identifier": "trigger_accuracy", "value": 0.3333,
                                                  "threshold": 0.5, "passed": False, "weight": 1.0}


def test_trigger_accuracy_below_threshold_is_exit_1(waza, make_suite):
    res, doc = run(waza, make(make_suite, threshold=0.5))
    assert doc["summary"]["failed"] == 0 and res.returncode == 1
    res, doc = run(waza, make(make_suite, threshold=0.3))
    assert res.returncode == 0 and doc["metrics"]["trigger_accuracy"]["passed"] is True


def test_trigger_tests_are_perfect_under_mock(waza, make_suite):
    res, doc = run(waza, make(make_suite, executor="mock", threshold=0.99), "--executor", "mock")
    assert doc["trigger_metrics"]["accuracy"] == 1.0
    assert all(r["did_trigger"] == r["should_trigger"] for r in doc["trigger_results"])


def test_trigger_metrics_formulas():
    assert triggers.trigger_metrics([]) is None
    m = triggers.trigger_metrics([{"prompt": "p", "should_trigger": True, "did_trigger": False,
                                   "confidence": "medium"}])
    assert m == {"true_positives": 0, "false_positives": 0, "true_negatives": 0, "false_negatives": 1,
                 "precision": 0.0, "recall": 0.0, "f1": 0.0, "accuracy": 0.0}
    assert triggers._round4(0.00005) == 0.0001 and triggers._round_half_away(0.5) == 1


# -- A/B runs -----------------------------------------------------------------------------------

def test_baseline_run_with_and_without_skills(waza, make_suite):
    res, doc = run(waza, make(make_suite, triggers_yaml=None), "--baseline")
    # with skills the output names the folder, without it does not: the skills help
    assert res.returncode == 0, res.stderr
    assert doc["is_baseline"] is True
    base = doc["baseline_outcome"]
    assert base["summary"]["success_rate"] == 0.0 and doc["summary"]["success_rate"] == 1.0
    assert doc["tasks"][0]["skill_impact"] == {"pass_rate_with_skills": 1.0, "pass_rate_baseline": 0.0,
                                               "delta": 1.0, "percent_change": 10000.0}
    assert all(r["final_output"].startswith("skills= ") for t in base["tasks"] for r in t["runs"])


def test_baseline_exit_1_when_skills_do_not_help(waza, make_suite):
    path = make(make_suite, triggers_yaml=None, extra="baseline: true\n").parent
    (path / "eval.yaml").write_text((path / "eval.yaml").read_text().replace('["skills=/.+"]', '["answer"]'))
    res, doc = run(waza, path / "eval.yaml")
    assert res.returncode == 1 and doc["summary"]["succeeded"] == 2  # every task passed, yet no gain
    assert doc["baseline_outcome"]["summary"]["succeeded"] == 2


def test_baseline_without_skills_warns_and_runs_once(waza, make_suite):
    path = make(make_suite, triggers_yaml=None).parent
    text = (path / "eval.yaml").read_text().replace("  skill_directories: [skills]\n", "")
    (path / "eval.yaml").write_text(text)
    res, doc = run(waza, path / "eval.yaml", "--baseline")
    assert b"baseline requested but the eval has no skills configured" in res.stderr
    assert "is_baseline" not in doc


# -- multi-model --------------------------------------------------------------------------------

def test_one_results_file_per_model(waza, make_suite):
    path = make(make_suite, triggers_yaml=None)
    res, _ = run(waza, path, "--model", "gpt/4o", "-m", "claude sonnet:4")
    assert res.returncode == 0, res.stderr
    a = json.loads((path.parent / "results_gpt-4o.json").read_text())
    b = json.loads((path.parent / "results_claude-sonnet-4.json").read_text())
    assert (a["config"]["model_id"], b["config"]["model_id"]) == ("gpt/4o", "claude sonnet:4")
    assert a["models"] == ["gpt/4o", "claude sonnet:4"]
    assert not (path.parent / "results.json").exists()


def test_config_models_and_the_comparison_table(waza, make_suite):
    path = make(make_suite, triggers_yaml=None, extra="").parent
    text = (path / "eval.yaml").read_text().replace("  model: m1\n", "  model: m1\n  models: [m1, m2]\n")
    (path / "eval.yaml").write_text(text)
    res = waza("run", str(path), "-o", str(path / "r.json"), *PLUGIN)
    assert res.returncode == 0, res.stderr
    assert b"MODEL COMPARISON" in res.stdout and b"m2" in res.stdout
    assert (path / "r_m1.json").exists() and (path / "r_m2.json").exists()


def test_a_failing_model_does_not_stop_the_others(waza, make_suite):
    path = make(make_suite, threshold=0.99)
    res, _ = run(waza, path, "-m", "a", "-m", "b")
    assert res.returncode == 1  # trigger accuracy fails for both models
    for model in ("a", "b"):
        doc = json.loads((path.parent / f"results_{model}.json").read_text())
        assert doc["metrics"]["trigger_accuracy"]["passed"] is False


def test_duplicate_models_are_refused(waza, make_suite):
    res, _ = run(waza, make(make_suite, triggers_yaml=None), "-m", "a", "-m", "a")
    assert res.returncode == 2 and b"duplicate --model value: 'a'" in res.stderr


@pytest.mark.parametrize("name,safe", [("gpt-4o", "gpt-4o"), ("a/b\\c:d e", "a-b-c-d-e")])
def test_sanitize(name, safe, tmp_path):
    assert sanitize(name) == safe
    assert per_model_path(tmp_path / "out.json", name) == tmp_path / f"out_{safe}.json"


# -- group_by, golden, statistics ---------------------------------------------------------------

@pytest.mark.parametrize("group_by,groups,task_groups", [
    ("model", [{"name": "m1", "passed": 2, "total": 2, "avg_score": 1.0}], ["m1", "m1"]),
    ("tags", [{"name": "x", "passed": 1, "total": 1, "avg_score": 1.0},
              {"name": "y", "passed": 2, "total": 2, "avg_score": 1.0}], ["x,y", "y"]),
])
def test_group_by(waza, make_suite, group_by, groups, task_groups):
    path = make(make_suite, triggers_yaml=None, extra=f"group_by: {group_by}\n").parent
    text = (path / "eval.yaml").read_text().replace(f"group_by: {group_by}\n", "")
    text = text.replace("  skill_directories: [skills]\n", f"  skill_directories: [skills]\n  group_by: {group_by}\n")
    (path / "eval.yaml").write_text(text)
    res, doc = run(waza, path / "eval.yaml")
    assert res.returncode == 0, res.stderr
    assert doc["summary"]["groups"] == groups
    assert [t["group"] for t in doc["tasks"]] == task_groups


def test_golden_is_written_only_when_true(waza, make_suite):
    tasks = {"tasks/a.yaml": "id: a\ngolden: true\ninputs: {prompt: a}\n",
             "tasks/b.yaml": "id: b\ngolden: false\ninputs: {prompt: b}\n"}
    res, doc = run(waza, make(make_suite, triggers_yaml=None, tasks=tasks))
    assert [t.get("golden") for t in doc["tasks"]] == [True, None]


def test_statistics_with_several_trials(waza, make_suite):
    res, doc = run(waza, make(make_suite, triggers_yaml=None, trials=3))
    st = doc["summary"]["statistics"]
    assert st["pass_hat_k"] == [1.0, 1.0, 1.0]
    assert st["success_rate_ci"]["mean"] == 1.0 and st["success_rate_ci"]["upper"] == 1.0
    assert st["bootstrap_ci"]["num_bootstraps"] == 10000 and "is_significant" not in st
    res, doc = run(waza, make(make_suite, triggers_yaml=None, trials=1))
    assert "statistics" not in doc["summary"]


def test_pass_hat_k_matches_waza_docs():
    """The example of waza's statistical-fields page: tasks passing 5, 4 and 2 of 5 trials."""
    curve = finish.pass_hat_k([(5, 5), (4, 5), (2, 5)])
    assert [round(x, 4) for x in curve] == [0.7333, 0.5667, 0.4667, 0.4, 0.3333]
    assert finish.pass_hat_k([(1, 2), (3, 3)]) == [0.75, 0.5]  # runs to the fewest trials
    assert finish.pass_hat_k([]) == []


def test_keys_the_executor_does_not_use_are_announced(waza, make_suite):
    tasks = {"tasks/a.yaml": "id: a\ninstruction_files: [AGENTS.md]\nfirst_event_timeout_seconds: 5\n"
                             "inputs:\n  prompt: greet\n  responder: {instructions: be brief, max_followups: 1}\n"}
    res, doc = run(waza, make(make_suite, triggers_yaml=None, tasks=tasks))
    assert res.returncode == 0, res.stderr
    for key in (b"instruction_files (task 'a')", b"inputs.responder (task 'a')",
                b"first_event_timeout_seconds (task 'a')"):
        assert b"waza: warning: " + key + b" is not used by executor 'skill-echo'" in res.stderr
    quiet = waza("run", str(make(make_suite, executor="mock", triggers_yaml=None, tasks=tasks)), "-q",
                 "--executor", "mock")
    assert b"is not used by executor" not in quiet.stderr  # the mock runs no agent
