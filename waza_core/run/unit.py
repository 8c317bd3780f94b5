"""One run unit: make the workspace, prepare, execute, grade; one :class:`RunResult`.

:func:`run_unit` is the only thing a backend runs. It needs a :class:`RunUnit` (a
plain description: task id, trial, model, attempt policy) and a
:class:`~waza_core.run.prepared.PreparedSuite` of the process it runs in; it touches
no driver state, so it runs the same in the driver's threads or on another machine.

The steps of one attempt::

    workspace = fresh temp folder (when anyone can see it)
    for preparer in prepared.preparers:      # the per-run seam, see below
        preparer(setup)                      # may fill the workspace, add to the request,
                                             # register evidence collectors and cleanups
    evidence = executor.execute(setup.request())
    for collect in setup evidence collectors: collect(evidence)   # before grading
    validations = each grader on GradingContext(evidence, workspace)
    for cleanup in setup cleanups (last registered first): cleanup()
    remove the workspace (unless --keep-workspaces)

**The per-run seam.** A *run preparer* is a callable ``preparer(setup: RunSetup) ->
None``, built once per prepared suite by a factory listed in
:data:`waza_core.run.preparers.PREPARER_FACTORIES`. After the workspace is made and
before the executor runs it may:

- write into ``setup.workspace_dir`` (the inputs preparer copies the fixture and the
  ``inputs.files``; a git-worktree feature would check one out here);
- add to what the executor gets: ``setup.environment`` (dict), ``setup.path_prepend``
  (list: command-mock shims), ``setup.mcp_servers`` (dict: name -> server config),
  ``setup.workdir``; :meth:`RunSetup.request` turns them into the
  :class:`~waza_core.run.execution.ExecutionRequest`;
- ``setup.collect_evidence(fn)``: ``fn(evidence)`` runs after the executor returns and
  before grading, to add what it observed (a command mock's ``command_invocations``);
- ``setup.add_cleanup(fn)``: ``fn()`` runs after grading, always, last registered
  first (stop a mock server, remove a worktree).

A preparer that raises stops the whole suite run like a workspace that cannot be
filled: a run that cannot even start is an infrastructure problem, not a verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs

from waza_core.errors import ExecutorError, GraderError, WazaError
from waza_core.grading import deadline
from waza_core.grading.base import Grader, GradingContext
from waza_core.limits import DEFAULT_GRADER_TIMEOUT_SECONDS
from waza_core.model import GraderResult, RunEvidence, TaskSpec
from waza_core.results.model import RunResult
from waza_core.run.execution import ExecutionRequest
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite, PreparedTask

#: ``runs[].worker`` of runs done in the driver's own process
LOCAL_WORKER = "local"


@attrs.define
class RunSetup:
    """One attempt of one run as it is being set up: what preparers see and extend."""

    prepared: PreparedSuite
    task: TaskSpec
    unit: RunUnit
    attempt: int
    #: the run's fresh workspace; None when nobody could see one (see ``needs_workspace``)
    workspace_dir: str | None
    environment: dict[str, str] = attrs.field(factory=dict)
    path_prepend: list[str] = attrs.field(factory=list)
    mcp_servers: dict[str, dict] = attrs.field(factory=dict)
    workdir: str | None = None
    #: ``fn(turn, evidence so far) -> stop?`` after each turn (see ExecutionRequest.on_turn)
    turn_listeners: list[Callable[[int, RunEvidence], bool]] = attrs.field(factory=list)
    #: fields a feature adds to this run's entry in the results (``checkpoints``)
    result_fields: dict = attrs.field(factory=dict)
    #: set by a preparer to skip the agent: the run is an ``error`` with this message
    #: (a failed ``before_task`` hook)
    abort: str | None = None
    _collectors: list[Callable[[RunEvidence], None]] = attrs.field(factory=list)
    _cleanups: list[Callable[[], None]] = attrs.field(factory=list)

    def collect_evidence(self, fn: Callable[[RunEvidence], None]) -> None:
        """Call ``fn(evidence)`` after the executor returns, before grading."""
        self._collectors.append(fn)

    def add_cleanup(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` after grading, also when the run failed (last added, first called)."""
        self._cleanups.append(fn)

    def request(self) -> ExecutionRequest:
        task, prepared = self.task, self.prepared
        return ExecutionRequest(
            task=task, prompt=task.prompt, workspace_dir=self.workspace_dir,
            timeout_seconds=task.timeout_seconds or prepared.suite.config.timeout_seconds,
            model=self.unit.model, skill_directories=prepared.skill_directories(task),
            run_number=self.unit.trial, attempt=self.attempt, files=prepared.by_id[task.id].inputs.files,
            environment=self.environment, path_prepend=tuple(self.path_prepend),
            mcp_servers=self.mcp_servers, workdir=self.workdir,
            on_turn=self._on_turn if self.turn_listeners else None,
        )

    def _on_turn(self, turn: int, evidence: RunEvidence) -> bool:
        stop = False
        for listen in self.turn_listeners:
            stop = bool(listen(turn, evidence)) or stop
        return stop

    def run_cleanups(self) -> None:
        problems = []
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception as exc:  # one cleanup's failure must not skip the others
                problems.append(f"{type(exc).__name__}: {exc}")
        if problems:
            raise WazaError(f"run cleanup of task {self.task.id!r} failed: " + "; ".join(problems))


