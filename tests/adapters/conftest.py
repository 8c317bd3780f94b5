"""Helpers shared by the executor tests: write a small suite to disk and load it."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FAKE_AGENT = HERE / "fake_agent.py"


@pytest.fixture
def exec_registry():
    from waza_core.plugins import build_plugin_manager

    os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    return build_plugin_manager()[1]


@pytest.fixture
def exec_suite(tmp_path, exec_registry):
    """Write eval.yaml (+ one task file per task) with the fake agent beside it; load it."""

    def make(config: dict, tasks: list[dict] | None = None, graders: list[dict] | None = None,
             registry_=None):
        suite_dir = tmp_path / "suite"
        (suite_dir / "tasks").mkdir(parents=True, exist_ok=True)
        shutil.copy(FAKE_AGENT, suite_dir / "fake_agent.py")
        tasks = tasks or [{"id": "t1", "name": "task one", "inputs": {"prompt": "say hello"}}]
        doc = {"name": "cli-test", "skill": "testing", "version": "1",
               "config": {"trials_per_task": 1, "timeout_seconds": 30, "executor": "cli", "model": "m1", **config},
               "metrics": [{"name": "m", "weight": 1, "threshold": 0.5}],
               "tasks": ["tasks/*.yaml"]}
        if graders:
            doc["graders"] = graders
        else:  # these tests are about the executor; the tasks need no grader
            doc["allow_ungraded"] = True
        (suite_dir / "eval.yaml").write_text(json.dumps(doc, indent=1))
        for task in tasks:
            (suite_dir / "tasks" / f"{task['id']}.yaml").write_text(json.dumps(task, indent=1))
        from waza_core.suite.load import load_suite

        return load_suite(suite_dir / "eval.yaml", registry_ or exec_registry)

    return make


def agent_cmd(*extra: str) -> list[str]:
    """argv template running the fake agent next to eval.yaml with this interpreter."""
    return [sys.executable, "{suite_dir}/fake_agent.py", *extra]
