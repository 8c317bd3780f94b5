"""Fixtures of the CI companions: a suite with passing, failing, flaky, errored and
hostile tasks over two trials, run through the real ``waza`` command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO, write
from tests.inprocess import run_waza_in_process

PLUGIN = "tests.reporters.scripted_executor"

EVAL = """
name: ci-demo
description: passing, failing, flaky, errored and hostile tasks
skill: demo-skill
config:
  trials_per_task: 2
  executor: scripted
  model: scripted-model
graders:
  - type: text
    name: says_42
    config:
      contains: ["42"]
tasks:
  - "tasks/*.yaml"
"""

TASKS = {
    "tasks/a-stable.yaml": """
        id: stable-pass
        name: Stable pass
        tags: [smoke]
        inputs:
          prompt: What is six times seven?
          context:
            outputs: ["the answer is 42"]
    """,
    "tasks/b-fails.yaml": """
        id: always-fails
        name: Always fails
        inputs:
          prompt: What is six times seven?
          context:
            outputs: ["no idea"]
    """,
    "tasks/c-flaky.yaml": """
        id: flaky-task
        name: Flaky task
        inputs:
          prompt: Guess
          context:
            outputs: ["42 it is", "maybe 41"]
    """,
    "tasks/d-errors.yaml": """
        id: errors-task
        name: Errors on trial two
        inputs:
          prompt: Try
          context:
            outputs: ["42"]
            errors: [2]
    """,
    "tasks/e-hostile.yaml": """
        id: hostile-task
        name: "Hostile <b>name</b> | pipe `tick` @octocat"
        inputs:
          prompt: "</script><script>window.__pwned=3</script>"
          context:
            outputs: ["42 "]
            hostile: true
        graders:
          - type: text
            name: hostile_check
            config:
              contains: ["<script>window.__pwned=4</script>|x"]
    """,
}


def make_ci_suite(root: Path) -> Path:
    write(root / "eval.yaml", EVAL)
    for name, text in TASKS.items():
        write(root / name, text)
    return root / "eval.yaml"


def waza_ci(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120):
    """The CLI with the scripted executor importable, in this process (tests/inprocess.py)."""
    full = {"PYTHONPATH": str(REPO)}
    full.update(env or {})
    return run_waza_in_process(*args, cwd=cwd, env=full, timeout=timeout)


@pytest.fixture
def ci_suite(tmp_path) -> Path:
    return make_ci_suite(tmp_path / "suite")


@pytest.fixture(scope="session")
def ci_results(tmp_path_factory) -> Path:
    """One real run of the CI suite, shared by the tests that only read its results."""
    root = tmp_path_factory.mktemp("ci-run")
    suite = make_ci_suite(root / "suite")
    out = root / "results.json"
    proc = waza_ci("run", str(suite), "-p", PLUGIN, "-o", str(out), "-q")
    assert proc.returncode == 1, proc.stderr.decode()
    json.loads(out.read_text("utf-8"))
    return out


_ISLAND = re.compile(
    rb'<script(?: id="(?P<a>[^"]+)")? type="application/json"(?: id="(?P<b>[^"]+)")?>(?P<body>.*?)</script>', re.S)


def json_islands(page: bytes) -> dict[str, bytes]:
    """The JSON elements of an HTML report, by id: ``waza-data`` (the index) and
    ``waza-task-N`` (task N's runs, as the results file has them)."""
    return {(m["a"] or m["b"]).decode(): m["body"] for m in _ISLAND.finditer(page)}
