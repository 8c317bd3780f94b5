"""What change can a design (tasks x trials) tell from noise? Power of the gate's test, simulated.

One implementation for every place that states a minimum detectable effect (MDE): ``waza
noise`` (with power planning), and ``waza gate --significance`` / ``waza compare`` through
:func:`waza_core.results.significance.compare`, so the MDE a gate prints beside its delta is the
one ``waza noise BASELINE CURRENT`` prints for the same two files.

The simulation draws baseline/current pairs from the tasks' own pass rates and runs the gate's
paired sign-flip test on each (:func:`sign_flip_rejects`: the test of
:func:`~waza_core.results.significance.compare`, batched: one matrix product for all pairs).
The correlation model: a task's trials share its pass rate (trials of one task are correlated
through the task), and in each run a task is *locked* with probability ``rho``: all its trials of
that run give one verdict drawn at the task's rate (a deterministic agent whose answer changes
only between runs); otherwise its trials are independent draws at that rate. Trials of one run
then have intra-class correlation ``rho``; :func:`intraclass_correlation` estimates it from two
or more files. docs/statistics.md ("The noise floor") has the method, its assumptions and a
worked example. Every draw is seeded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

SEED = 20261204  # the seed of significance.py: one seed for every draw of a comparison
SIMULATIONS = 1_000
#: sign patterns drawn per simulated test: a p-value is then known to about +-0.005 near 0.05
SIMULATION_FLIPS = 1_999
BISECTIONS = 8
#: simulated pairs behind the MDE every comparison prints (gate, compare): with the normal limit
#: of the test, about 0.03 s of CPU for 40 tasks; within about a point of ``waza noise``'s
COMPARISON_SIMULATIONS = 400



def sign_flip_rejects(diffs: Any, alpha: float, rng: np.random.Generator, flips: int = SIMULATION_FLIPS) -> Any:
    """For each row of ``diffs`` (simulated pairs x tasks: per-task differences, current minus
    baseline, in any unit), does the gate's paired sign-flip test find a regression at ``alpha``?

    The test of :func:`waza_core.results.significance.compare`: the statistic is the sum (so the
    mean) of the differences, its null distribution the one of flipping each task's sign, the
    p-value the share of sign patterns whose sum is at most the observed one (ties counted, as
    scipy counts them). All ``2**tasks`` patterns when that is at most ``flips`` (exact, as the
    gate then is), else ``flips`` patterns drawn from ``rng`` and shared by every row, with
    scipy's ``(count + 1) / (flips + 1)``. A task that did not change adds 0 under either sign,
    so flipping every task is flipping the changed ones. Integer differences (of passing trials)
    are summed in float32, exactly (below 2**24), and about twice as fast."""
    diffs = np.asarray(diffs)
    whole = np.issubdtype(diffs.dtype, np.integer) and int(np.abs(diffs).sum(axis=-1).max(initial=0)) < 2 ** 24
    dtype = np.float32 if whole else np.float64
    diffs = diffs.astype(dtype)
    tasks = diffs.shape[-1]
    if 2 ** tasks <= flips:
        codes = np.arange(2 ** tasks)[:, None] >> np.arange(tasks)[None, :]
        signs, exact = (1 - 2 * (codes & 1)).astype(dtype), True
    else:
        signs, exact = rng.choice(np.array([-1.0, 1.0], dtype=dtype), size=(flips, tasks)), False
    observed = diffs.sum(axis=-1)
    tolerance = 0.5 if whole else 1e-9 * max(1.0, float(np.abs(diffs).sum(axis=-1).max(initial=0.0)))
    below = np.zeros(observed.shape, dtype=np.int64)
    for start in range(0, signs.shape[0], 512):  # bounded memory: 512 patterns x rows at a time
        null = signs[start:start + 512] @ diffs.T
        below += np.count_nonzero(null <= observed + tolerance, axis=0)
    p = below / signs.shape[0] if exact else (below + 1) / (signs.shape[0] + 1)
    return p < alpha


def sign_flip_rejects_normal(diffs: Any, alpha: float, rng: np.random.Generator | None = None,
                             flips: int = SIMULATION_FLIPS) -> Any:
    """:func:`sign_flip_rejects` with the normal limit of the test's null distribution in place of
    drawn sign patterns (exact enumeration still up to 10 tasks): ``z = (sum + c) / sqrt(sum of
    squares)``, where the continuity correction ``c`` is half the step of the null's lattice (the
    greatest common divisor of the integer differences). The limit significance.py uses beyond
    2,000 tasks; here for the MDE every comparison prints, about ten times cheaper than drawing
    patterns and within about a point of it (docs/statistics.md)."""
    diffs = np.asarray(diffs)
    if 2 ** diffs.shape[-1] <= flips:
        return sign_flip_rejects(diffs, alpha, rng if rng is not None else np.random.default_rng(SEED), flips)
    from scipy.stats import norm  # deferred: scipy is paid only by a comparison

    total = diffs.sum(axis=-1).astype(float)
    scale = np.sqrt((diffs.astype(float) ** 2).sum(axis=-1))
    step = np.gcd.reduce(np.abs(diffs), axis=-1) if np.issubdtype(diffs.dtype, np.integer) else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(scale > 0, (total + step) / scale, np.inf)
    return z < norm.ppf(alpha)


@attrs.define
class Design:
    """What is simulated: the tasks' pass rates, the number of tasks and of trials, rho."""

    rates: np.ndarray
    tasks: int
    trials: int
    rho: float

    def sample(self, rng: np.random.Generator, sims: int) -> np.ndarray:
        """sims x tasks rates: the tasks as they are, or drawn from them with replacement (a
        bootstrap of tasks) when the design has another number of tasks."""
        if self.tasks == len(self.rates):
            return np.broadcast_to(self.rates, (sims, self.tasks))
        return rng.choice(self.rates, size=(sims, self.tasks))