RunPreparer = Callable[[RunSetup], None]


def run_unit(prepared: PreparedSuite, unit: RunUnit, worker: str = LOCAL_WORKER) -> RunResult:
    """One trial of one task, with retries of ``failed`` attempts up to ``unit.max_attempts``."""
    task = prepared.by_id[unit.task_id]
    attempt = 0
    while True:
        attempt += 1
        result = run_attempt(prepared, task, unit, attempt, worker)
        if result.status != "failed" or attempt >= unit.max_attempts or prepared.cancel.is_set():
            return result


def run_attempt(prepared: PreparedSuite, ptask: PreparedTask, unit: RunUnit, attempt: int,
                worker: str) -> RunResult:
    keep = prepared.settings.keep_workspaces
    workspaces = prepared.workspaces
    task = ptask.task
    prepared.attempt_started()
    try:
        ws = workspaces.take() if ptask.needs_workspace else None
    except BaseException:
        prepared.attempt_ended()
        raise
    setup = RunSetup(prepared, task, unit, attempt, ws)
    try:
        for prepare in prepared.preparers:
            prepare(setup)
            if setup.abort is not None:
                result = RunResult(run_number=unit.trial, attempts=attempt, status="error", error_msg=setup.abort,
                                   worker=worker)
                result.extra.update(setup.result_fields)
                return result
        evidence = execute(prepared, setup.request())
        for collect in setup._collectors:
            collect(evidence)
        kept = ws if keep else None
        if evidence.error:
            result = RunResult.from_evidence(evidence, unit.trial, attempt, "error", {}, evidence.error, kept, worker)
        elif prepared.settings.skip_graders:
            result = RunResult.from_evidence(evidence, unit.trial, attempt, "n/a", {}, None, kept, worker)
        else:
            ctx = GradingContext(task=task, evidence=evidence, workspace_dir=ws, suite=prepared.suite,
                                 cancel=prepared.cancel)
            validations, status, error = grade_run(ptask.graders, ctx)
            result = RunResult.from_evidence(evidence, unit.trial, attempt, status, validations, error, kept, worker)
        if setup.result_fields:
            result.extra.update(setup.result_fields)
        return result
    finally:
        try:
            if setup._cleanups:
                setup.run_cleanups()
        finally:
            try:
                if ws is not None and not keep:
                    workspaces.remove(ws)
            finally:
                prepared.attempt_ended()


