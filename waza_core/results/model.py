"""The results document as typed values: what ``waza run -o`` writes and ``waza grade`` reads.

One class per level of the file (document, config, summary, task, run, session
digest); the grader verdicts are :class:`waza_core.model.GraderResult`. They are
built in one place (:mod:`waza_core.run.aggregate` for a live run,
:mod:`waza_core.results.codec` when decoding a saved file) and turned into JSON in
one place (:mod:`waza_core.results.codec`).

Every class has an ``extra`` dict: the fields of a saved file this version does not
know (a newer waza, waza Go's ``golden``, ``cached``, ``group`` ...). They are kept
when a file is read and written again, after the known fields.

``None`` has two meanings, fixed per field and spelt out in the codec: for the
evidence fields (``tool_events``, ``usage`` ...) it is JSON ``null``, "not recorded";
for the few optional fields (``waza_version``, ``tags``, ``error_msg``, ``worker``,
``summary``, ``regraded``) it means the field is absent from the file.
"""

from __future__ import annotations

from typing import Any

import attrs

from waza_core.model import GraderResult, RunEvidence

#: the ``schemaVersion`` this writer puts in results files
RESULTS_SCHEMA_VERSION = "1.8"  # the same as waza_core.suite.versions.CURRENT_RESULTS


@attrs.define
class SessionDigest:
    """``runs[].session_digest``: a short account of the agent session."""

    tool_call_count: int = 0
    tools_used: list = attrs.field(factory=list)
    tool_calls: list = attrs.field(factory=list)
    errors: list = attrs.field(factory=list)
    usage: dict | None = None
    session_id: str | None = None
    extra: dict = attrs.field(factory=dict)


@attrs.define
class RunResult:
    """``tasks[].runs[]``: one run of one task: its status, its grades and all its evidence."""

    run_number: int
    attempts: int
    status: str  # passed | failed | error | n/a
    duration_ms: int = 0
    validations: dict[str, GraderResult] = attrs.field(factory=dict)
    session_digest: SessionDigest = attrs.field(factory=SessionDigest)
    final_output: str = ""
    transcript: list = attrs.field(factory=list)
    outcome: dict = attrs.field(factory=dict)
    tool_events: list | None = None
    host_lifecycle: dict | None = None
    command_invocations: list | None = None
    #: calls answered by ``mcp_mocks``; None = absent (written only when recorded)
    mcp_invocations: list | None = None
    user_input_requests: list | None = None
    skill_invocations: list | None = None
    usage: dict | None = None
    session_id: str | None = None
    workspace_dir: str | None = None
    #: where the run ran: ``local``, or a node id of a distributed backend; None = absent
    worker: str | None = None
    #: why the run is an error; None = absent
    error_msg: str | None = None
    extra: dict = attrs.field(factory=dict)

    @classmethod
    def from_evidence(cls, evidence: RunEvidence, run_number: int, attempts: int, status: str,
                      validations: dict[str, GraderResult] | None, error: str | None,
                      workspace: str | None, worker: str | None = None) -> RunResult:
        """A finished run from what the executor recorded and what the graders said."""
        calls = evidence.tool_calls
        tools_used = [c.get("name", "") for c in calls if isinstance(c, dict)] if calls else []
        session_id = evidence.session_id
        # positional, in field order: a run is made for every attempt of every task
        return cls(
            run_number, attempts, status, evidence.duration_ms, validations if validations is not None else {},
            SessionDigest(len(tools_used), tools_used, calls, [], evidence.usage, session_id),
            evidence.output, evidence.transcript, evidence.outcome, evidence.tool_events, evidence.host_lifecycle,
            evidence.command_invocations, evidence.mcp_invocations, evidence.user_input_requests,
            evidence.skill_invocations, evidence.usage, session_id, workspace, worker, error or None,
        )

    def evidence(self) -> RunEvidence:
        """The grading input of this run again (``waza grade``)."""
        digest = self.session_digest
        return RunEvidence(
            output=self.final_output, transcript=self.transcript, tool_calls=digest.tool_calls,
            tool_events=self.tool_events, host_lifecycle=self.host_lifecycle,
            command_invocations=self.command_invocations, mcp_invocations=self.mcp_invocations,
            user_input_requests=self.user_input_requests,
            skill_invocations=self.skill_invocations, outcome=self.outcome, duration_ms=self.duration_ms,
            # waza (Go) keeps usage only in session_digest, where its `waza grade` reads it
            usage=self.usage if self.usage is not None else digest.usage,
            session_id=self.session_id if self.session_id is not None else digest.session_id,
        )


