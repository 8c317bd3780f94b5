"""The gate's significance test keeps its promise: seeded simulations of the hidden check's design
(40 tasks x 5 trials) with a known truth. False positives stay at alpha whether trials are
independent or strongly correlated (where pooling runs raised them to about 0.16-0.19), and a real
regression is found. bench/bench_significance.py prints the full calibration table."""

from __future__ import annotations

import numpy as np
import pytest

from waza_core.results import significance

PAIRS = 60


def _doc(passed: np.ndarray) -> dict:
    return {"tasks": [{"test_id": f"t{i}", "runs": [{"status": "passed" if p else "failed"} for p in row]}
                      for i, row in enumerate(passed)]}


def _draw(rng, rates, correlated: bool, trials: int = 5) -> np.ndarray:
    if not correlated:
        return rng.random((len(rates), trials)) < rates[:, None]
    verdict = rng.random(len(rates)) < rates  # one answer per task and file, repeated in (almost) every trial
    keep = rng.random((len(rates), trials)) < 0.9
    return np.where(keep, verdict[:, None], rng.random((len(rates), trials)) < rates[:, None])


def _fired(correlated: bool, effect: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    fired = 0
    for _ in range(PAIRS):
        rates = rng.beta(2, 1.2, 40)
        base = _draw(rng, rates, correlated)
        cur = _draw(rng, np.clip(rates - effect, 0, 1), correlated)
        fired += bool(significance.compare(_doc(base), _doc(cur), 0.05)["significant"])
    return fired / PAIRS


@pytest.mark.parametrize("correlated", [False, True], ids=["independent", "correlated"])
def test_false_positive_rate_holds_at_alpha(correlated):
    # 60 pairs: a true rate of 0.05 stays below 0.10 with probability ~0.94; the seed fixes the draw
    assert _fired(correlated, 0.0, seed=11) <= 0.10


def test_a_real_regression_is_found():
    assert _fired(False, 0.15, seed=12) >= 0.75


def test_identical_files_are_within_noise_and_say_so():
    rng = np.random.default_rng(3)
    runs = rng.random((30, 5)) < 0.7
    sig = significance.compare(_doc(runs), _doc(runs), 0.05)
    assert sig["p_value"] == 1.0 and sig["significant"] is False and sig["direction"] is None
    assert sig["verdict"] == "within noise" and sig["tasks_with_evidence"] == 0
    assert 0 < sig["minimum_detectable_effect"] < 0.5
    assert "within noise" in significance.describe(sig)


def test_an_improvement_is_reported_in_its_own_direction():
    base = np.zeros((12, 3), dtype=bool)
    cur = np.ones((12, 3), dtype=bool)
    sig = significance.compare(_doc(base), _doc(cur), 0.05)
    assert sig["significant"] is False and sig["direction"] == "improvement"
    assert sig["p_value_improvement"] == pytest.approx(2 ** -12) and sig["verdict"] == "significant improvement"


def test_tasks_in_one_file_only_are_not_evidence():
    base = _doc(np.ones((8, 2), dtype=bool))
    cur = _doc(np.zeros((8, 2), dtype=bool))
    cur["tasks"] = cur["tasks"][:6] + [{"test_id": "new", "runs": [{"status": "failed"}]}]
    sig = significance.compare(base, cur, 0.05)
    assert sig["tasks_compared"] == 6 and sig["tasks_only_in_one_file"] == 3
    assert sig["p_value"] == pytest.approx(2 ** -6)


def test_the_minimum_detectable_effect_shrinks_with_more_tasks():
    small = significance.minimum_detectable_effect([0.2, -0.2] * 5, trials=5, alpha=0.05)
    large = significance.minimum_detectable_effect([0.2, -0.2] * 50, trials=5, alpha=0.05)
    assert small is not None and large is not None and large < small
    assert significance.minimum_detectable_effect([0.1], trials=5, alpha=0.05) is None


def test_beyond_large_suites_the_normal_limit_agrees_with_the_permutation_test():
    import scipy.stats

    rng = np.random.default_rng(5)
    diffs = list(rng.choice([-0.4, -0.2, 0.2, 0.4, 0.6], size=significance.LARGE + 500))
    normal_less, normal_greater, exact = significance._sign_flip(scipy.stats, diffs)
    assert exact is False
    old, significance.LARGE = significance.LARGE, 10 ** 9
    try:
        perm_less, perm_greater, _ = significance._sign_flip(scipy.stats, diffs)
    finally:
        significance.LARGE = old
    assert abs(normal_less - perm_less) < 0.01 and abs(normal_greater - perm_greater) < 0.01
