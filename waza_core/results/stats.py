"""Per-task statistics and the suite summary, with the formulas of waza (Go).

Run score = mean of the grader scores; weighted run score = sum(score*w)/sum(w).
A task passes only if every run passed. The bootstrap interval uses a seeded RNG so
that the same results give the same numbers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
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
    vals = list(validations.values())
    score = sum(v.score for v in vals) / len(vals)
    wsum = sum(v.weight or 1.0 for v in vals)
    weighted = sum(v.score * (v.weight or 1.0) for v in vals) / wsum if wsum else 0.0
    return score, weighted


def _std(xs: list[float]) -> float:
    if not xs:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> dict[str, float] | None:
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return {"lower": max(0.0, centre - half), "upper": min(1.0, centre + half), "confidence_level": 0.95}


def bootstrap(xs: list[float]) -> dict[str, Any]:
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(xs)
    means = sorted(sum(rng.choices(xs, k=n)) / n for _ in range(BOOTSTRAP_SAMPLES))
    lo = means[int(0.025 * (BOOTSTRAP_SAMPLES - 1))]
    hi = means[int(0.975 * (BOOTSTRAP_SAMPLES - 1))]
    return {"lower": lo, "upper": hi, "mean": sum(xs) / n, "confidence_level": 0.95,
            "num_bootstraps": BOOTSTRAP_SAMPLES}


def task_stats(runs: list[RunResult]) -> dict[str, Any] | None:
    graded = [r for r in runs if r.status != "n/a"]
    if not graded:
        return None
    scores, weighted = [], []
    for r in graded:
        s, w = run_scores(r.validations)
        scores.append(s)
        weighted.append(w)
    n = len(graded)
    passed = sum(1 for r in graded if r.status == "passed")
    errors = sum(1 for r in graded if r.status == "error")
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
        "avg_duration_ms": int(sum(r.duration_ms for r in graded) / n),
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


def task_status(runs: list[RunResult]) -> str:
    statuses = {r.status for r in runs}
    if not runs or statuses == {"n/a"}:
        return "n/a"
    if "error" in statuses:
        return "error"
    return "passed" if statuses == {"passed"} else "failed"


def summarize(tasks: Iterable[TaskResult], duration_ms: int) -> Summary:
    """The suite summary of finished tasks (see :class:`SummaryTally` to add them one by one)."""
    tally = SummaryTally()
    for t in tasks:
        tally.add(t)
    return tally.summary(duration_ms)


class SummaryTally:
    """What the summary needs of each finished task, so the task itself can be let go."""

    def __init__(self) -> None:
        self.count = {"passed": 0, "failed": 0, "error": 0, "n/a": 0}
        self.avgs: list[float] = []
        self.wavgs: list[float] = []
        self.usages: list[dict] = []

    def add(self, t: TaskResult) -> None:
        if t.status in self.count:
            self.count[t.status] += 1
        stats = t.stats or {}
        self.avgs.append(stats.get("avg_score", 0.0))
        self.wavgs.append(stats.get("avg_weighted_score", 0.0))
        self.usages.extend(r.usage for r in t.runs if r.usage)

    def summary(self, duration_ms: int) -> Summary:
        from waza_core.results.model import Summary

        count, avgs, wavgs = self.count, self.avgs, self.wavgs
        total = len(avgs)
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
            usage=sum_usage(self.usages),
        )


def sum_usage(parts: Iterable[dict | None]) -> dict | None:
    """Add up per-run usage; ``None`` when no run reported any (never a fake zero)."""
    known = [p for p in parts if p]
    if not known:
        return None
    total: dict[str, Any] = {}
    for p in known:
        for k, v in p.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                total[k] = total.get(k, 0) + v
    return total
