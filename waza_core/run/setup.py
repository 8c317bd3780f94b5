"""The per-run seam that features extend: :class:`RunSetup` and :data:`RunPreparer`.

A *run preparer* is a callable ``preparer(setup: RunSetup) ->
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

from collections.abc import Callable

import attrs

from waza_core.errors import WazaError
from waza_core.model import RunEvidence, TaskSpec
from waza_core.run.execution import ExecutionRequest, make_request
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite, PreparedTask


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
        prepared = self.prepared
        return build_request(prepared, prepared.by_id[self.task.id], self.unit, self.attempt, self.workspace_dir,
                             self.environment, tuple(self.path_prepend), self.mcp_servers, self.workdir,
                             self._on_turn if self.turn_listeners else None)

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


def build_request(prepared: PreparedSuite, ptask: PreparedTask, unit: RunUnit, attempt: int,
                  workspace_dir: str | None, environment: dict[str, str] | None = None,
                  path_prepend: tuple[str, ...] = (), mcp_servers: dict[str, dict] | None = None,
                  workdir: str | None = None,
                  on_turn: Callable[[int, RunEvidence], bool] | None = None) -> ExecutionRequest:
    """The executor's request for one attempt: :meth:`RunSetup.request` passes what the
    preparers added; an attempt that no preparer extends (a suite without any) calls it
    without building a RunSetup. Positional, in field order: one is made per attempt."""
    task = ptask.task
    return make_request(
        task, task.prompt, workspace_dir, task.timeout_seconds or prepared.suite.config.timeout_seconds,
        unit.model, prepared.skill_directories(task), unit.trial, attempt, ptask.inputs.files,
        {} if environment is None else environment, path_prepend, {} if mcp_servers is None else mcp_servers,
        workdir, on_turn,
    )
