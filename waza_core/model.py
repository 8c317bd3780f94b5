"""The data model: suite and task specs (frozen values) and the run evidence.

Suite objects are built once by :mod:`waza_core.suite.load`; the evidence of one run is
what the executor recorded, kept whole in the results file so that ``waza grade``
can rebuild the grading input. ``None`` means "no evidence recorded", ``[]`` means
"recorded, and empty": the two are kept apart everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class GraderSpec:
    """One entry of a ``graders:`` list."""

    type: str
    name: str
    weight: float = 1.0
    config: dict = attrs.field(factory=dict)
    where: str = ""  # "file:line:col" of the entry, for messages


@attrs.frozen
class FileInput:
    path: str
    content: str | None = None


@attrs.frozen
class TaskSpec:
    id: str
    name: str
    prompt: str
    file: Path  # the task's YAML file
    description: str = ""
    tags: tuple[str, ...] = ()
    enabled: bool = True
    timeout_seconds: int | None = None
    context_dir: str | None = None
    files: tuple[FileInput, ...] = ()
    context: dict = attrs.field(factory=dict)
    follow_up_prompts: tuple[str, ...] = ()
    skill_directories: tuple[str, ...] | None = None
    graders: tuple[GraderSpec, ...] = ()
    raw: dict = attrs.field(factory=dict, eq=False, repr=False)


@attrs.frozen
class SuiteConfig:
    trials_per_task: int = 1
    timeout_seconds: int = 300
    parallel: bool = False
    workers: int = 4
    executor: str = "mock"
    model: str = ""
    judge_model: str = ""
    max_attempts: int = 1
    fail_fast: bool = False
    skill_directories: tuple[str, ...] = ()
    required_skills: tuple[str, ...] = ()
    disabled_skills: tuple[str, ...] = ()
    extra: dict = attrs.field(factory=dict)  # executor-specific keys, e.g. ``cli``


@attrs.frozen
class Suite:
    name: str
    skill: str
    file: Path
    config: SuiteConfig
    tasks: tuple[TaskSpec, ...]
    graders: tuple[GraderSpec, ...] = ()
    description: str = ""
    version: str = ""
    metrics: tuple[dict, ...] = ()
    inputs: dict = attrs.field(factory=dict)
    hooks: dict | None = None
    baseline: bool = False
    raw: dict = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def dir(self) -> Path:
        return self.file.parent


@attrs.define
class RunEvidence:
    """Everything one agent run produced that a grader may judge."""

    output: str = ""
    transcript: list = attrs.field(factory=list)
    tool_calls: list = attrs.field(factory=list)
    tool_events: list | None = None
    host_lifecycle: dict | None = None
    command_invocations: list | None = None
    #: tool calls answered by the run's ``mcp_mocks`` (waza for Python only; see docs/mocks.md)
    mcp_invocations: list | None = None
    user_input_requests: list | None = None
    skill_invocations: list | None = None
    outcome: dict = attrs.field(factory=dict)
    duration_ms: int = 0
    usage: dict | None = None
    session_id: str | None = None
    error: str | None = None

    def context_json(self) -> dict[str, Any]:
        """The grading-context projection (version 1), as the program grader writes it."""
        return {
            "version": 1,
            "output": self.output,
            "outcome": self.outcome if self.outcome is not None else {},
            "transcript": self.transcript if self.transcript is not None else [],
            "tool_calls": self.tool_calls if self.tool_calls is not None else [],
            "tool_events": self.tool_events,
            "host_lifecycle": self.host_lifecycle,
            "command_invocations": self.command_invocations,
            "user_input_requests": self.user_input_requests,
            "duration_ms": int(self.duration_ms),
        } | ({"mcp_invocations": self.mcp_invocations} if self.mcp_invocations is not None else {})


@attrs.define
class GraderResult:
    """What one grader said about one run (the Go ``GraderResults`` shape)."""

    identifier: str
    type: str
    score: float
    passed: bool
    feedback: str = ""
    weight: float = 1.0
    details: dict = attrs.field(factory=dict)
    duration_ms: int = 0
    error: dict | None = None  # {"kind", "message"} when the grader could not judge
    #: fields of a saved result this version does not know, kept when a file is rewritten
    extra: dict = attrs.field(factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "weight": self.weight,
            "passed": self.passed,
            "feedback": self.feedback,
            "details": self.details,
            "duration_ms": self.duration_ms,
        }
        if self.error is not None:
            out["error"] = self.error
        if self.extra:
            out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out
