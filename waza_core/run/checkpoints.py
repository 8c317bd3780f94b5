"""Task ``checkpoints``: graders that run after a given turn of a multi-turn task.

The semantics are those of waza (Go) ``internal/orchestration/checkpoints.go``:

* after turn ``after_turn`` (1-based: the prompt is turn 1, each follow-up one more)
  the checkpoint's graders grade the evidence of the conversation so far, with the
  live workspace; only the checkpoint's own graders run (not the task's, not the
  global ones, not ``expected.*``);
* the checkpoint's status is ``passed`` when every grader passed, ``failed`` when one
  did not, ``error`` when a grader could not judge;
* ``on_failure: stop`` and a status other than ``passed`` end the conversation after
  that turn: the run becomes ``error`` with ``checkpoint after_turn=N failed
  (on_failure: stop): <failed graders>`` and its entry is marked ``stopped: true``;
* ``on_failure: continue`` (the default) only records the result: the final graders
  alone decide the run's status;
* each run records ``runs[].checkpoints``: one entry per checkpoint that ran (its turn
  was reached), in turn order; with ``--skip-graders`` no checkpoint runs.

Executors report turns through ``ExecutionRequest.on_turn``; a suite with checkpoints
refuses an executor that does not (``reports_turns``), rather than skip them silently.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from waza_core.errors import WazaError
from waza_core.grading.base import Grader, GradingContext
from waza_core.grading.build import build_grader
from waza_core.grading.grade import grade_run
from waza_core.model import CheckpointSpec, RunEvidence

if TYPE_CHECKING:
    from waza_core.run.prepared import PreparedSuite
    from waza_core.run.setup import RunPreparer, RunSetup


def checkpoints(prepared: PreparedSuite) -> RunPreparer | None:
    """The run preparer of task checkpoints; None when no task has any."""
    with_checkpoints = [t for t in prepared.by_id.task_specs() if t.checkpoints]
    if not with_checkpoints:
        return None
    executor = prepared.executor
    if not executor.reports_turns:
        names = ", ".join(repr(t.id) for t in with_checkpoints[:3])
        raise WazaError(f"task(s) {names} have checkpoints, but executor {prepared.settings.executor!r} does not "
                        "report the turns of a conversation; use an executor that does (mock, cli, copilot-sdk)")
    graders: dict[tuple[str, int], list[Grader]] = {}
    for task in with_checkpoints:
        for cp in task.checkpoints:
            built = [build_grader(spec, prepared.suite, prepared.registry) for spec in cp.graders]
            graders[(task.id, cp.after_turn)] = built
            prepared.extra_graders.extend(built)
            if any(g.needs_workspace for g in built):
                prepared.by_id.keep(task.id).needs_workspace = True

    def prepare(setup: RunSetup) -> None:
        task = setup.task
        if not task.checkpoints or setup.prepared.settings.skip_graders:
            return
        run = CheckpointRun(setup, {cp.after_turn: (cp, graders[(task.id, cp.after_turn)]) for cp in task.checkpoints})
        setup.turn_listeners.append(run.after_turn)
        setup.collect_evidence(run.finish)

    return prepare


class CheckpointRun:
    """The checkpoints of one attempt of one run."""

    def __init__(self, setup: RunSetup, pending: dict[int, tuple[CheckpointSpec, list[Grader]]]) -> None:
        self.setup = setup
        self.pending = pending
        self.outcomes: list[dict] = []
        self.stop_message: str | None = None
        self.lock = threading.Lock()

    def after_turn(self, turn: int, evidence: RunEvidence) -> bool:
        """Grade the checkpoint of ``turn`` (if any); True when the conversation must stop."""
        with self.lock:
            entry = self.pending.pop(turn, None)
        if entry is None:
            return False
        cp, graders = entry
        setup = self.setup
        ctx = GradingContext(task=setup.task, evidence=evidence, workspace_dir=setup.workspace_dir,
                             suite=setup.prepared.suite, cancel=setup.prepared.cancel)
        validations, status, _ = grade_run(graders, ctx)
        outcome = {"after_turn": turn, "status": status,
                   "validations": {name: v.to_json() for name, v in validations.items()}}
        stop = status != "passed" and cp.on_failure == "stop"
        if stop:
            outcome["stopped"] = True
            failed = sorted(name for name, v in validations.items() if not v.passed)
            self.stop_message = f"checkpoint after_turn={turn} failed (on_failure: stop)" + (
                f": {', '.join(failed)}" if failed else "")
        with self.lock:
            self.outcomes.append(outcome)
        return stop

    def finish(self, evidence: RunEvidence) -> None:
        """After the executor returned: record the outcomes; a stop makes the run an error."""
        if self.stop_message:
            evidence.error = f"{evidence.error}; {self.stop_message}" if evidence.error else self.stop_message
        if self.outcomes:
            self.setup.result_fields["checkpoints"] = sorted(self.outcomes, key=lambda o: o["after_turn"])
