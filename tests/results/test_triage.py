"""Failure triage: every run that did not pass gets a category, in the results and the console.

Real ``waza run`` under the mock executor (and a small plugin: a grader that divides by zero,
an executor that cannot run one prompt); the results file is read back and checked against
``waza schema results``.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import REPO
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.results import triage
from waza_core.suite import schema

PLUGIN = "tests.results.triage_plugin"
ENV = {"PYTHONPATH": str(REPO)}
EVAL = """\
name: triage-demo
skill: demo
config:
  executor: {executor}
  trials_per_task: 1
  timeout_seconds: 30
tasks: ["tasks/*.yaml"]
"""
TASKS = {
    "tasks/a.yaml": "id: buggy\ninputs: {prompt: hello}\ngraders:\n  - {type: ratio, name: share}\n",
    "tasks/b.yaml": "id: wrong\ninputs: {prompt: hello}\ngraders:\n"
                    "  - {type: text, name: says_bye, config: {contains: [goodbye]}}\n",
    "tasks/c.yaml": "id: green\ninputs: {prompt: hello}\ngraders:\n"
                    "  - {type: text, name: no_err, config: {not_contains: [error]}}\n",
}


def _run(path, *args):
    out = path.parent / "results.json"
    res = run_waza("run", str(path), "-o", str(out), "-p", PLUGIN, "--color", "never", *args, env=ENV)
    doc = json.loads(out.read_text()) if out.exists() else None
    return res, doc


def _categories(doc):
    return {t["test_id"]: [(r.get("triage") or {}).get("category") for r in t["runs"]] or
            [(t.get("triage") or {}).get("category")] for t in doc["tasks"]}


def _valid(doc):
    errors = sorted(schema.plain_validator("results").iter_errors(doc), key=str)
    assert not errors, errors[0]


def test_each_run_gets_its_category_in_the_results_and_the_console(make_suite):
    res, doc = _run(make_suite(EVAL.format(executor="mock"), TASKS))
    assert res.returncode == 1, res.stderr.decode()
    assert _categories(doc) == {"buggy": ["grader_defect"], "wrong": ["agent_failure"], "green": [None]}
    assert doc["summary"]["triage"] == {"infrastructure": 0, "grader_defect": 1, "agent_failure": 1, "vacuous": 0}
    buggy = doc["tasks"][0]["runs"][0]["triage"]
    assert buggy["reason"].startswith("grader 'share' (exception): ZeroDivisionError: division by zero")
    _valid(doc)
    out = res.stdout.decode()
    block = out[out.index("FAILURE TRIAGE"):]
    assert "grader defect: 1 run(s); next: fix the grader; the agent was not judged" in block
    assert "agent failure: 1 run(s); next: read the agent's work" in block
    assert "- wrong: graded and failed: 'says_bye'" in block
    assert "TRACEBACK" not in out  # only with -v


def test_a_plugin_grader_that_raises_keeps_its_traceback_and_v_prints_it(make_suite):
    res, doc = _run(make_suite(EVAL.format(executor="mock"), TASKS), "-v")
    share = doc["tasks"][0]["runs"][0]["validations"]["share"]
    assert share["error"]["kind"] == "exception"
    where = "tests/results/triage_plugin.py:10 in ratio"  # the plugin's own frame nearest the raise
    assert share["details"]["raised_at"] == where and where in share["error"]["message"]
    trace = share["details"]["traceback"]
    assert trace.startswith("Traceback (most recent call last):") and trace.endswith(
        "ZeroDivisionError: division by zero\n")
    assert "in grade" in trace and "return done / total" in trace
    assert "waza_core" not in trace  # the harness frames that called the grader are left out
    assert len(trace) <= 8000
    out = res.stdout.decode()
    assert "TRACEBACK of grader 'share' (task buggy, run 1)" in out
    assert "    ZeroDivisionError: division by zero" in out and "return done / total" in out


def test_a_long_traceback_is_cut_to_its_last_characters():
    from waza_core.grading.base import Grader
    from waza_core.grading.grade import TRACEBACK_LIMIT, exception_trace

    def deep(n):
        if n == 0:
            raise ValueError("x" * 20_000)
        return deep(n - 1)

    try:
        deep(50)
    except ValueError as exc:
        where, text = exception_trace(exc, Grader.__new__(Grader))
    assert len(text) <= TRACEBACK_LIMIT and text.startswith("...(earlier frames cut)")
    assert "test_triage.py" in where and "in deep" in where


def test_the_harness_is_blamed_when_the_agent_or_a_hook_cannot_run(make_suite, tmp_path):
    tasks = dict(TASKS)
    tasks["tasks/d.yaml"] = ("id: crashed\ninputs: {prompt: CRASH now}\ngraders:\n"
                             "  - {type: text, name: any, config: {contains: [x]}}\n")
    res, doc = _run(make_suite(EVAL.format(executor="crash_on_prompt"), tasks))
    assert res.returncode == 1
    cats = _categories(doc)
    assert cats["crashed"] == ["infrastructure"] and cats["buggy"] == ["grader_defect"]
    crashed = next(t for t in doc["tasks"] if t["test_id"] == "crashed")["runs"][0]["triage"]
    assert "exited with code 137" in crashed["reason"]
    assert "infrastructure: 1 run(s); next: fix the harness" in res.stdout.decode()
    _valid(doc)


def test_a_failed_before_task_hook_is_infrastructure_of_a_task_without_runs(make_suite):
    hooks = f"hooks:\n  before_task:\n    - {{command: '{sys.executable} -c exit(3)', error_on_fail: true}}\n"
    path = make_suite(EVAL.format(executor="mock") + hooks, {"tasks/c.yaml": TASKS["tasks/c.yaml"]})
    res, doc = _run(path)
    assert res.returncode == 1
    task = doc["tasks"][0]
    assert task["runs"] == [] and task["triage"]["category"] == "infrastructure"
    assert "before_task hook failed" in task["triage"]["reason"]
    assert doc["summary"]["triage"]["infrastructure"] == 1


def test_program_grader_timeout_and_missing_command_are_grader_defects(make_suite):
    tasks = {
        "tasks/a.yaml": "id: slow\ninputs: {prompt: hi}\ngraders:\n"
                        f"  - {{type: program, name: slow, config: {{command: '{sys.executable}', "
                        "args: ['-c', 'import time; time.sleep(20)'], timeout: 0.5}}\n",
        "tasks/b.yaml": "id: gone\ninputs: {prompt: hi}\ngraders:\n"
                        "  - {type: program, name: gone, config: {command: waza-no-such-grader-cmd}}\n",
    }
    res, doc = _run(make_suite(EVAL.format(executor="mock"), tasks))
    assert _categories(doc) == {"slow": ["grader_defect"], "gone": ["grader_defect"]}
    reasons = {t["test_id"]: t["runs"][0]["triage"]["reason"] for t in doc["tasks"]}
    assert reasons["slow"].startswith("grader 'slow' (timeout)")
    assert reasons["gone"].startswith("grader 'gone' (start_failed)")


def test_waza_grade_works_the_categories_out_again(make_suite, tmp_path):
    path = make_suite(EVAL.format(executor="mock"), TASKS)
    out = path.parent / "results.json"
    ran = run_waza("run", str(path), "--skip-graders", "-o", str(out), "-q", "-p", PLUGIN, env=ENV)
    assert ran.returncode == 0, ran.stderr.decode()
    assert "triage" not in json.loads(out.read_text())["summary"]  # n/a runs have no category
    graded = tmp_path / "g.json"
    run_waza("grade", str(path), "--results", str(out), "-o", str(graded), "-p", PLUGIN, "--workspace", str(tmp_path),
             env=ENV)
    doc = json.loads(graded.read_text())
    assert _categories(doc) == {"buggy": ["grader_defect"], "wrong": ["agent_failure"], "green": [None]}
    assert doc["summary"]["triage"]["grader_defect"] == 1


@pytest.mark.parametrize("status, error_msg, errors, failed, vacuous, want", [
    ("passed", None, [], [], False, None),
    ("passed", None, [], [], True, "vacuous"),
    ("n/a", "skipped for budget: cap", [], [], False, None),
    ("failed", None, [], ["g"], False, "agent_failure"),
    ("failed", None, [], ["g"], True, "agent_failure"),
    ("error", "executor 'x' failed: boom", [], [], False, "infrastructure"),
    ("error", None, [], [], False, "infrastructure"),
    ("error", "grader 'g': kaboom", [("g", "exception", "kaboom")], [], False, "grader_defect"),
    ("error", "grader 'g': stopped", [("g", "cancelled", "stopped")], [], False, "infrastructure"),
    ("error", "two", [("g", "cancelled", "s"), ("h", "timeout", "t")], [], False, "grader_defect"),
    ("failed", None, [("g", "schema_file", "missing")], [], False, "grader_defect"),
])
def test_the_rule_table(status, error_msg, errors, failed, vacuous, want):
    got = triage.decide(status, error_msg, errors, failed, vacuous)
    assert (got or {}).get("category") == want
    if got:
        assert got["reason"] and len(got["reason"]) <= triage.REASON_LIMIT


def test_a_file_without_the_field_is_triaged_the_same_way():
    run = {"status": "error", "error_msg": "grader 'g': x",
           "validations": {"g": {"passed": False, "error": {"kind": "exception", "message": "x"}}}}
    assert triage.of_run_json(run)["category"] == "grader_defect"
    tally = triage.tally_of([{"test_id": "t", "status": "error", "runs": [run]},
                             {"test_id": "h", "status": "failed", "runs": [], "error_msg": "hook"},
                             {"test_id": "v", "status": "passed", "runs": [{"status": "passed"}]}],
                            audit={"vacuous_tasks": ["v"]})
    assert dict(tally.runs) == {"grader_defect": 1, "infrastructure": 1, "vacuous": 1}
    assert [g["category"] for g in tally.groups()] == ["infrastructure", "grader_defect", "vacuous"]


def test_the_example_makes_one_failure_of_each_category(tmp_path):
    example = REPO / "examples" / "triage"
    out = tmp_path / "r.json"
    res = run_waza("run", "eval.yaml", "--audit", "-o", str(out), "--color", "never", cwd=example)
    assert res.returncode == 1, res.stderr.decode()
    doc = json.loads(out.read_text())
    assert _categories(doc) == {"agent-crash": ["infrastructure"], "broken-grader": ["grader_defect"],
                                "wrong-answer": ["agent_failure"], "no-op-pass": ["vacuous"], "real-pass": [None]}
    assert doc["summary"]["triage"] == {"infrastructure": 1, "grader_defect": 1, "agent_failure": 1, "vacuous": 1}
    text = res.stdout.decode()
    heads = [line.split(":")[0].strip() for line in text[text.index("FAILURE TRIAGE"):].splitlines()[1:]
             if line.startswith("  ") and not line.startswith("    ")]
    assert heads[:4] == ["infrastructure", "grader defect", "agent failure", "vacuous pass"]
    _valid(doc)


CHECKPOINT_TASK = """\
id: {id}
inputs:
  prompt: first
  follow_up_prompts: [second, third]