@attrs.define
class TaskResult:
    """``tasks[]``: every run of one task, its status and its statistics."""

    test_id: str
    display_name: str
    status: str  # passed | failed | error | n/a
    runs: list[RunResult] = attrs.field(factory=list)
    #: the statistics of :func:`waza_core.results.stats.task_stats` (None: no graded run)
    stats: dict[str, Any] | None = None
    tags: list[str] | None = None  # None = absent
    extra: dict = attrs.field(factory=dict)


@attrs.define
class Summary:
    """``summary``: the whole run in numbers (waza Go's formulas, see results/stats.py)."""

    total_tests: int = 0
    succeeded: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    success_rate: float = 0.0
    aggregate_score: float = 0.0
    weighted_score: float = 0.0
    min_score: float = 0.0
    max_score: float = 0.0
    std_dev: float = 0.0
    duration_ms: int = 0
    usage: dict | None = None
    extra: dict = attrs.field(factory=dict)


@attrs.define
class RunConfig:
    """``config``: how the suite was run. The fields after ``timeout_sec`` are absent
    (None) in files of waza (Go)."""

    runs_per_test: int | None = 1  # None = absent
    model_id: str = ""
    engine_type: str = ""
    timeout_sec: int = 0
    judge_model: str | None = None
    max_attempts: int | None = None
    parallel: bool | None = None
    workers: int | None = None
    skip_graders: bool | None = None
    regraded: bool | None = None  # set by ``waza grade``
    extra: dict = attrs.field(factory=dict)


@attrs.define
class ResultsDocument:
    """The whole results file."""

    eval_id: str
    skill: str
    eval_name: str
    timestamp: str
    config: RunConfig = attrs.field(factory=RunConfig)
    summary: Summary | None = attrs.field(factory=Summary)
    tasks: list[TaskResult] = attrs.field(factory=list)
    incomplete: bool = False
    metrics: dict = attrs.field(factory=dict)
    waza_version: str | None = None
    #: as read; None when the file has none (waza Go before 1.0)
    schema_version: str | None = RESULTS_SCHEMA_VERSION
    extra: dict = attrs.field(factory=dict)


def exit_code(doc: ResultsDocument) -> int:
    """0 when every task passed (or was only run, with --skip-graders), 1 otherwise, as in
    waza (Go): also 1 when ``metrics.trigger_accuracy`` did not pass, or (beyond waza) when
    ``waza run --audit`` found a task that passes with no agent; for an A/B run
    (``is_baseline``) 1 when the skills did not raise the success rate."""
    s = doc.summary
    if doc.extra.get("is_baseline") and isinstance(doc.extra.get("baseline_outcome"), dict):
        source = doc.extra.get("baseline_from")
        if isinstance(source, dict) and "compared_success_rate" in source:  # only the tasks both sides ran
            return 1 if source["compared_success_rate"] <= source["compared_baseline_success_rate"] else 0
        base = (doc.extra["baseline_outcome"].get("summary") or {}).get("success_rate", 0.0)
        return 1 if s is None or s.success_rate <= base else 0
    spend = doc.extra.get("spend")
    if isinstance(spend, dict) and spend.get("runs_skipped"):  # --max-spend held runs back
        return 1
    audit = doc.extra.get("audit")  # waza run --audit: a task that passes with no agent is no pass
    if isinstance(audit, dict) and audit.get("vacuous_tasks"):
        return 1
    trigger = doc.metrics.get("trigger_accuracy") if isinstance(doc.metrics, dict) else None
    if isinstance(trigger, dict) and trigger.get("passed") is False:
        return 1
    return 1 if s is not None and (s.failed or s.errors) else 0