def execute(prepared: PreparedSuite, request: ExecutionRequest) -> RunEvidence:
    """Run the executor; whatever goes wrong becomes the run's error, never an exception."""
    t0 = time.perf_counter()
    try:
        evidence = prepared.executor.execute(request)
    except (ExecutorError, WazaError) as exc:
        evidence = RunEvidence(error=str(exc))
    except Exception as exc:
        evidence = RunEvidence(error=f"executor {prepared.settings.executor!r} failed: {type(exc).__name__}: {exc}")
    if not evidence.duration_ms:
        evidence.duration_ms = int((time.perf_counter() - t0) * 1000)
    return evidence


def grade_run(graders: Sequence[Grader], ctx: GradingContext) -> tuple[dict[str, GraderResult], str, str | None]:
    """Run every grader on one run, each isolated and within its time limit
    (:mod:`waza_core.grading.deadline`). Returns (validations, status, error)."""
    validations: dict[str, GraderResult] = {}
    errors: list[str] = []
    for g in graders:
        t0 = time.perf_counter()
        res = grade_one(g, ctx)
        res.duration_ms = int((time.perf_counter() - t0) * 1000)
        if res.error:
            errors.append(f"grader {g.spec.name!r}: {res.error['message']}")
        validations[res.identifier] = res
    if errors:
        return validations, "error", "; ".join(errors)
    passed = all(v.passed for v in validations.values())
    return validations, "passed" if passed else "failed", None


def grading_limit(g: Grader, ctx: GradingContext) -> float:
    """The grader's own limit (``Grader.time_limit``), else the run's timeout_seconds."""
    if g.time_limit:
        return float(g.time_limit)
    task_limit = ctx.task.timeout_seconds if ctx.task is not None else None
    suite_limit = ctx.suite.config.timeout_seconds if ctx.suite is not None else None
    return float(task_limit or suite_limit or DEFAULT_GRADER_TIMEOUT_SECONDS)


def grade_one(g: Grader, ctx: GradingContext) -> GraderResult:
    """One grader on one run: its result, or a grader-error result; never raises
    (except KeyboardInterrupt, which stops the whole run)."""
    limit = grading_limit(g, ctx)
    if g.bounded:
        outcome = deadline.in_thread(lambda: g.grade(ctx), limit, ctx.cancel)
    else:
        outcome = _on_helper(g, ctx, limit)
    kind, value = outcome
    if kind == "ok":
        return value
    if kind == "timeout":
        return _error_result(g, "timeout", f"grading took longer than its limit of {limit:g} s; "
                                           "the grader was stopped")
    if kind == "cancelled":
        return _error_result(g, "cancelled", "grading was stopped: the run was interrupted")
    if isinstance(value, GraderError):
        return _error_result(g, value.kind, str(value), value.details)
    return _error_result(g, "exception", f"{type(value).__name__}: {value}")  # a buggy plugin


def _on_helper(g: Grader, ctx: GradingContext, limit: float) -> tuple[str, object]:
    """A grader that does not declare itself bounded: on a helper thread, with its own
    cancel event (linked to the run's), so the run can move on when it overruns."""
    from waza_core.procs import CancelEvent

    own = CancelEvent()
    token = ctx.cancel._subscribe(own.set) if isinstance(ctx.cancel, CancelEvent) else None
    try:
        return deadline.on_helper(lambda: g.grade(attrs.evolve(ctx, cancel=own)), limit, own, ctx.cancel)
    finally:
        if token is not None:
            ctx.cancel._unsubscribe(token)


def _error_result(g: Grader, kind: str, message: str, details: dict | None = None) -> GraderResult:
    return GraderResult(identifier=g.spec.name, type=g.spec.type, score=0.0, passed=False,
                        feedback=f"grader error ({kind}): {message}", weight=g.spec.weight,
                        details=dict(details or {}), error={"kind": kind, "message": message})
