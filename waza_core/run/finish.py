"""The results fields of schema 1.1-1.5 that come from the suite rather than from one run.

Called by the aggregate stage (:mod:`waza_core.run.aggregate`, :class:`Engine`):

* :func:`decorate_task` as each task finishes: ``golden`` (written only when true, as
  waza Go's ``omitempty``) and ``group`` (``config.group_by``);
* :func:`finish_summary` once, on the finished document: ``summary.groups`` and
  ``summary.statistics`` (``success_rate_ci``, ``pass_hat_k``, ``bootstrap_ci``).

These fields live in the ``extra`` dicts of the typed results, so every reader and
``waza grade`` keeps them as they are.

``group_by: tags`` (fixed in waza Go v0.40.1, whose semantics our notes could not
read) is decided here: every tag of a task is a group and the task counts in each of
them; a task without tags is in the group ``untagged``; the task's ``group`` field
lists its tags joined by ``,``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from waza_core.model import TaskSpec
from waza_core.results import stats as stats_mod
from waza_core.results.model import ResultsDocument, TaskResult

UNTAGGED = "untagged"


def decorate_task(entry: TaskResult, task: TaskSpec, model: str, group_by: str) -> TaskResult:
    """Add the suite-level fields of one finished task."""
    if task.golden:
        entry.extra["golden"] = True
    group = task_group(task, model, group_by)
    if group:
        entry.extra["group"] = group
    return entry


def task_group(task: TaskSpec, model: str, group_by: str) -> str:
    if group_by == "model":
        return model
    if group_by == "tags":
        return ",".join(task.tags) or UNTAGGED
    return ""


class TaskDigest(NamedTuple):
    """What the suite-level summary fields need of one finished task: kept for every task,
    also when a large run streams the task entries to disk instead of keeping them."""

    status: str
    groups: tuple[str, ...]
    scored: bool  # the task has statistics
    avg_score: float
    avg_weighted_score: float
    passed_runs: int
    total_runs: int


class DigestTable:
    """The :class:`TaskDigest` of every finished task, by position in the plan, in columns.

    A run keeps one digest per task to the end (also when it streams the tasks
    themselves to disk); as a named tuple with its floats that was ~250 bytes per task,
    in columns it is ~30, and positions need no sort at the end. Iterating gives the
    digests of the finished tasks in plan order."""

    def __init__(self, size: int) -> None:
        self.state = bytearray(size)  # 0 = not finished, else the status's number
        self.statuses: dict[str, int] = {}  # status -> its number (1, 2, ...)
        self.group_index = array("i", bytes(4 * size))  # index into self.group_sets
        self.group_sets: dict[tuple[str, ...], int] = {(): 0}
        self.scored = bytearray(size)
        self.avg = array("d", bytes(8 * size))
        self.wavg = array("d", bytes(8 * size))
        self.passed = array("q", bytes(8 * size))
        self.total = array("q", bytes(8 * size))

    def put(self, position: int, d: TaskDigest) -> None:
        self.state[position] = self.statuses.setdefault(d.status, len(self.statuses) + 1)
        self.group_index[position] = self.group_sets.setdefault(d.groups, len(self.group_sets))
        self.scored[position] = d.scored
        self.avg[position], self.wavg[position] = d.avg_score, d.avg_weighted_score
        self.passed[position], self.total[position] = d.passed_runs, d.total_runs

    def grouped(self) -> Iterator[TaskDigest]:
        """The digests of the finished tasks that are in a group, in plan order. When no task
        is (only the empty set of groups was seen), none is made: making the digest of every
        task took ~1 us a task at the end of every run, to find no group."""
        if len(self.group_sets) == 1:
            return iter(())
        return (d for d in self if d.groups)

    def __iter__(self) -> Iterator[TaskDigest]:
        statuses, groups = [""] + list(self.statuses), list(self.group_sets)
        for i, state in enumerate(self.state):
            if state:
                yield TaskDigest(statuses[state], groups[self.group_index[i]], bool(self.scored[i]),
                                 self.avg[i], self.wavg[i], self.passed[i], self.total[i])


def digest(entry: TaskResult, task: TaskSpec | None, group_by: str) -> TaskDigest:
    if group_by == "tags" and task is not None:
        groups = tuple(dict.fromkeys(task.tags)) or (UNTAGGED,)
    else:
        name = entry.extra.get("group")
        groups = (name,) if isinstance(name, str) and name else ()
    st = entry.stats
    if st is None:
        return TaskDigest(entry.status, groups, False, 0.0, 0.0, 0, 0)
    return TaskDigest(entry.status, groups, True, st.get("avg_score", 0.0), st.get("avg_weighted_score", 0.0),
                      st.get("passed_runs", 0), st.get("total_runs", 0))


def finish_summary(doc: ResultsDocument, digests: DigestTable, trials: int) -> None:
    """``summary.groups`` and ``summary.statistics`` of a finished document, in place
    (``digests`` of its tasks in file order)."""
    if doc.summary is None:
        return
    groups = group_stats(digests.grouped())  # a task in no group counts in none
    if groups:
        doc.summary.extra["groups"] = groups
    statistics = suite_statistics(digests, trials)
    if statistics is not None:
        doc.summary.extra["statistics"] = statistics


def group_stats(digests: Iterable[TaskDigest]) -> list[dict[str, Any]]:
    """``[{name, passed, total, avg_score}]`` in order of first appearance (waza Go
    ``computeGroupStats``); ``avg_score`` averages the tasks that have statistics."""
    acc: dict[str, list] = {}
    for t in digests:
        for name in t.groups:
            a = acc.setdefault(name, [0, 0, 0.0, 0])  # passed, total, score sum, scored tasks
            a[1] += 1
            if t.status == "passed":
                a[0] += 1
            if t.scored:
                a[2] += t.avg_score
                a[3] += 1
    return [{"name": name, "passed": a[0], "total": a[1], "avg_score": a[2] / a[3] if a[3] else 0.0}
            for name, a in acc.items()]


def suite_statistics(digests: Iterable[TaskDigest], trials: int) -> dict[str, Any] | None:
    """``summary.statistics`` (schema 1.5): present when trials > 1 and at least two tasks
    have statistics, as in waza (Go). ``is_significant`` is no longer written."""
    if trials <= 1:
        return None
    digests = list(digests)
    scored = [t for t in digests if t.scored]
    if len(scored) < 2:
        return None
    succeeded = sum(1 for t in digests if t.status == "passed")
    ci = stats_mod.wilson(succeeded, len(digests))
    out: dict[str, Any] = {"bootstrap_ci": stats_mod.bootstrap([t.avg_weighted_score for t in scored])}
    if ci is not None:
        out["success_rate_ci"] = {"lower": ci["lower"], "upper": ci["upper"], "mean": succeeded / len(digests),
                                  "confidence_level": ci["confidence_level"]}
    curve = pass_hat_k([(t.passed_runs, t.total_runs) for t in scored])
    if curve:
        out["pass_hat_k"] = curve
    return out


def pass_hat_k(counts: list[tuple[int, int]]) -> list[float]:
    """The pass^k curve (tau-bench): element k-1 is the chance that k fresh trials of a
    task all pass, averaged over tasks; per task the unbiased C(c, k) / C(n, k). The
    curve runs to the fewest trials any task ran."""
    counts = [(c, n) for c, n in counts if n > 0]
    if not counts:
        return []
    kmax = min(n for _, n in counts)
    return [sum(math.comb(c, k) / math.comb(n, k) for c, n in counts) / len(counts) for k in range(1, kmax + 1)]


#: task and config keys that only an executor can honour, and how to name them
EXECUTOR_KEYS = {
    "instruction_files": "instruction_files",
    "responder": "inputs.responder",
    "first_event_timeout_seconds": "first_event_timeout_seconds",
}


def executor_notices(suite, tasks, executor_name: str, executor_cls) -> list[str]:
    """Warnings for keys the chosen executor does not use (an executor lists what it
    honours in ``supports``), so a suite never loses them without a word. The mock
    executor runs no agent: nothing is said for it."""
    if executor_name == "mock":
        return []
    supports = set(getattr(executor_cls, "supports", ()) or ())
    used: dict[str, list[str]] = {}
    cfg = suite.config
    if cfg.instruction_files:
        used.setdefault("instruction_files", []).append("config")
    if cfg.first_event_timeout_seconds:
        used.setdefault("first_event_timeout_seconds", []).append("config")
    for t in tasks:
        for key, value in (("instruction_files", t.instruction_files), ("responder", t.responder),
                           ("first_event_timeout_seconds", t.first_event_timeout_seconds)):
            if value:
                used.setdefault(key, []).append(f"task {t.id!r}")
    return [f"{EXECUTOR_KEYS[key]} ({', '.join(where[:3])}{', ...' if len(where) > 3 else ''}) is not used by "
            f"executor {executor_name!r}; it runs without it"
            for key, where in used.items() if key not in supports]


def console_report(doc: ResultsDocument) -> str:
    """The console blocks of the 1.x fields: groups, reliability and trigger accuracy
    (waza Go's RESULTS BY GROUP / TRIGGER ACCURACY, and the 1.5 interval and pass^k lines)."""
    from waza_core.results.console import escape  # one name, one line

    lines: list[str] = []
    summary = doc.summary.extra if doc.summary is not None else {}
    groups = summary.get("groups") or []
    if groups:
        lines += ["", "RESULTS BY GROUP"]
        for g in groups:
            pct = g["passed"] / g["total"] * 100 if g["total"] else 0.0
            lines.append(f"  {escape(g['name']) + ':':<20} {g['passed']}/{g['total']} passed ({pct:.0f}%)  "
                         f"avg: {g['avg_score']:.2f}")
    stats = summary.get("statistics") or {}
    if stats:
        lines += ["", "RELIABILITY"]
        ci = stats.get("success_rate_ci")
        if ci:
            lines.append(f"  success CI95:   [{ci['lower'] * 100:.1f}%, {ci['upper'] * 100:.1f}%]")
        curve = stats.get("pass_hat_k") or []
        if curve:
            lines.append("  reliability:    " + "  ".join(f"pass^{k}={v * 100:.0f}%" for k, v in enumerate(curve, 1)))
    trigger = doc.extra.get("trigger_metrics")
    if trigger:
        lines += ["", "TRIGGER ACCURACY",
                  f"  accuracy:  {trigger['accuracy'] * 100:.1f}%"
                  + (f"   ({trigger['errors']} prompt(s) returned errors)" if trigger.get("errors") else ""),
                  f"  precision: {trigger['precision'] * 100:.1f}%  recall: {trigger['recall'] * 100:.1f}%  "
                  f"F1: {trigger['f1'] * 100:.1f}%",
                  f"  TP: {trigger['true_positives']}  FP: {trigger['false_positives']}  "
                  f"FN: {trigger['false_negatives']}  TN: {trigger['true_negatives']}"]
        metric = doc.metrics.get("trigger_accuracy") if isinstance(doc.metrics, dict) else None
        if metric:
            verdict = "passed" if metric["passed"] else "FAILED"
            lines.append(f"  threshold: {metric['threshold'] * 100:.1f}% -> {verdict}")
    return "\n".join(lines) + "\n" if lines else ""
