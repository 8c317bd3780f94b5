"""waza's success-rate change beside its A/A noise band (significance.compare): the band holds
the change of two unchanged runs, a collapse is beyond it, and large suites use the normal limit."""

from __future__ import annotations

import numpy as np

from waza_core.results import significance


def doc(passes: list[int], trials: int = 3) -> dict:
    return {"tasks": [{"test_id": f"t{i}", "runs": [{"status": "passed" if r < k else "failed"} for r in range(trials)]}
                      for i, k in enumerate(passes)]}


def test_an_unchanged_suite_is_within_its_band():
    base = doc([3, 2, 1, 3, 0, 2] * 5)
    sig = significance.compare(base, base, 0.05)
    assert sig["success_rate_delta_compared"] == 0
    assert sig["success_rate_noise_low"] < 0 < sig["success_rate_noise_high"]
    assert sig["success_rate_noise_method"] == "simulation" and sig["success_rate_verdict"] == "within noise"
    assert "success rate +0.0 pp: within noise" in significance.describe(sig)


def test_a_collapse_of_every_task_is_beyond_the_band():
    sig = significance.compare(doc([3] * 30), doc([0] * 30), 0.05)
    assert sig["success_rate_delta_compared"] == -1.0
    assert sig["success_rate_verdict"] == "beyond noise"
    assert "success rate -100.0 pp: beyond noise" in significance.describe(sig)


def test_large_suites_use_the_normal_limit_close_to_the_simulation():
    rng = np.random.default_rng(3)
    passes = [int(k) for k in rng.integers(0, 4, 400)]
    sig = significance.compare(doc(passes), doc(passes), 0.05)
    assert sig["success_rate_noise_method"] == "normal"
    half = sig["success_rate_noise_high"]
    assert sig["success_rate_noise_low"] == -half and 0 < half < 0.1
    # the same design simulated (as up to 100 tasks) agrees with the normal band to a point or so
    from waza_core.results import power
    counts = np.array([passes, passes])
    rho, _ = power.intraclass_correlation(counts, np.full_like(counts, 3))  # as compare estimates it
    design = power.Design(np.array(passes) / 3, len(passes), 3, rho or 0.0)
    simulated = power.aa_spread(design, 2000)["success_rate"]
    assert abs(simulated["aa_high"] - half) < 0.015
