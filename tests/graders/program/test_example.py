"""examples/program-grader runs as documented: live, and offline with `waza grade`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.suite.schema import plain_validator

EXAMPLE = REPO / "examples" / "program-grader"
EXPECTED = {
    ("explain-hello", "reads_stdin"): True,
    ("explain-hello", "reads_context"): True,
    ("explain-hello", "reads_workspace"): True,
    ("fails-on-purpose", "reads_stdin"): True,
    ("fails-on-purpose", "reads_context"): True,
    ("fails-on-purpose", "expects_readme"): False,
}


@pytest.fixture
def example(tmp_path) -> tuple[Path, dict]:
    """A copy of the example, with `python3` on PATH meaning this interpreter."""
    root = tmp_path / "program-grader"
    shutil.copytree(EXAMPLE, root)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    return root, {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


def verdicts(doc: dict) -> dict:
    return {(t["test_id"], name): v["passed"] for t in doc["tasks"] for r in t["runs"]
            for name, v in r["validations"].items()}


def test_example_runs_with_one_grader_failing_on_purpose(example):
    root, env = example
    proc = run_waza("run", "eval.yaml", "-o", "out.json", cwd=root, env=env)
    assert proc.returncode == 1, proc.stderr.decode()
    doc = json.loads((root / "out.json").read_text())
    assert not list(plain_validator("results").iter_errors(doc))
    assert verdicts(doc) == EXPECTED
    failing = doc["tasks"][1]["runs"][0]["validations"]["expects_readme"]
    assert failing["feedback"] == ("Program exited with error: exit status 1; "
                                   "stderr: not found in the workspace: README.md")
    assert "error" not in failing and doc["summary"]["errors"] == 0
    ctx = doc["tasks"][0]["runs"][0]["validations"]["reads_context"]["feedback"]
    assert "command_invocations: not recorded" in ctx and "0 transcript event(s)" in ctx


def test_example_grades_offline_with_the_same_verdicts(example):
    root, env = example
    assert run_waza("run", "eval.yaml", "--skip-graders", "-o", "runs.json", cwd=root, env=env).returncode == 0
    proc = run_waza("grade", "eval.yaml", "--results", "runs.json", "--workspace", "fixtures", "-o", "g.json",
                    cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    assert verdicts(json.loads((root / "g.json").read_text())) == EXPECTED
    assert json.loads(proc.stdout)["tasks"]["explain-hello"]["passed"] is True


def test_example_waza_yaml_sets_the_program_timeout(example, monkeypatch):
    from waza_core.suite import project_config

    root, _ = example
    monkeypatch.chdir(root)
    assert project_config.program_timeout() == 20.0
