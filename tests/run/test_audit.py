"""``waza audit``: a do-nothing agent finds the tasks and graders that pass anyway."""

from __future__ import annotations

import json
from pathlib import Path

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from tests.suite.conftest import LEGACY

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "audit"


def test_the_example_names_exactly_its_vacuous_tasks_and_graders(waza):
    res = waza("audit", str(EXAMPLE), "--format", "json")
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert report["vacuous_tasks"] == ["always-green"]
    assert report["vacuous_graders"] == [
        {"task_id": "always-green", "grader": "no_error_word"},
        {"task_id": "always-green", "grader": "no_todo_left"},
        {"task_id": "real-check", "grader": "no_apology"},
    ]
    assert report["not_audited"] == [] and report["tasks_audited"] == 2


def test_no_vacuous_task_is_exit_0_and_text_says_so(waza, make_suite):
    path = make_suite(LEGACY + "graders:\n  - {type: text, name: g, config: {contains: [node]}}\n",
                      {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n"})
    res = waza("audit", str(path))
    assert res.returncode == 0, res.stderr
    assert b"no task passes with no agent" in res.stdout


def test_bad_input_is_exit_2(waza, make_suite, tmp_path):
    assert waza("audit", str(tmp_path / "nope")).returncode == 2
    path = make_suite(LEGACY, {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hi\ngradrs: []\n"})
    res = waza("audit", str(path))
    assert res.returncode == 2 and b"did you mean 'graders'" in res.stderr
    assert waza("audit", str(EXAMPLE), "--format", "xml").returncode == 2


def test_prompt_graders_are_not_audited_and_a_paid_judge_is_refused(waza, make_suite):
    prompt = "graders:\n  - {type: prompt, name: judge, config: {prompt: 'Is it good?'}}\n"
    path = make_suite(LEGACY + prompt, {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n"})
    res = waza("audit", str(path), "--format", "json")
    report = json.loads(res.stdout)
    assert report["not_audited"][0]["grader"] == "judge" and report["vacuous_graders"] == []
    paid = "graders:\n  - {type: prompt, name: judge, config: {prompt: 'ok?', judge: {executor: copilot-sdk}}}\n"
    path = make_suite(LEGACY + paid, {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n"})
    res = waza("audit", str(path))
    assert res.returncode == 2 and b"may make paid calls" in res.stderr
