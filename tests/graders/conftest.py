"""Helpers for the grader tests: build a grader the way the core does and grade one run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from waza_core.grading.base import GraderSetup, GradingContext
from waza_core.model import GraderSpec, RunEvidence, TaskSpec
from waza_core.suite import schema as schemas


@pytest.fixture
def build(registry):
    """``build(type, config, suite=None, name="g")``: the grader, built as the engine does."""

    def make(gtype: str, config: dict, suite=None, name: str = "g", setup: GraderSetup | None = None):
        errors = schemas.config_errors(registry.get("grader", gtype), config)
        assert not errors, [e.message for e in errors]
        cls = registry.get("grader", gtype)
        assert not cls.check_config(config), cls.check_config(config)
        grader = cls(GraderSpec(type=gtype, name=name, config=config), suite)
        grader.start(setup or GraderSetup())
        return grader

    return make


@pytest.fixture
def problems(registry):
    """``problems(type, config)``: schema messages plus the grader's own load-time checks."""

    def check(gtype: str, config) -> list[str]:
        cls = registry.get("grader", gtype)
        errors = schemas.config_errors(cls, config)
        out = [msg for err in errors for _, _, msg in schemas.describe(err, "config")]
        if not errors:
            out += [msg for _, msg in cls.check_config(config)]
        return out

    return check


def ctx(output: str = "", workspace: Path | str | None = None, prompt: str = "p", suite=None,
        **evidence) -> GradingContext:
    task = TaskSpec(id="t", name="t", prompt=prompt, file=Path("t.yaml"))
    return GradingContext(task=task, evidence=RunEvidence(output=output, **evidence),
                          workspace_dir=str(workspace) if workspace is not None else None, suite=suite)


def suite_at(folder: Path):
    """A minimal Suite whose eval.yaml lives in ``folder`` (graders use ``suite.dir``)."""
    from waza_core.model import Suite, SuiteConfig

    return Suite(name="s", skill="k", file=Path(folder) / "eval.yaml", config=SuiteConfig(), tasks=())


# -- suites on disk, run end to end (prompt and session graders) ------------------------

HERE = Path(__file__).parent
FAKE_JUDGE = HERE / "fake_judge.py"
TOY_AGENT = HERE.parents[1] / "examples" / "grader-showcase" / "agent" / "toy_agent.py"


def judge_cmd(*extra: str) -> list[str]:
    """argv template of the fake judge, kept beside eval.yaml."""
    return [sys.executable, "{suite_dir}/fake_judge.py", "--prompt-file", "{prompt_file}", *extra]


def agent_cmd(*extra: str) -> list[str]:
    """argv template of the toy agent (Claude Code stream-json), kept beside eval.yaml."""
    return [sys.executable, "{suite_dir}/toy_agent.py", "--prompt-file", "{prompt_file}", *extra]


#: config.cli for the toy agent, with its event stream read
TOY_CLI = {"command": agent_cmd(), "output": "jsonl", "output_path": "result", "events": "claude-stream-json"}


class SuiteDir:
    """An eval.yaml plus task files under ``root``, loaded and run on demand."""

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
        from waza_core.results.codec import results_to_json
        from waza_core.run.engine import Engine, RunOptions

        return results_to_json(Engine(self.load(), self.registry, RunOptions(**options)).run())


@pytest.fixture
def suite_dir(tmp_path, registry):
    return SuiteDir(tmp_path / "suite", registry)


def only_run(outcome: dict, task: str | None = None) -> dict:
    tasks = outcome["tasks"] if task is None else [t for t in outcome["tasks"] if t["test_id"] == task]
    assert len(tasks) == 1 and len(tasks[0]["runs"]) == 1, outcome
    return tasks[0]["runs"][0]
