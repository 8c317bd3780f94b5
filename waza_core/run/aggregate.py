"""Aggregating finished runs: task entries, their statistics, the summary, the document.

Runs arrive from the backend in any order; a task is finished when all its trials
are in, and only then gets its status and statistics
(:mod:`waza_core.results.stats`, waza Go's formulas). The results document lists
the finished tasks in plan order and is built here, and only here, for a live run.
"""

from __future__ import annotations

import datetime
import os
from collections import Counter
from collections.abc import Mapping

from waza_core._version import __version__
from waza_core.model import Suite, TaskSpec
from waza_core.results import stats as stats_mod
from waza_core.results import triage
from waza_core.results.model import ResultsDocument, RunConfig, RunResult, TaskResult
from waza_core.run.backend import CompletedRun
from waza_core.run.finish import DigestTable, decorate_task, digest, finish_summary
from waza_core.run.hooks import HOOK_FAILED
from waza_core.run.plan import RunOptions, RunPlan


def task_result(task: TaskSpec, runs: list[RunResult]) -> TaskResult:
    """A finished task: its runs in trial order, status and statistics.

    A task whose ``before_task`` hook failed (with ``error_on_fail``) is ``failed`` with
    no runs and no statistics, as in waza (Go)."""
    if runs and runs[0].extra and _hook_failed(runs):
        return TaskResult(test_id=task.id, display_name=task.name, tags=list(task.tags), status="failed", runs=[],
                          stats=None, extra={"error_msg": runs[0].error_msg})
    return TaskResult(test_id=task.id, display_name=task.name, tags=list(task.tags),
                      status=stats_mod.task_status(runs), runs=runs, stats=stats_mod.task_stats(runs))


def _hook_failed(runs: list[RunResult]) -> bool:

    return all(r.extra.get(HOOK_FAILED) for r in runs)


class Aggregator:
    """Collects the runs of one suite run into finished tasks.

    With ``options.keep_tasks`` off, a finished task is handed to ``on_task_done`` and
    let go: only what the summary needs stays (see :class:`stats.SummaryTally`)."""

    def __init__(self, plan: RunPlan, options: RunOptions, positions: Mapping[str, int] | None = None) -> None:
        self.plan = plan
        self.options = options
        #: task id -> index in the plan (the prepared suite's view when given: one dict
        #: fewer keyed by 100,000 task ids)
        self.positions = positions if positions is not None else {t.id: i for i, t in enumerate(plan.tasks)}
        self.slots: dict[str, list[RunResult | None]] = {}
        self.remaining: dict[str, int] = {}
        self.finished: dict[str, TaskResult] = {}  # task id -> entry, when kept
        self.done = 0
        self.tally = stats_mod.SummaryTally(len(plan.tasks))
        self.saw_failure = False
        self.group_by = ""  # config.group_by, set by the engine
        #: the digest of every finished task: what summary.groups and summary.statistics
        #: need, also when the entries themselves are not kept
        self.digests = DigestTable(len(plan.tasks))
        #: the tasks ``waza run --audit`` found passing with no agent (their passes are vacuous)
        self.vacuous_tasks: frozenset[str] = frozenset()
        self.triage_counts: Counter[str] = Counter()  # runs per failure-triage category

    def add(self, done: CompletedRun) -> TaskResult | None:
        """Take one finished run; return its task's entry when that was the task's last run."""
        tid = done.unit.task_id
        trials = self.plan.trials
        if trials == 1:
            runs = [done.run]
        else:
            slots = self.slots.get(tid)
            if slots is None:
                slots = self.slots[tid] = [None] * trials
                self.remaining[tid] = trials
            slots[done.unit.trial - 1] = done.run
            self.remaining[tid] -= 1
            if self.remaining[tid]:
                return None
            del self.slots[tid], self.remaining[tid]
            runs = slots  # type: ignore[assignment]  # every slot is filled
        position = self.positions[tid]
        spec = self.plan.tasks[position]
        entry = task_result(spec, runs)
        decorate_task(entry, spec, self.plan.model, self.group_by)
        categories = triage.annotate_task(entry, tid in self.vacuous_tasks)
        if categories:
            self.triage_counts.update(categories)
        self.digests.put(position, digest(entry, spec, self.group_by))
        self.done += 1
        self.tally.add(entry, position)
        if self.options.keep_tasks:
            self.finished[tid] = entry
        if entry.status != "passed":
            self.saw_failure = True
        if self.options.on_task_done:
            self.options.on_task_done(self.done, len(self.plan.tasks), entry)
        return entry

    def tasks(self) -> list[TaskResult]:
        """The finished tasks in plan order (none when they are not kept)."""
        finished = self.finished
        if not finished:  # not kept (a streamed run), or none finished: no pass over the plan
            return []
        return [finished[t.id] for t in self.plan.tasks if t.id in finished]

    def document(self, suite: Suite, started: float, duration_ms: int, incomplete: bool) -> ResultsDocument:

        tasks = self.tasks()
        plan, cfg = self.plan, suite.config
        doc = ResultsDocument(
            # os.urandom(3).hex() is secrets.token_hex(3), without importing secrets (~1 ms of every run)
            eval_id=f"run-{int(started)}-{os.urandom(3).hex()}",
            skill=suite.skill,
            eval_name=suite.name,
            timestamp=datetime.datetime.fromtimestamp(started, datetime.timezone.utc)
            .isoformat(timespec="seconds").replace("+00:00", "Z"),
            waza_version=__version__,
            config=RunConfig(
                runs_per_test=plan.trials,
                model_id=plan.model,
                engine_type=plan.executor_name,
                timeout_sec=cfg.timeout_seconds,
                judge_model=cfg.judge_model,
                max_attempts=cfg.max_attempts,
                parallel=bool(plan.parallel),
                workers=plan.workers,
                skip_graders=self.options.skip_graders,
            ),
            summary=self.tally.summary(duration_ms),
            tasks=tasks,
            incomplete=incomplete or self.done < len(plan.tasks),
        )
        finish_summary(doc, self.digests, plan.trials)
        triage.put_counts(doc.summary, self.triage_counts)
        return doc
