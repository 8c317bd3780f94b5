"""Offline grading: grade the runs of a saved results file with a suite's graders.

This is ``waza grade`` (waza Go ``cmd_grade.go``) as a library function, so the
optimizer or a notebook can regrade without the CLI. Each saved run's grading input
is rebuilt by :func:`waza_core.run.engine.evidence_from_run`: fields an older file lacks
become ``None`` (so a program grader's ``context.json`` says "not recorded", never
"recorded and empty"). The workspace graders see is the one passed in, because the
run's own workspace was deleted after the run.

Runs whose agent failed (status ``error`` with no grader error) stay errors: there is
no output to judge. Runs that were ``error`` only because a grader could not judge
(a program grader that timed out, say) kept their whole evidence and are regraded.
"""

from __future__ import annotations

import datetime
import os
import threading
from collections.abc import Callable
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.grading.base import GraderSetup, GradingContext
from waza_core.model import Suite, TaskSpec
from waza_core.results import stats as stats_mod
from waza_core.run.engine import (
    RESULTS_SCHEMA_VERSION,
    build_grader,
    close_graders,
    evidence_from_run,
    executor_factory,
    grade_run,
    run_json,
    start_graders,
    task_json,
)


@attrs.define
class GradeReport:
    """What :func:`regrade` produced."""

    #: the full results document (regraded tasks first, then the others unchanged)
    outcome: dict[str, Any]
    #: the ``waza grade`` stdout document (waza Go ``GradeOutcome`` plus ``status``)
    summary: dict[str, Any]
    #: ids of the regraded tasks, in suite order
    graded: list[str]
    #: tasks of the suite that were not graded, and why
    warnings: list[str] = attrs.field(factory=list)


def agent_failed(run: dict) -> bool:
    """True for a saved run whose agent (not a grader) failed: it keeps its error."""
    if run.get("status") != "error" and not run.get("error_msg"):
        return False
    validations = run.get("validations") or {}
    return not any(isinstance(v, dict) and v.get("error") for v in validations.values())


def regrade(
    suite: Suite,
    registry,
    results: dict[str, Any],
    *,
    task_id: str | None = None,
    workspace_dir: str | os.PathLike[str] | None = None,
    cancel: threading.Event | None = None,
    on_run: Callable[[str, dict], None] | None = None,
) -> GradeReport:
    """Grade every saved run of ``results`` that belongs to a task of ``suite``.

    ``task_id`` keeps one task (an error when it is not in the suite or has no run).
    ``workspace_dir`` is what file-reading graders see (default: the current
    directory). ``on_run(task_id, run)`` is called after each regraded run.
    """
    tasks: list[TaskSpec] = list(suite.tasks)
    if task_id is not None:
        tasks = [t for t in tasks if t.id == task_id]
        if not tasks:
            from waza_core.paths import display_path

            raise WazaError(f"task {task_id!r} not found in {display_path(suite.file)} (or it is disabled)")
    entries = results.get("tasks") if isinstance(results.get("tasks"), list) else []
    saved: dict[str, dict] = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("test_id"), str):
            saved.setdefault(entry["test_id"], entry)
    workspace = os.path.abspath(workspace_dir if workspace_dir is not None else os.curdir)
    setup = GraderSetup(judge_model=suite.config.judge_model, model=suite.config.model,
                        executor=suite.config.executor, new_executor=executor_factory(suite, registry),
                        cancel=cancel)
    started: list = []  # every grader started so far, closed at the end whatever happens
    try:
        return _regrade(suite, registry, results, tasks, saved, entries, task_id, workspace, cancel, on_run,
                        setup, started)
    finally:
        close_graders(started)


