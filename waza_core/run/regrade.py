"""Offline grading: grade the runs of a saved results file with a suite's graders.

This is ``waza grade`` (waza Go ``cmd_grade.go``) as a library function, so the
optimizer or a notebook can regrade without the CLI. The saved file is read by the
one tolerant decoder (:mod:`waza_core.results.codec`), and each saved run's grading
input is rebuilt by :meth:`RunResult.evidence`: fields an older file lacks become
``None`` (so a program grader's ``context.json`` says "not recorded", never
"recorded and empty"). The workspace graders see is the one passed in, because the
run's own workspace was deleted after the run.

Graders are started once before the first run (:meth:`Grader.start`, with the judge
model of ``--judge-model``, else ``config.judge_model``) and closed after the last,
as in ``waza run``.

Runs whose agent failed (status ``error`` with no grader error) stay errors: there is
no output to judge. Runs that were ``error`` only because a grader could not judge
(a program grader that timed out, say) kept their whole evidence and are regraded.
"""

from __future__ import annotations

import datetime
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from waza_core._version import __version__
from waza_core.errors import WazaError
from waza_core.grading.base import Grader, GraderSetup, GradingContext
from waza_core.grading.build import build_grader, close_graders, executor_factory, start_graders
from waza_core.grading.grade import grade_run
from waza_core.model import Suite, TaskSpec
from waza_core.paths import display_path
from waza_core.results import stats as stats_mod
from waza_core.results import triage
from waza_core.results.model import RESULTS_SCHEMA_VERSION, ResultsDocument, RunResult, TaskResult

if TYPE_CHECKING:  # only --repeat builds one; its module imports numpy (~140 ms a plain grade need not pay)
    from waza_core.run.judge_agreement import JudgeRepeats


@attrs.define
class GradeReport:
    """What :func:`regrade` produced."""

    #: the full results document (regraded tasks first, then the others unchanged)
    outcome: ResultsDocument
    #: the ``waza grade`` stdout document (waza Go ``GradeOutcome`` plus ``status``)
    summary: dict[str, Any]
    #: ids of the regraded tasks, in suite order
    graded: list[str]
    #: tasks of the suite that were not graded and why, and what the file got wrong
    warnings: list[str] = attrs.field(factory=list)
    #: ``--repeat K``: the ``judge_agreement`` block (also in ``outcome`` and ``summary``)
    judge_agreement: dict[str, Any] | None = None


def agent_failed(run: RunResult) -> bool:
    """True for a saved run whose agent (not a grader) failed: it keeps its error."""
    if run.status != "error" and not run.error_msg:
        return False
    return not any(v.error for v in run.validations.values())


def regrade(
    suite: Suite,
    registry,
    results: ResultsDocument | Mapping[str, Any],
    *,
    task_id: str | None = None,
    workspace_dir: str | os.PathLike[str] | None = None,
    cancel: threading.Event | None = None,
    on_run: Callable[[str, RunResult], None] | None = None,
    judge_model: str | None = None,
    judges: JudgeRepeats | None = None,
    require_workspace: bool = False,
) -> GradeReport:
    """Grade every saved run of ``results`` that belongs to a task of ``suite``.

    ``task_id`` keeps one task (an error when it is not in the suite or has no run).
    ``workspace_dir`` is what file-reading graders see (default: the current
    directory). ``on_run(task_id, run)`` is called after each regraded run.
    ``judge_model`` overrides ``config.judge_model`` for judge graders. ``judges``
    (``--repeat K``) asks every judge grader K times per run and records its agreement.
    ``require_workspace``: with no ``workspace_dir``, a grader that reads the workspace
    is an error (:class:`WorkspaceNeeded`) instead of grading the current directory.
    """
    warnings: list[str] = []
    doc = _as_document(results, warnings)
    regraded = grade_tasks(suite, registry, doc, warnings, task_id=task_id, workspace_dir=workspace_dir,
                           cancel=cancel, on_run=on_run, judge_model=judge_model, judges=judges,
                           require_workspace=require_workspace)
    outcome = merged_document(doc, suite, regraded)
    summary = grade_summary(regraded)
    block = None
    if judges is not None:
        block = outcome.extra["judge_agreement"] = summary["judge_agreement"] = judges.block()
    return GradeReport(outcome=outcome, summary=summary, graded=[t.test_id for t in regraded],
                       warnings=warnings, judge_agreement=block)


