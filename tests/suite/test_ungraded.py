"""Nothing checked is never a pass: a task that nothing grades does not load
(waza_core/suite/ungraded.py), unless the suite says ``allow_ungraded: true``."""

from __future__ import annotations

import json

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

EVAL = """\
name: demo
skill: demo
config:
  executor: mock
tasks: ["tasks/*.yaml"]
"""
BARE = "id: t1\ninputs:\n  prompt: hello\n"
GRADED = "id: t2\ninputs:\n  prompt: hello\ngraders:\n  - {type: text, name: g, config: {contains: [hello]}}\n"


@pytest.mark.parametrize("command", ["validate", "run", "audit"])
def test_a_task_without_a_grader_is_exit_2_naming_it_with_file_and_line(waza, make_suite, command):
    path = make_suite(EVAL, {"tasks/t1.yaml": BARE, "tasks/t2.yaml": GRADED})
    res = waza(command, str(path), cwd=path.parent)
    assert res.returncode == 2, res.stdout + res.stderr
    assert b"tasks/t1.yaml:1:5: task 't1' has no grader and no scored expected check" in res.stderr
    assert b"allow_ungraded: true" in res.stderr and b"Traceback" not in res.stderr
    assert b"t2" not in res.stderr  # a graded task is not named


def test_grade_refuses_the_suite_too(waza, make_suite, tmp_path):
    path = make_suite(EVAL, {"tasks/t1.yaml": BARE})
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"eval_name": "demo", "tasks": []}))
    res = waza("grade", str(path), "--results", str(results), "--workspace", str(tmp_path), cwd=path.parent)
    assert res.returncode == 2 and b"task 't1' has no grader" in res.stderr


def test_a_misspelt_graders_key_and_an_unscored_expected_say_why(problems):
    lines = problems(EVAL, {"tasks/t1.yaml": BARE + "expected:\n  behavior:\n    max_tool_calls: 3\n"})
    assert len(lines) == 1
    assert "expected (behavior) is not scored" in lines[0] and "task 't1'" in lines[0]


def test_what_counts_as_graded(load):
    # a global grader grades every task (waza's example suites do this)
    load(EVAL + "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n", {"tasks/t1.yaml": BARE})
    # a scored expected check
    load(EVAL, {"tasks/t1.yaml": BARE + "expected:\n  output_contains: [hello]\n"})
    # a checkpoint that stops the run on failure
    stop = ("inputs:\n  prompt: hello\n  follow_up_prompts: [more]\ncheckpoints:\n  - after_turn: 1\n"
            "    on_failure: stop\n    graders:\n      - {type: text, name: c, config: {contains: [x]}}\n")
    load(EVAL, {"tasks/t1.yaml": "id: t1\n" + stop})
    # a disabled task never runs
    load(EVAL, {"tasks/t1.yaml": BARE + "enabled: false\n", "tasks/t2.yaml": GRADED})


def test_a_checkpoint_that_only_records_does_not_count(problems):
    cont = ("id: t1\ninputs:\n  prompt: hello\n  follow_up_prompts: [more]\ncheckpoints:\n  - after_turn: 1\n"
            "    graders:\n      - {type: text, name: c, config: {contains: [x]}}\n")
    lines = problems(EVAL, {"tasks/t1.yaml": cont})
    assert "on_failure: continue, which only records" in lines[0]


def test_the_opt_out_key_per_task_and_per_suite(load, problems, waza, make_suite):
    suite = load(EVAL, {"tasks/t1.yaml": BARE + "allow_ungraded: true\n", "tasks/t2.yaml": GRADED})
    assert [t.id for t in suite.tasks] == ["t1", "t2"]
    # the task key opts out only its own task
    lines = problems(EVAL, {"tasks/t1.yaml": BARE + "allow_ungraded: true\n",
                            "tasks/t3.yaml": BARE.replace("t1", "t3")})
    assert len(lines) == 1 and "task 't3'" in lines[0]
    # the suite key opts out every task; the run then passes with score 0, as in waza (Go)
    path = make_suite(EVAL + "allow_ungraded: true\n", {"tasks/t1.yaml": BARE})
    res = waza("run", str(path), cwd=path.parent)
    assert res.returncode == 0, res.stderr
    # a scenario eval (unknown keys refused) takes the key too
    scenario = 'schemaVersion: "2.0"\nscenario: s\nallow_ungraded: true\n' + EVAL.replace("skill: demo\n", "")
    load(scenario, {"tasks/t1.yaml": BARE})
    # false is not an opt-out
    assert problems(EVAL + "allow_ungraded: false\n", {"tasks/t1.yaml": BARE})


def test_tasks_from_without_a_global_grader_is_one_error_at_eval_yaml(problems):
    lines = problems("name: demo\nskill: demo\nconfig:\n  executor: mock\ntasks_from: rows.csv\n",
                     {}, {"rows.csv": "id,prompt\na,hi\nb,there\n"})
    assert len(lines) == 1
    assert lines[0].startswith("eval.yaml:5:1: no grader: the 2 task(s) of tasks_from") or \
        "no grader: the 2 task(s) of tasks_from" in lines[0]


def test_many_ungraded_tasks_are_named_up_to_a_limit(problems):
    tasks = {f"tasks/t{i:02}.yaml": BARE.replace("t1", f"t{i:02}") for i in range(25)}
    lines = problems(EVAL, tasks)
    assert len(lines) == 21 and "... and 5 more task(s) without a grader" in lines[-1]
