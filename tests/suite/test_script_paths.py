"""Program grader and hook scripts are checked when the suite loads, with the fix."""

from __future__ import annotations

import json
import sys

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from tests.suite.conftest import LEGACY, TASK

GRADER = """graders:
  - type: program
    name: check
    config: {{command: {py}, args: ["{script}"]}}
"""
CHECK = "import sys\nsys.exit(0 if sys.stdin.read() is not None else 1)\n"


def suite_with(make_suite, script: str, files: dict | None = None):
    return make_suite(LEGACY + GRADER.format(py=sys.executable, script=script), {"tasks/t1.yaml": TASK}, files)


def test_a_missing_program_grader_script_does_not_validate(waza, make_suite, tmp_path):
    path = suite_with(make_suite, "graders/missing.py")
    res = waza("validate", str(path), cwd=path.parent)
    assert res.returncode == 2, res.stderr
    err = res.stderr.decode()
    assert "eval.yaml:" in err and "program grader 'check': script 'graders/missing.py' does not exist" in err
    assert "Traceback" not in err
    assert waza("run", str(path), cwd=path.parent).returncode == 2


def test_a_script_beside_the_suite_run_from_elsewhere_names_the_fix(waza, make_suite, tmp_path):
    path = suite_with(make_suite, "graders/check.py", {"graders/check.py": CHECK})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = waza("validate", str(path), cwd=elsewhere)
    assert res.returncode == 2
    err = res.stderr.decode()
    assert "does not exist from the working folder" in err and "but does beside eval.yaml" in err
    assert "write '{suite_dir}/graders/check.py' instead" in err
    assert waza("validate", str(path), cwd=path.parent).returncode == 0  # waza's resolution is kept


def test_the_suite_dir_placeholder_finds_the_script_from_any_folder(waza, make_suite, tmp_path):
    path = suite_with(make_suite, "{suite_dir}/graders/check.py", {"graders/check.py": CHECK})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = elsewhere / "r.json"
    res = waza("run", str(path), "-o", str(out), "-q", cwd=elsewhere)
    assert res.returncode == 0, res.stderr.decode()
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    assert run["validations"]["check"]["passed"] is True


def test_a_missing_hook_script_does_not_validate(waza, make_suite, tmp_path):
    hooks = f"hooks:\n  before_run:\n    - command: {sys.executable} scripts/seed.py\n"
    path = make_suite(LEGACY + hooks + "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n",
                      {"tasks/t1.yaml": TASK})
    res = waza("validate", str(path), cwd=path.parent)
    assert res.returncode == 2
    assert "hooks.before_run[0]: script 'scripts/seed.py' does not exist" in res.stderr.decode()


def test_programs_on_path_and_modules_are_not_checked(load):
    grader = """graders:
  - {type: program, name: a, config: {command: no-such-program-on-path}}
  - {type: program, name: b, config: {command: python3, args: ["-m", "some.module"]}}
"""
    assert len(load(LEGACY + grader).graders) == 2