def grade_tasks(suite: Suite, registry, doc: ResultsDocument, warnings: list[str], *, task_id: str | None = None,
                workspace_dir: str | os.PathLike[str] | None = None, cancel: threading.Event | None = None,
                on_run: Callable[[str, RunResult], None] | None = None, judge_model: str | None = None,
                judges: JudgeRepeats | None = None, require_workspace: bool = False) -> list[TaskResult]:
    """The regraded tasks of :func:`regrade`, in suite order (``doc`` needs to hold only
    the saved entries of the suite's tasks: :mod:`waza_core.run.regrade_stream` gives it
    no other)."""
    todo = tasks_to_grade(suite, doc, task_id, warnings)
    workspace = os.path.abspath(workspace_dir if workspace_dir is not None else os.curdir)
    graders = SuiteGraders(suite, registry, [task for task, _ in todo])
    if require_workspace and workspace_dir is None and graders.workspace_readers():
        raise WorkspaceNeeded(graders.workspace_readers())
    graders.start(GraderSetup(judge_model=judge_model if judge_model is not None else suite.config.judge_model,
                              model=doc.config.model_id or suite.config.model, executor=suite.config.executor,
                              new_executor=executor_factory(suite, registry), cancel=cancel))
    try:
        return [regrade_task(task, saved, graders.of(task), suite, workspace, cancel, on_run, judges)
                for task, saved in todo]
    finally:
        graders.close()


def _as_document(results: ResultsDocument | Mapping[str, Any], warnings: list[str]) -> ResultsDocument:
    if isinstance(results, ResultsDocument):
        return results
    # deferred: waza_core.results.codec adds ~17.4 ms to importing this module
    from waza_core.results.codec import decode_results

    return decode_results(results, warnings)


def tasks_to_grade(suite: Suite, doc: ResultsDocument, task_id: str | None,
                   warnings: list[str]) -> list[tuple[TaskSpec, TaskResult]]:
    """(suite task, its saved entry) for each task to grade, in suite order.

    A suite task without runs in the file is a warning, or the error when it is the
    one ``task_id`` asked for; no task at all to grade is an error."""
    tasks: list[TaskSpec] = list(suite.tasks)
    if task_id is not None:
        tasks = [t for t in tasks if t.id == task_id]
        if not tasks:

            raise WazaError(f"task {task_id!r} not found in {display_path(suite.file)} (or it is disabled)")
    saved: dict[str, TaskResult] = {}
    for entry in doc.tasks:
        saved.setdefault(entry.test_id, entry)
    todo = []
    for task in tasks:
        entry = saved.get(task.id)
        if entry is None or not entry.runs:
            why = "is not in the results file" if entry is None else "has no run in the results file"
            if task_id is not None:
                raise WazaError(f"task {task.id!r} {why}")
            warnings.append(f"task {task.id!r} {why}; skipped")
            continue
        todo.append((task, entry))
    if not todo:
        raise WazaError("no task of the suite has runs in the results file; nothing was graded"
                        + (f" ({'; '.join(warnings)})" if warnings else ""))
    return todo


class WorkspaceNeeded(WazaError):
    """``waza grade`` without ``--workspace`` for graders that read the run's workspace:
    that folder was deleted after the run, and grading the current folder instead
    silently judged files the agent never wrote."""

    def __init__(self, readers: list[str]) -> None:
        self.readers = readers
        shown = ", ".join(readers[:10]) + (f" and {len(readers) - 10} more" if len(readers) > 10 else "")
        super().__init__(f"--workspace is required: grader(s) {shown} read the run's workspace, which is gone "
                         "after the run; pass --workspace DIR, a folder holding the files to grade (e.g. a copy of "
                         "the agent's work, or `--workspace .` for the current folder)")


class SuiteGraders:
    """The graders of the tasks to grade, built once, started once and closed once."""

    def __init__(self, suite: Suite, registry, tasks: list[TaskSpec]) -> None:
        self.global_graders = [build_grader(s, suite, registry) for s in suite.graders]
        self.task_graders = {t.id: [build_grader(s, suite, registry) for s in t.graders] for t in tasks}

    def workspace_readers(self) -> list[str]:
        """``'name' (type, where)`` of each grader that may read the workspace
        (``needs_workspace``: file, diff, program, a judge in the run's workspace, and
        plugin graders unless they say otherwise), each one once."""
        seen: dict[str, None] = {}
        for g in self.all():
            if g.needs_workspace:
                seen.setdefault(f"{g.spec.name!r} ({g.spec.type}, {g.spec.where})", None)
        return list(seen)

    def of(self, task: TaskSpec) -> list[Grader]:
        return self.global_graders + self.task_graders[task.id]

    def all(self) -> list[Grader]:
        return self.global_graders + [g for gs in self.task_graders.values() for g in gs]

    def start(self, setup: GraderSetup) -> None:
        try:
            start_graders(self.all(), setup)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        close_graders(self.all())


