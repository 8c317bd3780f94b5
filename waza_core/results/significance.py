"""Is the difference between two results files more than noise? A paired, task-clustered test.

Why tasks and not runs: the trials of one task are not independent evidence. An agent that
answers a task the same way in every trial (deterministic, or steered by the same prompt) gives
five identical verdicts, and a test that pools runs (Fisher's exact test over all runs, as waza
for Python did before) counts that one piece of evidence five times: in simulation it then raises
a false alarm about three times as often as it promised. With independent trials the pooled test
is the other way wrong (too cautious, so it misses real regressions). docs/statistics.md has the
calibration table (``bench/bench_significance.py``).

The method: for each task present in both files (with at least one graded run in each), the
difference of its pass rate over its graded runs, current minus baseline. Under "no change" each
task's difference is as likely to be positive as negative (the two labels of a task are
exchangeable), so the null distribution of the mean difference is the one of randomly flipping
signs: Fisher's randomization test for paired data (Good, *Permutation, Parametric and Bootstrap
Tests of Hypotheses*, 2005, ch. 3), computed by ``scipy.stats.permutation_test``: exactly when the
tasks that changed are few, else from 9,999 seeded sign-flips. The interval of the mean difference
is a seeded percentile bootstrap over tasks (``scipy.stats.bootstrap``; Efron & Tibshirani 1993).
The minimum detectable effect is simulated from the tasks' pass rates with this test
(:mod:`waza_core.results.power`, the numbers ``waza noise`` prints for the same two files) up to
:data:`SIMULATED_MDE_TASKS` tasks; beyond, the normal approximation of the same paired test,
``(z(1-alpha) + z(power)) * sd(differences) / sqrt(tasks)``, and never less than what the test
can resolve at all: ``ceil(log2(1/alpha))`` tasks must move, one trial each.

Every random draw uses :data:`SEED`, so the same files always give the same verdict. scipy is
imported only when a comparison is computed (about 0.3 s of start-up; measured in
docs/dependencies.md), so commands that do not compare never pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

SEED = 20261204
RESAMPLES = 9_999
CONFIDENCE = 0.95
POWER = 0.8
#: beyond this many tasks (that changed, for the test; compared, for the interval) the
#: resampling is replaced by its normal limit: the same answer to about 1e-3, in milliseconds
#: instead of minutes (a 100,000-task compare)
LARGE = 2_000
METHOD = "paired sign-flip permutation test over per-task pass-rate differences (tasks are the unit)"
_UNGRADED = ("n/a", "skipped")


def task_counts(doc: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """test_id -> (passed runs, graded runs) for every task with at least one graded run."""
    out: dict[str, tuple[int, int]] = {}
    for task in doc.get("tasks") or ():
        runs = task.get("runs") or ()
        graded = [r for r in runs if isinstance(r, Mapping) and r.get("status") not in _UNGRADED]
        if graded:
            out[str(task["test_id"])] = (sum(1 for r in graded if r.get("status") == "passed"), len(graded))
    return out


def statuses_of(doc: Any) -> dict[str, Any]:
    """What :func:`compare` reads of a run's document (a :class:`~waza_core.results.model.ResultsDocument`):
    each task's run statuses, as a results file would hold them."""
    return {"tasks": [{"test_id": t.test_id, "runs": [{"status": r.status} for r in t.runs]} for t in doc.tasks]}


def _scipy_stats() -> Any:
    try:
        import scipy.stats  # deferred: ~0.3 s of import, paid only when a comparison is computed
    except ImportError:
        raise ValueError("comparing results for significance needs scipy: pip install scipy") from None
    return scipy.stats


def minimum_detectable_effect(diffs: list[float], trials: float, alpha: float, power: float = POWER,
                              pooled_rates: Iterable[float] = ()) -> float | None:
    """The smallest mean per-task change in pass rate this design tells from noise at ``power``.

    ``diffs`` are the observed per-task differences (their spread is the noise of the paired
    design); when they carry no spread at all, the spread expected from the tasks' pooled pass
    rates with independent trials is used. ``trials`` is the typical number of graded runs per
    task and file. None with fewer than two tasks."""
    n = len(diffs)
    if n < 2:
        return None
    stats = _scipy_stats()
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0:
        rates = list(pooled_rates)
        if rates:
            sd = math.sqrt(sum(p * (1 - p) * 2 / trials for p in rates) / len(rates))
    z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    normal = z * sd / math.sqrt(n)
    floor = math.ceil(math.log2(1 / alpha)) / (max(trials, 1) * n)  # fewest tasks that can move p below alpha
    return min(1.0, max(normal, floor))


