"""Item 11: what a grader's program sees of waza's environment.

Default: everything (waza's behaviour, the seed's trust model). Opt-in allow-list:
``env:`` on the grader, or ``graders.env`` in ``.waza.yaml``.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.childenv import BASELINE, check_allow_list, child_environment
from waza_core.errors import SuiteError
from waza_core.suite.load import load_suite

DUMP = "import json, os, sys; sys.stdin.read(); print(json.dumps(dict(os.environ)))"


def grader_env(waza, make_suite, tmp_path, env_line: str = "", project: str | None = None) -> dict:
    config = f"{{command: {json.dumps(sys.executable)}, args: ['-c', {json.dumps(DUMP)}]{env_line}}}"
    task = f"id: t\ninputs: {{prompt: p}}\ngraders:\n  - {{type: program, name: dump, config: {config}}}\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    if project is not None:
        (cwd / ".waza.yaml").write_text(project)
    out = tmp_path / "r.json"
    proc = waza("run", str(path), "-o", str(out), cwd=cwd,
                env={"GITHUB_TOKEN": "secret", "AWS_KEY": "k", "AWS_REGION": "r", "OTHER": "o"})
    assert proc.returncode == 0, proc.stderr
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    return json.loads(run["validations"]["dump"]["details"]["stdout"])


def test_by_default_a_grader_sees_the_whole_environment(waza, make_suite, tmp_path):
    env = grader_env(waza, make_suite, tmp_path)
    assert env["GITHUB_TOKEN"] == "secret" and env["OTHER"] == "o"
    assert "WAZA_GRADING_CONTEXT" in env and "WAZA_WORKSPACE_DIR" in env


def test_an_allow_list_keeps_secrets_out(waza, make_suite, tmp_path):
    env = grader_env(waza, make_suite, tmp_path, ", env: ['AWS_*']")
    assert "GITHUB_TOKEN" not in env and "OTHER" not in env
    assert env["AWS_KEY"] == "k" and env["AWS_REGION"] == "r"
    assert "PATH" in env and "WAZA_GRADING_CONTEXT" in env


def test_the_project_default_applies_and_a_grader_can_override_it(waza, make_suite, tmp_path):
    env = grader_env(waza, make_suite, tmp_path, project="graders:\n  env: [OTHER]\n")
    assert "GITHUB_TOKEN" not in env and env["OTHER"] == "o"
    env = grader_env(waza, make_suite, tmp_path, ", env: []", project="graders:\n  env: [OTHER]\n")
    assert "OTHER" not in env and "PATH" in env


def test_a_bad_project_allow_list_is_exit_2(waza, make_suite, tmp_path):
    task = "id: t\ninputs: {prompt: p}\ngraders:\n  - {type: program, name: p, config: {command: 'true'}}\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    (tmp_path / ".waza.yaml").write_text("graders:\n  env: GITHUB_TOKEN\n")
    proc = waza("run", str(path), cwd=tmp_path)
    assert proc.returncode == 2 and b"graders.env must be a list" in proc.stderr and b"Traceback" not in proc.stderr


def test_a_bad_grader_allow_list_is_a_load_error(make_suite, registry):
    task = ("id: t\ninputs: {prompt: p}\ngraders:\n"
            "  - {type: program, name: p, config: {command: 'true', env: ['A=B']}}\n")
    with pytest.raises(SuiteError, match=r"t\.yaml:4:.*env\[0\]"):
        load_suite(make_suite(BASIC_EVAL, {"tasks/t.yaml": task}), registry)


def test_the_policy_itself():
    base = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "SECRET": "s", "APP_X": "1", "WAZA_GRADING_CONTEXT": "x"}
    assert child_environment(None, base=base, drop=("WAZA_GRADING_CONTEXT",)) == \
        {k: v for k, v in base.items() if k != "WAZA_GRADING_CONTEXT"}
    assert child_environment(["APP_*"], base=base, extra={"E": "e"}) == \
        {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "APP_X": "1", "E": "e"}
    assert child_environment([], base=base) == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C"}
    assert "PATH" in BASELINE
    assert check_allow_list(["OK", "A_*"]) is None
    assert check_allow_list("A") and check_allow_list(["A B"]) and check_allow_list([1])


def test_the_example_keeps_a_token_out(waza):
    from tests.conftest import REPO

    proc = waza("run", "examples/env-allow-list", cwd=REPO, env={"GITHUB_TOKEN": "secret", "DEMO_LEVEL": "3"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def hook_env(waza, make_suite, tmp_path, project: str | None = None) -> dict:
    """The environment a before_run hook sees (it dumps it to a file in the suite)."""
    dump = ("import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))")
    (tmp_path / "dump.py").write_text(dump)
    hooks = f"hooks:\n  before_run:\n    - command: {sys.executable} dump.py env.json\n      error_on_fail: true\n"
    path = make_suite(BASIC_EVAL + hooks, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    if project is not None:
        (tmp_path / ".waza.yaml").write_text(project)
    proc = waza("run", str(path), cwd=tmp_path, env={"GITHUB_TOKEN": "secret", "HOOK_DB": "db"})
    assert proc.returncode in (0, 1) and b"Traceback" not in proc.stderr, proc.stderr
    return json.loads((tmp_path / "env.json").read_text())


def test_hooks_see_the_whole_environment_by_default(waza, make_suite, tmp_path):
    env = hook_env(waza, make_suite, tmp_path)
    assert env["GITHUB_TOKEN"] == "secret" and env["HOOK_DB"] == "db"


def test_the_project_hooks_allow_list_keeps_secrets_from_hooks(waza, make_suite, tmp_path):
    env = hook_env(waza, make_suite, tmp_path, project="hooks:\n  env: [HOOK_*]\n")
    assert "GITHUB_TOKEN" not in env and env["HOOK_DB"] == "db" and "PATH" in env