def simulate_run(rng: np.random.Generator, rates: np.ndarray, trials: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """One run of every simulated design: (passing trials, all trials passed) per task, each of
    shape ``rates.shape``. A locked task repeats one verdict; otherwise its passes are binomial."""
    passes = rng.binomial(trials, rates)
    if rho == 0:  # no task is locked: two thirds of the draws saved
        return passes, passes == trials
    verdict = rng.random(rates.shape) < rates
    locked = rng.random(rates.shape) < rho
    return np.where(locked, verdict * trials, passes), np.where(locked, verdict, passes == trials)


def aa_spread(design: Design, simulations: int = SIMULATIONS, seed: int = SEED) -> dict[str, dict[str, float]]:
    """How far two runs of this design move apart when nothing changed (an A/A pair), for the
    mean pass rate and for waza's success rate (the share of tasks whose every trial passed):
    the sd of one run's figure and the 2.5 / 97.5 percentiles of the difference of two runs."""
    rng = np.random.default_rng(seed)
    rates = design.sample(rng, simulations)
    first_passes, first_ok = simulate_run(rng, rates, design.trials, design.rho)
    second_passes, second_ok = simulate_run(rng, rates, design.trials, design.rho)
    out = {}
    for key, a, b in (("pass_rate", first_passes / design.trials, second_passes / design.trials),
                      ("success_rate", first_ok, second_ok)):
        one, two = a.mean(axis=-1), b.mean(axis=-1)
        low, high = np.percentile(two - one, [2.5, 97.5])
        out[key] = {"sd": float(one.std(ddof=1)), "aa_low": float(low), "aa_high": float(high)}
    return out


def moved(rates: np.ndarray, effect: float, mean: float, rise: bool = False) -> np.ndarray:
    """The rates after a drop (or a ``rise``) of ``effect`` in the mean pass rate ``mean``: every
    task loses the same share of its pass rate (gains the same share of its fail rate), so none
    leaves [0, 1] and the mean moves by exactly ``effect``."""
    if rise:
        return 1 - (1 - rates) * max(0.0, 1 - effect / (1 - mean)) if mean < 1 else rates
    return rates * max(0.0, 1 - effect / mean) if mean > 0 else rates


def power_at(design: Design, effect: float, alpha: float, simulations: int = SIMULATIONS, seed: int = SEED,
             test: Callable[..., Any] = sign_flip_rejects, rise: bool = False) -> float:
    """The share of simulated baseline/current pairs in which the gate's test (``test``: the
    test itself, or its normal limit) finds a drop (a ``rise``: the improvement side of the same
    test) of ``effect``. Seeded afresh for each call, so nearby designs share their draws."""
    rng = np.random.default_rng(seed)
    rates = design.sample(rng, simulations)
    base, _ = simulate_run(rng, rates, design.trials, design.rho)
    after = moved(rates, effect, float(design.rates.mean()), rise)
    current, _ = simulate_run(rng, after, design.trials, design.rho)
    return float(test(base - current if rise else current - base, alpha, rng).mean())


def minimum_detectable_effect(design: Design, alpha: float, power: float, simulations: int = SIMULATIONS,
                              seed: int = SEED, test: Callable[..., Any] = sign_flip_rejects,
                              rise: bool = False) -> tuple[float | None, list[dict[str, float]]]:
    """The smallest drop (``rise``) of the mean pass rate found with probability ``power``
    (bisection over 0 .. the largest possible), and the points computed; None when even losing
    every pass (passing every trial) is not found often enough (fewer than five tasks at 0.05)."""
    top = 1 - float(design.rates.mean()) if rise else float(design.rates.mean())
    curve: list[dict[str, float]] = []

    def reaches(effect: float) -> bool:
        value = power_at(design, effect, alpha, simulations, seed, test, rise)
        curve.append({"effect": effect, "power": value})
        return value >= power

    if top <= 0 or not reaches(top):
        return None, curve
    low, high = 0.0, top
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high, sorted(curve, key=lambda p: p["effect"])


def intraclass_correlation(passed: np.ndarray, graded: np.ndarray) -> tuple[float | None, str]:
    """rho, the correlation of trials within one run of a task, from files x tasks counts of
    passing and graded trials: a one-way analysis of variance of the trials grouped by task and
    file, within tasks (Donner, Int. Stat. Review 54, 1986), clipped to [0, 1]. None, with the
    reason, when the counts cannot tell it (one file, or one trial per task and file)."""
    k, n = passed.astype(float), graded.astype(float)
    multi = (n > 0).sum(axis=0) >= 2  # tasks graded in two or more files
    if not multi.any():
        return None, "one run per task: the files cannot tell how correlated a run's trials are"
    k, n = k[:, multi], n[:, multi]
    present = n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        group = np.where(present, k / n, 0.0)
    task = k.sum(axis=0) / n.sum(axis=0)
    df_within = float((n - present).sum())
    if df_within == 0:
        return None, "one trial per task and file: the files cannot tell how correlated a run's trials are"
    ms_between = float((n * (group - task) ** 2).sum()) / float((present.sum(axis=0) - 1).sum())
    ms_within = float((k * (1 - group)).sum()) / df_within
    denominator = ms_between + (float(n[present].mean()) - 1) * ms_within
    if denominator == 0:
        return 0.0, "estimated from the files (no trial varied)"
    return min(1.0, max(0.0, (ms_between - ms_within) / denominator)), "estimated from the files"


def design_of(passed: np.ndarray, graded: np.ndarray,
              correlation: float | None = None) -> tuple[Design, dict[str, Any]]:
    """The design files x tasks counts describe: the tasks with a graded run, each task's pass
    rate over all its graded trials, the typical (median) number of graded trials per task and
    file, and rho (given, estimated, or 0 when the counts cannot tell it)."""
    total_graded = graded.sum(axis=0)
    has_runs = total_graded > 0
    rates = passed.sum(axis=0)[has_runs] / total_graded[has_runs]
    trials = max(1, int(round(float(np.median(graded[graded > 0])))))
    if correlation is not None:
        rho, source, note = correlation, "option", "given with --correlation"
    else:
        estimate, note = intraclass_correlation(passed, graded)
        rho, source = (estimate, "estimated") if estimate is not None else (0.0, "assumed")
        if estimate is None:
            note += "; assumed 0 (trials independent given the task's rate): give --correlation to change it"
    design = Design(rates.astype(float), int(has_runs.sum()), trials, rho)
    return design, {"value": rho, "source": source, "note": note}