def compare(baseline: Mapping[str, Any], current: Mapping[str, Any], alpha: float,
            power: float = POWER) -> dict[str, Any]:
    """The comparison of two results files as the ``significance`` object of gate and compare.

    ``p_value`` and ``significant`` answer the gate's question (did the current file regress?);
    ``p_value_improvement`` the other direction; ``direction`` says which one, if any, is
    significant. Differences are current minus baseline, as rates (0..1) and percentage points."""
    b, c = task_counts(baseline), task_counts(current)
    common = [t for t in b if t in c]
    diffs = [c[t][0] / c[t][1] - b[t][0] / b[t][1] for t in common]
    out: dict[str, Any] = {
        "test": "paired_sign_flip_permutation", "method": METHOD, "alpha": alpha,
        "baseline_runs_passed": sum(b[t][0] for t in common), "baseline_runs": sum(b[t][1] for t in common),
        "current_runs_passed": sum(c[t][0] for t in common), "current_runs": sum(c[t][1] for t in common),
        "tasks_compared": len(common), "tasks_with_evidence": sum(1 for d in diffs if d != 0),
        "tasks_only_in_one_file": len(set(b) ^ set(c)), "seed": SEED,
    }
    if not common:
        out.update(p_value=None, p_value_improvement=None, significant=None, direction=None,
                   verdict="not computed", note="no task has graded runs in both files")
        return out
    stats = _scipy_stats()
    mean = sum(diffs) / len(diffs)
    p_reg, p_imp, exact = _sign_flip(stats, [d for d in diffs if d != 0])
    trials = (out["baseline_runs"] + out["current_runs"]) / (2 * len(common))
    pooled = [(b[t][0] + c[t][0]) / (b[t][1] + c[t][1]) for t in common]
    passed, graded, design = _design(b, c, common)
    mde, mde_method, rho = _design_mde(design, alpha, power, rise=sum(diffs) > 0)
    out.update(_success_rate_noise(passed, graded, design))
    if mde_method == "normal":
        mde = minimum_detectable_effect(diffs, trials, alpha, power, pooled)
    low, high = _interval(stats, diffs)
    direction = "regression" if p_reg < alpha else "improvement" if p_imp < alpha else None
    out.update(
        p_value=p_reg, p_value_improvement=p_imp, significant=p_reg < alpha, direction=direction,
        exact=exact, resamples=None if exact or len(diffs) > LARGE else RESAMPLES,
        approximation="normal" if out["tasks_with_evidence"] > LARGE else None,
        mean_task_delta=mean, mean_task_delta_pct=round(mean * 100, 9),
        ci_low=low, ci_high=high, confidence_level=CONFIDENCE,
        minimum_detectable_effect=mde, minimum_detectable_effect_pct=None if mde is None else round(mde * 100, 9),
        minimum_detectable_effect_method=mde_method, correlation=rho,
        power=power, trials_per_task=trials,
        verdict=_verdict(direction, mean, 1.0 if mde is None else mde),
    )
    return out