def regrade_task(task: TaskSpec, saved: TaskResult, graders: list[Grader], suite: Suite, workspace: str,
                 cancel: threading.Event | None, on_run: Callable[[str, RunResult], None] | None,
                 judges: JudgeRepeats | None = None) -> TaskResult:
    """A saved task with every run graded again; the fields this version does not know are kept."""
    # deferred: waza_core.run.aggregate adds ~87.5 ms to importing this module
    from waza_core.run.aggregate import task_result

    runs = []
    for run in saved.runs:
        runs.append(regrade_run(run, task, graders, suite, workspace, cancel, judges))
        if on_run is not None:
            on_run(task.id, runs[-1])
    entry = task_result(task, runs)
    entry.extra = saved.extra
    return entry


def regrade_run(run: RunResult, task: TaskSpec, graders: list[Grader], suite: Suite, workspace: str,
                cancel: threading.Event | None, judges: JudgeRepeats | None = None) -> RunResult:
    """One saved run graded again; an agent failure stays an error."""
    evidence = run.evidence()
    if agent_failed(run):
        status, validations, error = "error", {}, run.error_msg or "the run failed before grading"
    else:
        ctx = GradingContext(task=task, evidence=evidence, workspace_dir=workspace, suite=suite, cancel=cancel)
        validations, status, error = grade_run(graders, ctx)
        if judges is not None:
            judges.judge(graders, ctx, validations, task.id, run.run_number)
    new = RunResult.from_evidence(evidence, run.run_number, run.attempts, status, validations, error,
                                  run.workspace_dir, worker=run.worker)
    new.extra = run.extra
    new.session_digest.extra = run.session_digest.extra
    return new


def merged_document(doc: ResultsDocument, suite: Suite, regraded: list[TaskResult]) -> ResultsDocument:
    """The saved document with the regraded tasks first, the others after them unchanged,
    a new summary, and ``config.regraded``."""
    done = {t.test_id for t in regraded}
    tasks = regraded + [t for t in doc.tasks if t.test_id not in done]
    config = attrs.evolve(doc.config, regraded=True)
    if config.runs_per_test is None:
        config.runs_per_test = max((len(t.runs) for t in tasks), default=1) or 1
    duration = doc.summary.duration_ms if doc.summary is not None else 0
    merged = attrs.evolve(
        doc,
        schema_version=RESULTS_SCHEMA_VERSION,
        skill=doc.skill or suite.skill,
        eval_name=doc.eval_name or suite.name,
        timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        waza_version=_version(),
        config=config,
        summary=stats_mod.summarize(tasks, duration),
        metrics={},
        tasks=tasks,
    )
    triage.annotate_document(merged)  # the regraded runs' categories and the new counts
    return merged


def grade_summary(tasks: list[TaskResult]) -> dict[str, Any]:
    """The ``waza grade`` stdout document: per task the mean weighted run score, whether
    every run passed, and each grader's mean score across the runs."""
    out: dict[str, Any] = {}
    for t in tasks:
        weighted = [stats_mod.run_scores(r.validations)[1] for r in t.runs]
        per_grader: dict[str, list[float]] = {}
        for r in t.runs:
            for name, v in r.validations.items():
                per_grader.setdefault(name, []).append(float(v.score))
        out[t.test_id] = {
            "overall_score": sum(weighted) / len(weighted) if weighted else 0.0,
            "passed": t.status == "passed",
            "status": t.status,
            "grader_averages": {name: sum(xs) / len(xs) for name, xs in per_grader.items()},
        }
    scores = [v["overall_score"] for v in out.values()]
    return {
        "overall_score": sum(scores) / len(scores) if scores else 0.0,
        "passed": bool(out) and all(v["passed"] for v in out.values()),
        "tasks": out,
    }


def _version() -> str:

    return __version__
