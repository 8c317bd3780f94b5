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

The per-run seam (:class:`RunSetup`, :data:`RunPreparer`) is in :mod:`waza_core.run.setup`;
grading a run (:func:`grade_run`) in :mod:`waza_core.grading.grade`.
"""

from __future__ import annotations

import time

from waza_core.errors import ExecutorError, WazaError
from waza_core.grading.base import make_grading_context
from waza_core.grading.grade import grade_run
from waza_core.model import RunEvidence
from waza_core.results.model import RunResult
from waza_core.run.execution import ExecutionRequest
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite, PreparedTask
from waza_core.run.setup import RunSetup, build_request

#: ``runs[].worker`` of runs done in the driver's own process
LOCAL_WORKER = "local"




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
    # a suite without run preparers (most) needs no RunSetup: the request is the plain one
    setup = RunSetup(prepared, task, unit, attempt, ws) if prepared.preparers else None
    try:
        if setup is None:
            request = build_request(prepared, ptask, unit, attempt, ws)
        else:
            for prepare in prepared.preparers:
                prepare(setup)
                if setup.abort is not None:
                    result = RunResult(run_number=unit.trial, attempts=attempt, status="error",
                                       error_msg=setup.abort, worker=worker)
                    result.extra.update(setup.result_fields)
                    return result
            request = setup.request()
        evidence = execute(prepared, request)
        if setup is not None:
            for collect in setup._collectors:
                collect(evidence)
        result = graded_result(prepared, ptask, unit, attempt, evidence, ws, ws if keep else None, worker)
        if setup is not None and setup.result_fields:
            result.extra.update(setup.result_fields)
        return result
    finally:
        try:
            if setup is not None and setup._cleanups:
                setup.run_cleanups()
        finally:
            try:
                if ws is not None and not keep:
                    workspaces.remove(ws)
            finally:
                prepared.attempt_ended()


def graded_result(prepared: PreparedSuite, ptask: PreparedTask, unit: RunUnit, attempt: int, evidence: RunEvidence,
                  ws: str | None, kept: str | None, worker: str) -> RunResult:
    """The run's result: an error when the executor failed, ``n/a`` under --skip-graders,
    else what its graders say."""
    if evidence.error:
        return RunResult.from_evidence(evidence, unit.trial, attempt, "error", {}, evidence.error, kept, worker)
    if prepared.settings.skip_graders:
        return RunResult.from_evidence(evidence, unit.trial, attempt, "n/a", {}, None, kept, worker)
    ctx = make_grading_context(ptask.task, evidence, ws, prepared.suite, prepared.cancel)
    validations, status, error = grade_run(ptask.graders, ctx)
    return RunResult.from_evidence(evidence, unit.trial, attempt, status, validations, error, kept, worker)


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