def _regrade(suite, registry, results, tasks, saved, entries, task_id, workspace, cancel, on_run, setup,
             started) -> GradeReport:
    def build(specs) -> list:
        graders = [build_grader(s, suite, registry) for s in specs]
        for g in graders:
            start_graders([g], setup)
            started.append(g)
        return graders

    global_graders = build(suite.graders)

    warnings: list[str] = []
    regraded: list[dict] = []
    graded: list[str] = []
    for task in tasks:
        entry = saved.get(task.id)
        runs = (entry or {}).get("runs")
        if not runs or not isinstance(runs, list):
            why = "is not in the results file" if entry is None else "has no run in the results file"
            if task_id is not None:
                raise WazaError(f"task {task.id!r} {why}")
            warnings.append(f"task {task.id!r} {why}; skipped")
            continue
        graders = global_graders + build(task.graders)
        new_runs = []
        for i, run in enumerate(runs):
            if not isinstance(run, dict):
                raise WazaError(f"task {task.id!r}: run {i + 1} in the results file is not an object")
            new_runs.append(_regrade_run(run, i + 1, task, graders, suite, workspace, cancel))
            if on_run is not None:
                on_run(task.id, new_runs[-1])
        regraded.append(task_json(task, new_runs))
        graded.append(task.id)
    if not graded:
        raise WazaError("no task of the suite has runs in the results file; nothing was graded"
                        + (f" ({'; '.join(warnings)})" if warnings else ""))

    done = set(graded)
    kept = []
    for t in entries:
        if isinstance(t, dict) and isinstance(t.get("test_id"), str) and t["test_id"] in done:
            continue
        if _countable(t):
            kept.append(t)
        else:
            warnings.append(f"results entry {_short(t)} is not a task with 'test_id', 'status', 'runs' "
                            "and 'stats' as waza writes them; left out")
    all_tasks = regraded + kept
    summary_in = results.get("summary") if isinstance(results.get("summary"), dict) else {}
    config_in = results.get("config") if isinstance(results.get("config"), dict) else {}
    outcome = {
        "schemaVersion": RESULTS_SCHEMA_VERSION,
        "eval_id": results.get("eval_id") or "",
        "skill": results.get("skill", suite.skill),
        "eval_name": results.get("eval_name", suite.name),
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
        "waza_version": _version(),
        "config": {**config_in, "regraded": True},
        "summary": stats_mod.summarize(all_tasks, _positive_int(summary_in.get("duration_ms"), 0)),
        "metrics": {},
        "tasks": all_tasks,
        "incomplete": bool(results.get("incomplete", False)),
    }
    outcome["config"].setdefault("runs_per_test", max((len(t["runs"]) for t in all_tasks), default=1) or 1)
    for key, default in (("model_id", ""), ("engine_type", ""), ("timeout_sec", 0)):
        outcome["config"].setdefault(key, default)
    return GradeReport(outcome=outcome, summary=grade_summary(regraded), graded=graded, warnings=warnings)


def _regrade_run(run: dict, position: int, task: TaskSpec, graders, suite: Suite, workspace: str,
                 cancel: threading.Event | None) -> dict:
    evidence = evidence_from_run(run)
    number = _positive_int(run.get("run_number"), position)
    attempts = _positive_int(run.get("attempts"), 1)
    kept_ws = run.get("workspace_dir") if isinstance(run.get("workspace_dir"), str) else None
    if agent_failed(run):
        message = run.get("error_msg") or "the run failed before grading"
        return run_json(evidence, number, attempts, "error", {}, message, kept_ws)
    ctx = GradingContext(task=task, evidence=evidence, workspace_dir=workspace, suite=suite, cancel=cancel)
    validations, status, error = grade_run(graders, ctx)
    return run_json(evidence, number, attempts, status, validations, error, kept_ws)


def grade_summary(tasks: list[dict]) -> dict[str, Any]:
    """The ``waza grade`` stdout document: per task the mean weighted run score, whether
    every run passed, and each grader's mean score across the runs."""
    out: dict[str, Any] = {}
    for t in tasks:
        runs = t["runs"]
        weighted = [stats_mod.run_scores(r.get("validations"))[1] for r in runs]
        per_grader: dict[str, list[float]] = {}
        for r in runs:
            for name, v in (r.get("validations") or {}).items():
                per_grader.setdefault(name, []).append(float(v.get("score", 0.0)))
        out[t["test_id"]] = {
            "overall_score": sum(weighted) / len(weighted) if weighted else 0.0,
            "passed": t["status"] == "passed",
            "status": t["status"],
            "grader_averages": {name: sum(xs) / len(xs) for name, xs in per_grader.items()},
        }
    scores = [v["overall_score"] for v in out.values()]
    return {
        "overall_score": sum(scores) / len(scores) if scores else 0.0,
        "passed": bool(out) and all(v["passed"] for v in out.values()),
        "tasks": out,
    }


def _countable(t: Any) -> bool:
    """A saved task entry whose fields the summary reads have the types it needs."""
    if not (isinstance(t, dict) and isinstance(t.get("test_id"), str) and isinstance(t.get("status"), str)
            and isinstance(t.get("runs"), list)):
        return False
    if not all(isinstance(r, dict) and isinstance(r.get("usage"), (dict, type(None))) for r in t["runs"]):
        return False
    stats = t.get("stats")
    if stats is None:
        return True
    return isinstance(stats, dict) and all(
        isinstance(stats.get(k, 0.0), (int, float)) and not isinstance(stats.get(k), bool)
        for k in ("avg_score", "avg_weighted_score"))


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _positive_int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else default


def _version() -> str:
    from waza_core._version import __version__

    return __version__