def _sign_flip(stats: Any, nonzero: list[float]) -> tuple[float, float, bool]:
    """One-sided p-values (regression: mean < 0; improvement: mean > 0) of the sign-flip test."""
    if not nonzero:
        return 1.0, 1.0, True
    if len(nonzero) == 1:  # two sign patterns, each with probability 1/2 (scipy wants two samples)
        return (0.5, 1.0, True) if nonzero[0] < 0 else (1.0, 0.5, True)
    if len(nonzero) > LARGE:  # the randomization distribution of the sum is normal to ~1e-3 here
        z = sum(nonzero) / math.sqrt(sum(d * d for d in nonzero))
        return float(stats.norm.cdf(z)), float(stats.norm.sf(z)), False
    import numpy as np  # deferred with scipy: a comparison is the only user here

    data = (np.asarray(nonzero, dtype=float),)
    exact = 2 ** len(nonzero) <= RESAMPLES

    def mean(x: Any, axis: int = -1) -> Any:
        return np.mean(x, axis=axis)

    res = stats.permutation_test(data, mean, permutation_type="samples", alternative="less",
                                 n_resamples=RESAMPLES, vectorized=True, random_state=np.random.default_rng(SEED),
                                 batch=_batch(len(nonzero)))
    # the other direction from the same null distribution, counted as scipy counts "less"
    # (ties within scipy's relative tolerance; +1 on both sides when the flips were sampled)
    observed, null = float(np.mean(data[0])), res.null_distribution
    ties = 1 + 4 * np.finfo(float).eps
    count = int(np.count_nonzero(null >= observed / ties if observed > 0 else null >= observed * ties))
    greater = count / null.size if exact else (count + 1) / (null.size + 1)
    return min(1.0, float(res.pvalue)), min(1.0, greater), exact


#: most floats one vectorized call of a resampling test may hold (32 MiB): without a bound,
#: 9,999 resamples of 100,000 tasks took 8 GB at once (a compare of two 500,000-run files)
RESAMPLE_CELLS = 4_000_000


