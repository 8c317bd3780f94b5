"""Per-task statistics and the suite summary, with the formulas of waza (Go).

Run score = mean of the grader scores; weighted run score = sum(score*w)/sum(w).
A task passes only if every run passed. The bootstrap interval uses a seeded RNG so
that the same results give the same numbers (waza (Go) seeds it randomly).

Which numbers come from a library: the bootstrap from numpy; the standard deviation and
the Wilson interval stay closed-form formulas of a few lines, because importing numpy or
scipy for them would cost more than they compute (bench/bench_stats.py and
docs/dependencies.md have the figures).
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Iterable, Mapping
from itertools import compress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from waza_core.model import GraderResult
    from waza_core.results.model import RunResult, Summary, TaskResult

BOOTSTRAP_SAMPLES = 10_000
BOOTSTRAP_SEED = 1234


def run_scores(validations: Mapping[str, GraderResult] | None) -> tuple[float, float]:
    """(unweighted, weighted) score of one run."""
    if not validations:
        return 0.0, 0.0
    if len(validations) == 1:  # the common case: the same arithmetic without the lists
        for v in validations.values():
            w = v.weight or 1.0
            return (0 + v.score) / 1, (0 + v.score * w) / (0 + w)
    vals = list(validations.values())
    scores = [v.score for v in vals]
    weights = [v.weight or 1.0 for v in vals]
    score = sum(scores) / len(vals)
    wsum = sum(weights)
    weighted = sum([s * w for s, w in zip(scores, weights, strict=True)]) / wsum if wsum else 0.0
    return score, weighted


def _std(xs: list[float]) -> float:
    if not xs:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> dict[str, float] | None:
    if n == 0:
        return None
    lower, upper = _wilson(successes, n, z)
    return {"lower": lower, "upper": upper, "confidence_level": 0.95}


@functools.lru_cache(maxsize=1024)
def _wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    """The interval's bounds; most tasks of a suite share (successes, n), so they are kept."""
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


#: the percentile indexes of waza (Go): floor(alpha/2 * B) and floor((1 - alpha/2) * B)
_LOW = int(math.floor(0.025 * BOOTSTRAP_SAMPLES))
_HIGH = min(int(math.floor(0.975 * BOOTSTRAP_SAMPLES)), BOOTSTRAP_SAMPLES - 1)


