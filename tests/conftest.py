"""Shared fixtures: build suites on disk and run the real ``waza`` command."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Keep the suite cache of every test (and every waza subprocess) out of $HOME."""
    os.environ["WAZA_CACHE_DIR"] = str(tmp_path_factory.mktemp("waza-cache"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def make_suite(tmp_path):
    """Write an eval.yaml and task files; returns the eval.yaml path."""

    def make(eval_yaml: str, tasks: dict[str, str] | None = None, files: dict[str, str] | None = None) -> Path:
        root = tmp_path / "suite"
        write(root / "eval.yaml", eval_yaml)
        for name, text in (tasks or {}).items():
            write(root / name, text)
        for name, text in (files or {}).items():
            write(root / name, text)
        return root / "eval.yaml"

    return make


def run_waza(*args: str, cwd: Path | None = None, env: dict | None = None, input: bytes | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (exit codes, stderr, no traceback)."""
    full_env = dict(os.environ)
    full_env.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "waza_core", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def waza():
    return run_waza


@pytest.fixture
def registry(monkeypatch):
    from waza_core.plugins import build_plugin_manager

    monkeypatch.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    return build_plugin_manager()[1]


#: a suite for tests about other things than grading; ``allow_ungraded`` lets its tasks
#: load without a grader (a task that nothing grades is a load error otherwise:
#: waza_core/suite/ungraded.py)
BASIC_EVAL = """
name: basic
skill: demo
config:
  executor: mock
  trials_per_task: 1
  timeout_seconds: 30
tasks: ["tasks/*.yaml"]
allow_ungraded: true
"""


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (scripts/test.sh runs ``-n auto --dist loadgroup``), keep the tests that
    start a local Ray cluster on one worker: two clusters at once would fight over the machine's
    cores and the cluster's default ports."""
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(pytest.mark.xdist_group("ray"))
