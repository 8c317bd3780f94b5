"""Helpers for the grader tests: suites on disk, graders built from a config, runs."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FAKE_JUDGE = HERE / "fake_judge.py"
TOY_AGENT = HERE.parents[1] / "examples" / "grader-showcase" / "agent" / "toy_agent.py"


@pytest.fixture(scope="session")
def registry():
    from waza_core.plugins import build_plugin_manager

    os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    return build_plugin_manager()[1]


def judge_cmd(*extra: str) -> list[str]:
    """argv template of the fake judge, kept beside eval.yaml."""
    return [sys.executable, "{suite_dir}/fake_judge.py", "--prompt-file", "{prompt_file}", *extra]


def agent_cmd(*extra: str) -> list[str]:
    return [sys.executable, "{suite_dir}/toy_agent.py", "--prompt-file", "{prompt_file}", *extra]


class SuiteDir:
    """An eval.yaml plus task files under ``root``, loaded on demand."""

    def __init__(self, root: Path, registry) -> None:
        self.root = root
        self.registry = registry
        (root / "tasks").mkdir(parents=True, exist_ok=True)
        shutil.copy(FAKE_JUDGE, root / "fake_judge.py")
        shutil.copy(TOY_AGENT, root / "toy_agent.py")

    def write(self, config: dict | None = None, graders: list | None = None, tasks: list | None = None,
              **top) -> Path:
        doc = {"name": "graders-test", "skill": "testing", "version": "1",
               "config": {"trials_per_task": 1, "timeout_seconds": 60, "executor": "mock", **(config or {})},
               "metrics": [{"name": "m", "weight": 1, "threshold": 0.5}],
               "tasks": ["tasks/*.yaml"], **top}
        if graders is not None:
            doc["graders"] = graders
        (self.root / "eval.yaml").write_text(json.dumps(doc, indent=1))
        for old in (self.root / "tasks").glob("*.yaml"):
            old.unlink()
        for task in tasks or [{"id": "t1", "name": "task one", "inputs": {"prompt": "say hello"}}]:
            (self.root / "tasks" / f"{task['id']}.yaml").write_text(json.dumps(task, indent=1))
        return self.root / "eval.yaml"

    def load(self):
        from waza_core.suite.load import load_suite

        return load_suite(self.root / "eval.yaml", self.registry)

    def run(self, **options) -> dict:
        from waza_core.run.engine import Engine, RunOptions

        return Engine(self.load(), self.registry, RunOptions(**options)).run()


@pytest.fixture
def suite_dir(tmp_path, registry):
    return SuiteDir(tmp_path / "suite", registry)


def only_run(outcome: dict, task: str | None = None) -> dict:
    tasks = outcome["tasks"] if task is None else [t for t in outcome["tasks"] if t["test_id"] == task]
    assert len(tasks) == 1 and len(tasks[0]["runs"]) == 1, outcome
    return tasks[0]["runs"][0]
