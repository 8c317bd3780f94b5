"""``waza grade`` needs ``--workspace`` when a grader reads the workspace: the run's own
workspace is gone, and grading the current folder silently judged files the agent never
wrote (waza_core/run/regrade.py ``WorkspaceNeeded``)."""

from __future__ import annotations

import json

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

EVAL = """\
name: ws
skill: demo
config:
  executor: mock
tasks: ["tasks/*.yaml"]
"""
FILE_TASK = """\
id: writes
inputs:
  prompt: write out.txt
graders:
  - {type: file, name: has_out, config: {must_exist: [out.txt]}}
"""
TEXT_TASK = """\
id: says
inputs:
  prompt: say hi
graders:
  - {type: text, name: says_mock, config: {contains: [mock]}}
"""


def _skipped_runs(waza, make_suite):
    path = make_suite(EVAL, {"tasks/writes.yaml": FILE_TASK, "tasks/says.yaml": TEXT_TASK})
    runs = path.parent / "runs.json"
    res = waza("run", str(path), "--skip-graders", "-q", "-o", str(runs), cwd=path.parent)
    assert res.returncode == 0, res.stderr
    return path, runs


def test_a_file_grader_without_workspace_is_exit_2_naming_it_and_the_fix(waza, make_suite):
    path, runs = _skipped_runs(waza, make_suite)
    res = waza("grade", str(path), "--results", str(runs), cwd=path.parent)
    assert res.returncode == 2, res.stdout
    err = res.stderr.decode()
    assert "--workspace is required: grader(s) 'has_out' (file, tasks/writes.yaml (graders[0]))" in err
    assert "pass --workspace DIR" in err and "`--workspace .`" in err
    assert "says_mock" not in err and "Traceback" not in err and res.stdout == b""


def test_an_explicit_workspace_is_what_the_file_grader_sees(waza, make_suite, tmp_path):
    path, runs = _skipped_runs(waza, make_suite)
    work = tmp_path / "agent-work"
    work.mkdir()
    (work / "out.txt").write_text("done\n")
    res = waza("grade", str(path), "--results", str(runs), "--workspace", str(work), cwd=path.parent)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tasks"]["writes"]["passed"] is True
    # `--workspace .` grades the current folder, on purpose: no out.txt there
    res = waza("grade", str(path), "--results", str(runs), "--workspace", ".", cwd=path.parent)
    assert res.returncode == 0 and json.loads(res.stdout)["tasks"]["writes"]["passed"] is False


def test_output_only_graders_need_no_workspace(waza, make_suite):
    path, runs = _skipped_runs(waza, make_suite)
    res = waza("grade", str(path), "--results", str(runs), "--task", "says", cwd=path.parent)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tasks"]["says"]["passed"] is True


def test_a_program_grader_needs_it_too(waza, make_suite):
    program = "graders:\n  - {type: program, name: check, config: {command: 'true'}}\n"
    path = make_suite(EVAL + program, {"tasks/says.yaml": TEXT_TASK})
    runs = path.parent / "runs.json"
    assert waza("run", str(path), "--skip-graders", "-q", "-o", str(runs), cwd=path.parent).returncode == 0
    res = waza("grade", str(path), "--results", str(runs), cwd=path.parent)
    assert res.returncode == 2 and b"grader(s) 'check' (program, eval.yaml (graders[0]))" in res.stderr
