"""The grader interface and the per-run grading context.

A grader class is built once per suite (compile regexes, resolve paths there) and
``grade`` is called once per run, possibly from several threads: keep it free of
per-run state. ``grade`` returns a :class:`GraderResult`; it raises
:class:`~waza_core.errors.GraderError` only when it could not judge at all.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from waza_core.model import GraderResult, GraderSpec, RunEvidence, TaskSpec

if TYPE_CHECKING:
    from waza_core.model import Suite


@attrs.frozen
class GradingContext:
    task: TaskSpec
    evidence: RunEvidence
    workspace_dir: str | None
    suite: Suite | None = None
    #: set when the run is being interrupted; long-running graders should stop
    cancel: threading.Event | None = None


class Grader:
    """Base class for graders. Subclasses set ``name`` and ``config_schema``."""

    name: ClassVar[str] = ""
    config_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    #: whether ``grade`` may look at the workspace; output-only graders set False, which
    #: lets the runner skip making a workspace nobody could see
    needs_workspace: ClassVar[bool] = True
    #: whether the same evidence always gets the same verdict; a judge model or timing
    #: based grader sets False, which turns the result cache off (as in waza)
    deterministic: ClassVar[bool] = True

    def __init__(self, spec: GraderSpec, suite: Suite | None = None) -> None:
        self.spec = spec
        self.suite = suite

    @classmethod
    def check_config(cls, config: dict) -> list[tuple[tuple, str]]:
        """Semantic checks beyond the schema, run at load time.

        Returns ``(json_path_inside_config, message)`` pairs; empty when fine.
        """
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:  # pragma: no cover - interface
        raise NotImplementedError

    def result(self, score: float, passed: bool, feedback: str, **details: Any) -> GraderResult:
        return GraderResult(
            identifier=self.spec.name,
            type=self.spec.type,
            score=score,
            passed=passed,
            feedback=feedback,
            weight=self.spec.weight,
            details=details,
        )
