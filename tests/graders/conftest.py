"""Helpers for the grader tests: build a grader the way the core does and grade one run."""

from __future__ import annotations

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
