"""Checkpoints at run time: graders after a given turn, continue or stop (waza Go checkpoints.go)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import write

EVAL = """\
name: cp
skill: s
config: {executor: mock, model: m}
tasks: ["tasks/*.yaml"]
"""

TASK = """\
id: t
inputs:
  prompt: first
  follow_up_prompts: [second, third]
checkpoints:
  - after_turn: 1
    graders: [{type: text, name: sees-first, config: {contains: ["for: first"], not_contains: ["for: second"]}}]
  - after_turn: 2
    on_failure: {on_failure}
    graders: [{type: text, name: wants-never, config: {contains: ["never"]}}]
  - after_turn: 3
    graders: [{type: text, name: sees-third, config: {contains: ["for: third"]}}]
graders:
  - {type: text, name: final, config: {contains: ["for: third"]}}
"""


def run_suite(waza, make_suite, task_yaml, *extra, eval_yaml=EVAL):
    path = make_suite(eval_yaml, {"tasks/t.yaml": task_yaml})
    out = path.parent / "results.json"
    res = waza("run", str(path), "-q", "-o", str(out), *extra)
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_continue_records_every_checkpoint_and_the_final_graders_decide(waza, make_suite):
    res, doc = run_suite(waza, make_suite, TASK.replace("{on_failure}", "continue"))
    run = doc["tasks"][0]["runs"][0]
    assert res.returncode == 0 and run["status"] == "passed", res.stderr
    assert [(c["after_turn"], c["status"], sorted(c["validations"])) for c in run["checkpoints"]] == [
        (1, "passed", ["sees-first"]), (2, "failed", ["wants-never"]), (3, "passed", ["sees-third"])]
    assert not any("stopped" in c for c in run["checkpoints"])
    # the checkpoint graders graded the conversation so far, not the final output
    assert run["checkpoints"][0]["validations"]["sees-first"]["passed"] is True
    assert sorted(run["validations"]) == ["final"]  # checkpoint graders are not final graders


def test_stop_ends_the_conversation_and_the_run_is_an_error(waza, make_suite):
    res, doc = run_suite(waza, make_suite, TASK.replace("{on_failure}", "stop"))
    run = doc["tasks"][0]["runs"][0]
    assert res.returncode == 1
    assert run["status"] == "error"
    assert run["error_msg"] == "checkpoint after_turn=2 failed (on_failure: stop): wants-never"
    assert [(c["after_turn"], c.get("stopped", False)) for c in run["checkpoints"]] == [(1, False), (2, True)]
    assert "third" not in run["final_output"]  # turn 3 never happened
    assert doc["schemaVersion"] == "1.8"


def test_skip_graders_runs_no_checkpoint(waza, make_suite):
    res, doc = run_suite(waza, make_suite, TASK.replace("{on_failure}", "stop"), "--skip-graders")
    run = doc["tasks"][0]["runs"][0]
    assert res.returncode == 0 and run["status"] == "n/a" and "checkpoints" not in run
    assert "Mock response for: third" in run["final_output"]


def test_checkpoints_are_kept_by_waza_grade(waza, make_suite, tmp_path):
    res, doc = run_suite(waza, make_suite, TASK.replace("{on_failure}", "continue"))
    suite_dir = tmp_path / "suite"
    regraded = tmp_path / "regraded.json"
    res = waza("grade", str(suite_dir / "eval.yaml"), "--results", str(suite_dir / "results.json"),
               "-o", str(regraded))
    assert res.returncode == 0, res.stderr
    again = json.loads(regraded.read_text())
    assert again["tasks"][0]["runs"][0]["checkpoints"] == doc["tasks"][0]["runs"][0]["checkpoints"]


AGENT = """\
import os, sys
turn = int(os.environ["WAZA_TURN"])
open(f"turn{turn}.txt", "w").write(sys.argv[1])
print(f"did {sys.argv[1]}")
"""

CHECK = """\
import os, sys
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
ws = os.environ["WAZA_WORKSPACE_DIR"]
want, absent = sys.argv[1], sys.argv[2]
sys.exit(0 if os.path.exists(os.path.join(ws, want)) and not os.path.exists(os.path.join(ws, absent)) else 1)
"""


def test_a_real_agent_is_graded_between_turns_on_the_live_workspace(waza, make_suite, tmp_path):
    """The cli executor runs a real process per turn; the checkpoint after turn 1 sees the
    file of turn 1 and not yet the file of turn 2."""
    eval_yaml = f"""\
name: cp
skill: s
config:
  executor: cli
  model: m
  cli:
    command: ["{sys.executable}", "{{suite_dir}}/agent.py", "{{prompt}}"]
tasks: ["tasks/*.yaml"]
"""
    check = f"{tmp_path}/suite/check.py"
    grader = (f'{{type: program, name: "{{n}}", config: {{command: "{sys.executable}", '
              f'args: ["{check}", "{{want}}", "{{absent}}"]}}}}')
    task = ("id: t\ninputs:\n  prompt: alpha\n  follow_up_prompts: [beta]\ncheckpoints:\n"
            "  - after_turn: 1\n    on_failure: stop\n    graders: ["
            + grader.replace("{n}", "after-1").replace("{want}", "turn1.txt").replace("{absent}", "turn2.txt")
            + "]\ngraders: ["
            + grader.replace("{n}", "final").replace("{want}", "turn2.txt").replace("{absent}", "turn3.txt") + "]\n")
    path = make_suite(eval_yaml, {"tasks/t.yaml": task}, {"agent.py": AGENT, "check.py": CHECK})
    out = path.parent / "results.json"
    res = waza("run", str(path), "-q", "-o", str(out))
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    assert res.returncode == 0, (res.stderr, run.get("error_msg"))
    assert run["checkpoints"][0]["status"] == "passed" and run["status"] == "passed"
    assert run["final_output"] == "did alpha\ndid beta"


def test_an_executor_that_does_not_report_turns_is_refused(make_suite, registry):
    from waza_core import Executor, RunEvidence
    from waza_core.errors import WazaError
    from waza_core.run.engine import Engine
    from waza_core.suite.load import load_suite

    class Quiet(Executor):
        name = "quiet"
        needs_workspace = False

        def execute(self, request):
            return RunEvidence(output="x")

    from waza_core.plugins import Registration

    registry.items["executor"]["quiet"] = Registration(Quiet, "test")
    suite = load_suite(make_suite(EVAL.replace("mock", "quiet"), {"tasks/t.yaml": TASK.replace(
        "{on_failure}", "stop")}), registry)
    with pytest.raises(WazaError, match="have checkpoints, but executor 'quiet' does not report the turns"):
        Engine(suite, registry)


def test_a_checkpoint_grader_that_cannot_judge_makes_the_checkpoint_an_error(waza, make_suite, tmp_path):
    write(tmp_path / "suite" / "fail.py", "raise SystemExit(3)\n")
    task = ("id: t\ninputs:\n  prompt: a\n  follow_up_prompts: [b]\ncheckpoints:\n  - after_turn: 1\n"
            "    on_failure: stop\n"
            "    graders: [{type: program, name: p,\n"
            f"               config: {{command: python3, args: ['{tmp_path}/suite/fail.py']}}}}]\n")
    res, doc = run_suite(waza, make_suite, task)
    run = doc["tasks"][0]["runs"][0]
    assert run["checkpoints"][0]["status"] in ("error", "failed")
    assert run["checkpoints"][0]["stopped"] is True and run["status"] == "error"