def bootstrap(xs: list[float]) -> dict[str, Any]:
    """Percentile bootstrap interval of the mean, 10,000 resamples, as waza (Go) computes it.

    The resampling is numpy's (a task with 10 runs: ~0.5 ms instead of ~15 ms in plain
    Python, see bench/bench_stats.py), imported here so that suites run once per task
    never pay for it. The legacy ``RandomState`` stream is used because numpy keeps it
    unchanged across versions: the same scores give the same interval everywhere.
    """
    # deferred: numpy adds ~87.9 ms to importing this module
    import numpy as np

    n = len(xs)
    scores = np.asarray(xs, dtype=float)
    rng = np.random.RandomState(BOOTSTRAP_SEED)
    means = np.empty(BOOTSTRAP_SAMPLES)
    rows = max(1, 1_000_000 // n)  # at most a million draws at a time: bounded memory for long tasks
    for start in range(0, BOOTSTRAP_SAMPLES, rows):
        stop = min(start + rows, BOOTSTRAP_SAMPLES)
        means[start:stop] = scores[rng.randint(0, n, size=(stop - start, n))].mean(axis=1)
    means.sort()
    return {"lower": float(means[_LOW]), "upper": float(means[_HIGH]), "mean": sum(xs) / n,
            "confidence_level": 0.95, "num_bootstraps": BOOTSTRAP_SAMPLES}


def task_stats(runs: list[RunResult]) -> dict[str, Any] | None:
    if len(runs) == 1:
        return _one_run_stats(runs[0])
    return _runs_stats(runs)


def _runs_stats(runs: list[RunResult]) -> dict[str, Any] | None:
    graded = [r for r in runs if r.status != "n/a"]
    if not graded:
        return None
    scores, weighted = [], []
    passed = errors = 0
    for r in graded:
        s, w = run_scores(r.validations)
        scores.append(s)
        weighted.append(w)
        if r.status == "passed":
            passed += 1
        elif r.status == "error":
            errors += 1
    n = len(graded)
    failed = n - passed - errors
    pass_rate = passed / n
    minority = min(passed, n - passed)
    std = _std(scores)
    stats = {
        "pass_rate": pass_rate,
        "avg_score": sum(scores) / n,
        "avg_weighted_score": sum(weighted) / n,
        "min_score": min(scores),
        "max_score": max(scores),
        "std_dev_score": std,
        "score_variance": std**2,
        "avg_duration_ms": int(sum([r.duration_ms for r in graded]) / n),
        "flaky": 0 < pass_rate < 1,
        "flakiness_percent": minority / n * 100,
        "passed_runs": passed,
        "failed_runs": failed,
        "error_runs": errors,
        "total_runs": n,
        "pass_rate_ci": wilson(passed, n),
    }
    if n >= 2:
        ci = bootstrap(weighted)
        stats["bootstrap_ci"] = ci
        stats["ci95_lo"], stats["ci95_hi"] = ci["lower"], ci["upper"]
    return stats


def _one_run_stats(r: RunResult) -> dict[str, Any] | None:
    """:func:`task_stats` of a task run once (most large suites): the same numbers, with
    the sums and spreads of one value written out."""
    status = r.status
    if status == "n/a":
        return None
    score, weighted = run_scores(r.validations)
    passed = 1 if status == "passed" else 0
    std = 0.0 if math.isfinite(score) else _std([score])
    return {
        "pass_rate": passed / 1,
        "avg_score": (0 + score) / 1,
        "avg_weighted_score": (0 + weighted) / 1,
        "min_score": score,
        "max_score": score,
        "std_dev_score": std,
        "score_variance": std**2,
        "avg_duration_ms": int((0 + r.duration_ms) / 1),
        "flaky": False,
        "flakiness_percent": 0.0,
        "passed_runs": passed,
        "failed_runs": 0 if passed or status == "error" else 1,
        "error_runs": 1 if status == "error" else 0,
        "total_runs": 1,
        "pass_rate_ci": wilson(passed, 1),
    }


def task_status(runs: list[RunResult]) -> str:
    if len(runs) == 1 and runs[0].status in ("passed", "failed", "error", "n/a"):
        return runs[0].status  # the common case, without building a set
    statuses = {r.status for r in runs}
    if not runs or statuses == {"n/a"}:
        return "n/a"
    if "error" in statuses:
        return "error"
    return "passed" if statuses == {"passed"} else "failed"


def summarize(tasks: Iterable[TaskResult], duration_ms: int) -> Summary:
    """The suite summary of finished tasks (see :class:`SummaryTally` to add them one by one)."""
    tally = SummaryTally()
    for position, t in enumerate(tasks):
        tally.add(t, position)
    return tally.summary(duration_ms)


class SummaryTally:
    """What the summary needs of each finished task, so the task itself can be let go.

    Tasks may arrive in any order; the sums are taken in ``position`` order (the
    order of the tasks in the results file), so the floating-point result is the
    same as :func:`summarize` over the file's tasks. Two floats per task, in arrays."""

    def __init__(self, size: int = 0) -> None:
        """``size``: how many tasks are expected (the arrays grow past it when needed)."""
        self.count = {"passed": 0, "failed": 0, "error": 0, "n/a": 0}
        self.avgs = array("d", bytes(8 * size))
        self.wavgs = array("d", bytes(8 * size))
        self.seen = bytearray(size)
        self.usages: dict[int, tuple[dict, ...]] = {}  # only tasks with usage
        self.runs_without_usage = 0  # they make a sum of AI credits unknown

    def add(self, t: TaskResult, position: int) -> None:
        if t.status in self.count:
            self.count[t.status] += 1
        if position >= len(self.seen):
            zeros = array("d", [0.0]) * (position + 1 - len(self.seen))
            self.avgs.extend(zeros)
            self.wavgs.extend(zeros)
            self.seen.extend(bytes(len(zeros)))
        stats = t.stats or {}
        self.avgs[position] = stats.get("avg_score", 0.0)
        self.wavgs[position] = stats.get("avg_weighted_score", 0.0)
        self.seen[position] = 1
        runs = t.runs
        if len(runs) == 1:
            usages = (runs[0].usage,) if runs[0].usage else ()
        else:
            usages = tuple(r.usage for r in runs if r.usage)
        if usages:
            self.usages[position] = usages
        self.runs_without_usage += len(runs) - len(usages)

    def summary(self, duration_ms: int) -> Summary:
        # deferred: waza_core.results.model adds ~58.8 ms to importing this module
        from waza_core.results.model import Summary

        seen = self.seen
        if seen.count(0):  # some tasks never finished: the others' scores, still unboxed
            avgs, wavgs = array("d", compress(self.avgs, seen)), array("d", compress(self.wavgs, seen))
        else:  # the arrays themselves: no list of 100,000 floats at the end of a large run
            avgs, wavgs = self.avgs, self.wavgs
        count, total = self.count, len(avgs)
        return Summary(
            total_tests=total,
            succeeded=count["passed"],
            failed=count["failed"],
            errors=count["error"],
            skipped=count["n/a"],
            success_rate=count["passed"] / total if total else 0.0,
            aggregate_score=sum(avgs) / total if total else 0.0,
            weighted_score=sum(wavgs) / total if total else 0.0,
            min_score=min(avgs) if avgs else 0.0,
            max_score=max(avgs) if avgs else 0.0,
            std_dev=_std(avgs),
            duration_ms=duration_ms,
            usage=sum_usage((u for k in sorted(self.usages) for u in self.usages[k]),
                            missing=self.runs_without_usage),
        )


def sum_usage(parts: Iterable[dict | None], missing: int = 0) -> dict | None:
    """Add up per-run usage; ``None`` when no run reported any (never a fake zero).

    Token and request counters are summed over the runs that report them. AI credits (and,
    beyond waza, ``cost_usd``, with ``cost_source`` ``agent``/``table``/``estimate``, or
    ``mixed`` when runs differ) follow waza (Go) 1.8 (``AggregateUsageStats``): a total is known only when every run
    reported it, so one run without usage (``None`` in ``parts``, or counted in
    ``missing``) or without ``ai_credits`` makes the sum ``null`` ("unavailable"), never
    a partial sum that looks complete. Per model (``model_metrics``), a model's credits
    are known only when every run attributes its usage to models and every run that used
    that model reported its credits.
    """
    parts = list(parts)
    known = [p for p in parts if p]
    if not known:
        return None
    complete = missing == 0 and len(known) == len(parts)
    total: dict[str, Any] = {}
    for p in known:
        for k, v in p.items():
            if k not in _ALL_OR_NOTHING and _is_number(v):
                total[k] = total.get(k, 0) + v
    for key in _ALL_OR_NOTHING:
        if any(key in p for p in known):
            values = [p.get(key) for p in known]
            total[key] = sum(values) if complete and all(_is_number(c) for c in values) else None
    sources = {p.get("cost_source") for p in known if "cost_usd" in p}
    if sources:
        total["cost_source"] = sources.pop() if len(sources) == 1 and None not in sources else "mixed"
    models = _sum_model_metrics(known, complete)
    if models is not None:
        total["model_metrics"] = models
    return total


#: usage keys whose sum is only given when every run reported them (else ``null``): a
#: partial sum of money would read as the whole bill
_ALL_OR_NOTHING = ("ai_credits", "cost_usd")


def _sum_model_metrics(known: list[dict], complete: bool) -> dict | None:
    per_run = [p.get("model_metrics") for p in known]
    if not any(isinstance(m, dict) and m for m in per_run):
        return None
    attributed = complete and all(isinstance(m, dict) for m in per_run)
    out: dict[str, dict[str, Any]] = {}
    for metrics in per_run:
        for model, usage in (metrics or {}).items() if isinstance(metrics, dict) else ():
            if not isinstance(usage, dict):
                continue
            entry = out.setdefault(str(model), {})
            for k, v in usage.items():
                if k != "ai_credits" and _is_number(v):
                    entry[k] = entry.get(k, 0) + v
    for model, entry in out.items():
        reports = [m[model] for m in per_run if isinstance(m, dict) and isinstance(m.get(model), dict)]
        if any("ai_credits" in r for r in reports):
            credits = [r.get("ai_credits") for r in reports]
            entry["ai_credits"] = sum(credits) if attributed and all(_is_number(c) for c in credits) else None
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