def _batch(tasks: int) -> int | None:
    """Resamples per vectorized call: all of them (None) for a suite of up to 400 tasks, as
    before; fewer for a larger one, so memory stays bounded (docs/safety.md)."""
    return None if tasks * RESAMPLES <= RESAMPLE_CELLS else max(1, RESAMPLE_CELLS // tasks)


def _interval(stats: Any, diffs: list[float]) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean per-task difference (tasks resampled); the
    normal interval of the mean beyond :data:`LARGE` tasks, where the two agree."""
    if len(diffs) < 2 or max(diffs) == min(diffs):
        mean = sum(diffs) / len(diffs)
        return mean, mean
    if len(diffs) > LARGE:
        n, mean = len(diffs), sum(diffs) / len(diffs)
        half = float(stats.norm.ppf(0.5 + CONFIDENCE / 2)) * math.sqrt(
            sum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
        return mean - half, mean + half
    # deferred: numpy adds ~133.7 ms to importing this module
    import numpy as np

    res = stats.bootstrap((np.asarray(diffs, dtype=float),), np.mean, confidence_level=CONFIDENCE,
                          n_resamples=RESAMPLES, method="percentile", vectorized=True,
                          random_state=np.random.default_rng(SEED), batch=_batch(len(diffs)))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


#: up to this many compared tasks the MDE is simulated (:mod:`waza_core.results.power`, as
#: ``waza noise`` does), where the normal approximation errs most (20 points against a simulated
#: 30 for the 12 tasks of examples/noise-floor); beyond, the normal approximation, in milliseconds
SIMULATED_MDE_TASKS = 100


def _design(b: Mapping[str, tuple[int, int]], c: Mapping[str, tuple[int, int]], common: list[str]) -> Any:
    """(passed, graded, design): files x tasks counts of the compared tasks, and the design they
    describe (the baseline's task rates and trials, rho estimated from both files): built once
    for the MDE and the success-rate band."""
    import numpy as np  # deferred with scipy: a comparison is the only user here

    from waza_core.results import power as simulated  # deferred: it imports numpy at the top

    passed = np.array([[b[t][0] for t in common], [c[t][0] for t in common]])
    graded = np.array([[b[t][1] for t in common], [c[t][1] for t in common]])
    rho, _ = simulated.intraclass_correlation(passed, graded)
    design, _ = simulated.design_of(passed[:1], graded[:1], rho or 0.0)
    return passed, graded, design


def _design_mde(design: Any, alpha: float, power: float, rise: bool) -> tuple[float | None, str, float | None]:
    """(MDE, "simulation", rho): the smallest drop (``rise``: the direction the tasks moved) from
    the baseline's task rates that the test finds with probability ``power``, in the design of the
    compared tasks (``waza noise BASELINE --correlation RHO`` simulates the same design). None: no
    change is detectable. ("normal" and None) for a large suite."""
    if design.tasks > SIMULATED_MDE_TASKS:
        return None, "normal", None
    from waza_core.results import power as simulated  # deferred: it imports numpy at the top

    mde, _ = simulated.minimum_detectable_effect(design, alpha, power, simulated.COMPARISON_SIMULATIONS,
                                                 test=simulated.sign_flip_rejects_normal, rise=rise)
    return mde, "simulation", design.rho


def _success_rate_noise(passed: Any, graded: Any, design: Any) -> dict[str, Any]:
    """waza's success rate (the share of tasks whose every trial passed) over the compared tasks,
    its change, and the band two runs of the baseline's design stay within 95 % of the time when
    nothing changed (an A/A pair): a change inside the band is within noise. The band is
    simulated as ``waza noise`` does up to SIMULATED_MDE_TASKS tasks; beyond, its normal limit
    (tasks independent: the variance of the difference is twice the sum of p(1-p) over n^2, with
    p the chance that every trial of a task passes under the same correlation model)."""
    from waza_core.results import power as simulated  # deferred: it imports numpy at the top

    ok = passed == graded
    delta = float(ok[1].mean() - ok[0].mean())
    if design.tasks <= SIMULATED_MDE_TASKS:
        band = simulated.aa_spread(design, simulated.COMPARISON_SIMULATIONS)["success_rate"]
        low, high, method = band["aa_low"], band["aa_high"], "simulation"
    else:
        every = design.rho * design.rates + (1 - design.rho) * design.rates ** design.trials
        half = 1.959963984540054 * math.sqrt(2 * float((every * (1 - every)).sum())) / design.tasks
        low, high, method = -half, half, "normal"
    return {"success_rate_delta_compared": delta, "success_rate_noise_low": low, "success_rate_noise_high": high,
            "success_rate_noise_method": method,
            "success_rate_verdict": "within noise" if low <= delta <= high else "beyond noise"}


def _verdict(direction: str | None, mean: float, mde: float | None) -> str:
    if direction:
        return f"significant {direction}"
    if mde is not None and abs(mean) < mde:
        return "within noise"
    return "not significant"


def describe(sig: Mapping[str, Any]) -> str:
    """One line for people: the effect, its interval, the verdict in words, what carried it.

    The one wording of a comparison: gate, compare, the SKILL IMPACT block of an A/B run and
    the markdown and HTML reports all print this line (public as ``describe_significance``)."""
    runs = (f"{sig['baseline_runs_passed']}/{sig['baseline_runs']} runs passed -> "
            f"{sig['current_runs_passed']}/{sig['current_runs']}")
    if sig.get("p_value") is None:
        return f"Significance: not computed ({sig.get('note')}); {runs}"
    mde = sig.get("minimum_detectable_effect_pct")
    mde_text = f", minimum detectable {mde:.1f} pp" if mde is not None else \
        ", no change detectable with this design" if sig.get("minimum_detectable_effect_method") == "simulation" else ""
    # the one-sided p-value of the direction the tasks moved (a rise is not weighed as a regression)
    rose = sig.get("direction") == "improvement" or (sig.get("direction") is None and sig["mean_task_delta"] > 0)
    p = sig["p_value_improvement"] if rose else sig["p_value"]
    return (f"Significance: {sig['verdict']}: mean task change {sig['mean_task_delta'] * 100:+.1f} pp "
            f"({sig['confidence_level'] * 100:.0f}% CI {sig['ci_low'] * 100:+.1f} to {sig['ci_high'] * 100:+.1f}"
            f"{mde_text}); p={p:.4f} (alpha {sig['alpha']}, paired over {sig['tasks_compared']} tasks, "
            f"{sig['tasks_with_evidence']} changed); {runs}{_success_rate_text(sig)}")


def _success_rate_text(sig: Mapping[str, Any]) -> str:
    """waza's success-rate change beside its A/A noise band (absent from older reports)."""
    if sig.get("success_rate_verdict") is None:
        return ""
    return (f"; success rate {sig['success_rate_delta_compared'] * 100:+.1f} pp: {sig['success_rate_verdict']} "
            f"(two unchanged runs differ by {sig['success_rate_noise_low'] * 100:+.1f} to "
            f"{sig['success_rate_noise_high'] * 100:+.1f} pp 95% of the time)")