checkpoints:
  - after_turn: 2
    on_failure: stop
    graders: [{grader}]
graders:
  - {{type: text, name: final, config: {{contains: ["for: third"]}}}}
"""


def test_a_checkpoint_that_stops_the_run_is_judged_by_its_own_graders(make_suite):
    failing = "{type: text, name: wants-never, config: {contains: [never]}}"
    broken = "{type: program, name: no-judge, config: {command: waza-no-such-grader-cmd}}"
    path = make_suite("name: cp\nskill: s\nconfig: {executor: mock}\ntasks: ['tasks/*.yaml']\n",
                      {"tasks/a.yaml": CHECKPOINT_TASK.format(id="judged", grader=failing),
                       "tasks/b.yaml": CHECKPOINT_TASK.format(id="unjudged", grader=broken)})
    res, doc = _run(path)
    runs = {t["test_id"]: t["runs"][0] for t in doc["tasks"]}
    assert runs["judged"]["status"] == "error" and runs["unjudged"]["status"] == "error"
    assert runs["judged"]["triage"] == {"category": "agent_failure",
                                        "reason": "checkpoint after_turn=2: graded and failed: 'wants-never'"}
    assert runs["unjudged"]["triage"]["category"] == "grader_defect"
    assert runs["unjudged"]["triage"]["reason"].startswith("checkpoint after_turn=2: grader 'no-judge' (start_failed)")
    _valid(doc)


def test_the_console_lists_a_task_whose_hook_failed_under_infrastructure(make_suite):
    hooks = f"hooks:\n  before_task:\n    - {{command: '{sys.executable} -c exit(3)', error_on_fail: true}}\n"
    path = make_suite(EVAL.format(executor="mock") + hooks, {"tasks/c.yaml": TASKS["tasks/c.yaml"]})
    res, _ = _run(path)
    out = res.stdout.decode()
    block = out[out.index("FAILURE TRIAGE"):]
    assert "infrastructure: 1 run(s); next: fix the harness" in block
    assert "- green: before_task hook failed: hook before_task[0]:" in block and "exited with code 3" in block


def test_a_reason_is_one_line_whatever_the_error_says():
    got = triage.decide("error", "agent died\nRESULTS  forged\r\n  tasks 9: 9 passed", [], [], False)
    assert "\n" not in got["reason"] and "\r" not in got["reason"]
    assert got["reason"] == "agent died\\nRESULTS  forged\\r\\n  tasks 9: 9 passed"
    block = triage.console_block({"infrastructure": 1}, [{"test_id": "a\nb", "status": "error", "runs": [
        {"status": "error", "error_msg": "x\ny"}]}])
    assert "    - a\\nb: x\\ny" in block.splitlines()
