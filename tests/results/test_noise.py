"""``waza noise``'s figures are sane: seeded simulations over results files written by the
project's results writer. The batched test of the simulations decides as the gate's test does;
more trials or tasks shrink the minimum detectable effect; a larger effect needs fewer trials;
identical deterministic files never flip; the correlation of a run's trials is recovered."""

from __future__ import annotations

import numpy as np
import pytest

from tests.results.noise_files import draw, write_results
from waza_core.errors import WazaError
from waza_core.results import noise, power, significance

FAST = noise.NoiseOptions(simulations=400)
SIMS = 400


def _doc(verdicts: np.ndarray) -> dict:
    return {"tasks": [{"test_id": f"t{i}", "runs": [{"status": "passed" if v else "failed"} for v in row]}
                      for i, row in enumerate(verdicts)]}


@pytest.mark.parametrize(("tasks", "effect"), [(6, 0.6), (30, 0.15)])  # 6: every sign pattern (exact)
def test_the_batched_test_decides_as_the_gates_test(tasks, effect):
    rng = np.random.default_rng(5)
    rows, expected, margins = [], [], []
    for _ in range(40):
        rates = rng.beta(2, 1.2, tasks)
        base, cur = draw(rng, rates, 3), draw(rng, np.clip(rates - effect, 0, 1), 3)
        sig = significance.compare(_doc(base), _doc(cur), 0.05)
        rows.append(cur.mean(axis=1) - base.mean(axis=1))
        expected.append(sig["p_value"] < 0.05)
        margins.append(abs(sig["p_value"] - 0.05))
    got = power.sign_flip_rejects(np.array(rows), 0.05, np.random.default_rng(1))
    clear = np.array(margins) > (0 if tasks == 6 else 0.015)  # drawn patterns: p known to ~0.005
    assert clear.sum() >= 30 and 5 <= sum(expected) <= 35
    assert (got[clear] == np.array(expected)[clear]).all()


def _design(tasks: int, trials: int, rho: float = 0.0, seed: int = 2) -> power.Design:
    return power.Design(np.random.default_rng(seed).beta(2, 1.2, tasks), tasks, trials, rho)


def test_no_change_is_found_at_most_alpha_of_the_time():
    for rho in (0.0, 0.9):
        assert power.power_at(_design(40, 5, rho), 0.0, 0.05, SIMS) <= 0.05 + 0.03


def test_more_trials_or_more_tasks_shrink_the_minimum_detectable_effect():
    few, _ = power.minimum_detectable_effect(_design(40, 2), 0.05, 0.8, SIMS)
    more_trials, _ = power.minimum_detectable_effect(_design(40, 8), 0.05, 0.8, SIMS)
    more_tasks, _ = power.minimum_detectable_effect(_design(160, 2), 0.05, 0.8, SIMS)
    assert few is not None and more_trials is not None and more_tasks is not None
    assert more_trials < few * 0.8 and more_tasks < few * 0.7


def test_correlated_trials_need_a_larger_effect_and_gain_little_from_trials():
    free, _ = power.minimum_detectable_effect(_design(40, 5, 0.0), 0.05, 0.8, SIMS)
    locked, _ = power.minimum_detectable_effect(_design(40, 5, 0.9), 0.05, 0.8, SIMS)
    locked_more, _ = power.minimum_detectable_effect(_design(40, 20, 0.9), 0.05, 0.8, SIMS)
    assert free < locked and locked_more > locked * 0.8


def test_a_design_too_small_for_the_test_has_no_minimum_detectable_effect():
    # four tasks: the best p-value the sign-flip test can give is 1/16 > 0.05
    mde, curve = power.minimum_detectable_effect(_design(4, 10), 0.05, 0.8, SIMS)
    assert mde is None and curve and curve[0]["power"] == 0.0


def test_a_larger_effect_needs_fewer_trials():
    design = _design(40, 3)
    small = noise.plan(design, noise.NoiseOptions(simulations=400, effect=0.06))
    large = noise.plan(design, noise.NoiseOptions(simulations=400, effect=0.15))
    assert small["trials_needed"] is not None and large["trials_needed"] is not None
    assert large["trials_needed"] < small["trials_needed"]
    assert all(0 <= point["power"] <= 1 for point in small["curve"])
    reached = [p for p in large["curve"] if p["trials"] == large["trials_needed"]]
    assert reached[0]["power"] >= 0.8
    below = [p for p in large["curve"] if p["trials"] == large["trials_needed"] - 1]
    assert not below or below[0]["power"] < 0.8


def test_when_trials_cannot_get_there_tasks_are_planned():
    # every run of a task gives one verdict (rho 1): more trials add nothing, more tasks do
    design = _design(12, 3, rho=1.0)
    out = noise.plan(design, noise.NoiseOptions(simulations=400, effect=0.2, max_trials=8, max_tasks=400))
    assert out["trials_needed"] is None
    assert out["tasks_needed"] is not None and 12 < out["tasks_needed"] <= 400
    assert any(p["tasks"] == out["tasks_needed"] and p["power"] >= 0.8 for p in out["curve"])


def test_an_aa_pair_of_identical_deterministic_files_never_flips(tmp_path):
    verdicts = np.repeat(np.arange(10)[:, None] % 3 != 0, 4, axis=1)  # each task all-pass or all-fail
    a = write_results(tmp_path / "a.json", verdicts)
    b = write_results(tmp_path / "b.json", verdicts)
    report = noise.build_report([str(a), str(b)], FAST)
    assert report["flip_rate"]["trials"] == 0 and report["flip_rate"]["runs"] == 0
    assert report["flip_rate"]["tasks_flipped"] == 0 and report["flip_rate"]["tasks_changed_between_runs"] == 0
    assert report["spread"]["pass_rate"]["sd"] < 1e-12 and report["spread"]["success_rate"]["aa_high"] == 0
    assert all(row["trial_flip_rate"] == 0 and row["run_flip_rate"] == 0 for row in report["per_task"])
    assert report["tasks"] == 10 and report["trials_per_task"] == 4


def test_flip_rates_count_disagreeing_pairs(tmp_path):
    one = write_results(tmp_path / "one.json", np.array([[True, False, True], [True, True, True]]))
    report = noise.build_report([str(one)], FAST)
    first, second = report["per_task"]
    assert first["trial_flip_rate"] == pytest.approx(2 / 3) and first["run_flip_rate"] is None
    assert second["trial_flip_rate"] == 0 and report["flip_rate"]["runs"] is None
    assert report["correlation"]["source"] == "assumed" and report["correlation"]["value"] == 0


@pytest.mark.parametrize("locked", [0.0, 0.8])
def test_the_correlation_of_a_runs_trials_is_recovered(tmp_path, locked):
    rng = np.random.default_rng(7)
    rates = rng.beta(2, 1.2, 150)
    paths = [str(write_results(tmp_path / f"{i}.json", draw(rng, rates, 5, locked))) for i in range(3)]
    observed = noise.read_observed(paths)
    estimate, _ = power.intraclass_correlation(observed.passed, observed.graded)
    assert estimate == pytest.approx(locked, abs=0.12)


def test_the_report_is_reproducible_and_the_seed_matters(tmp_path):
    rng = np.random.default_rng(8)
    path = str(write_results(tmp_path / "r.json", draw(rng, rng.beta(2, 1.2, 30), 3)))
    first = noise.build_report([path], FAST)
    assert noise.build_report([path], FAST) == first
    other = noise.build_report([path], noise.NoiseOptions(simulations=400, seed=1))
    assert other["spread"] != first["spread"]


def test_a_file_without_graded_runs_is_refused_with_its_name(tmp_path):
    empty = write_results(tmp_path / "empty.json", np.zeros((0, 2), dtype=bool))
    with pytest.raises(WazaError, match="empty.json: no task has a graded run"):
        noise.read_observed([str(empty)])


def test_the_gate_prints_the_minimum_detectable_effect_waza_noise_prints(tmp_path):
    # one simulation for both: the MDE beside the gate's delta is `waza noise BASELINE CURRENT`'s
    rng = np.random.default_rng(9)
    rates = rng.beta(2, 1.2, 20)
    base, cur = draw(rng, rates, 3, locked=0.5), draw(rng, rates, 3, locked=0.5)
    a, b = write_results(tmp_path / "a.json", base), write_results(tmp_path / "b.json", cur)
    sig = significance.compare(_doc(base), _doc(cur), 0.05)
    both = noise.build_report([str(a), str(b)], noise.NoiseOptions())
    baseline = noise.build_report([str(a)], noise.NoiseOptions(correlation=sig["correlation"]))
    assert sig["minimum_detectable_effect_method"] == "simulation" and significance.SEED == power.SEED
    assert sig["correlation"] == both["correlation"]["value"] > 0.2  # rho from the two files
    # the same design (the baseline's rates, rho); the gate's budget is smaller (400 pairs, the
    # test's normal limit)
    assert sig["minimum_detectable_effect"] == pytest.approx(baseline["minimum_detectable_effect"], abs=0.03)


def test_an_improvement_has_its_minimum_detectable_rise():
    # waza's A/B case: every task failed without the skills and passes with them
    sig = significance.compare(_doc(np.zeros((6, 1), dtype=bool)), _doc(np.ones((6, 1), dtype=bool)), 0.05)
    assert sig["verdict"] == "significant improvement"
    assert 0.5 < sig["minimum_detectable_effect"] < 1.0  # five of six tasks must rise: a large change


def test_a_suite_too_small_for_any_verdict_says_so():
    sig = significance.compare(_doc(np.ones((4, 3), dtype=bool)), _doc(np.eye(4, 3, dtype=bool) == 0), 0.05)
    assert sig["minimum_detectable_effect"] is None and sig["verdict"] == "within noise"
    assert "no change detectable with this design" in significance.describe(sig)


@pytest.mark.parametrize("rho", [0.0, 0.8])
def test_the_normal_limit_of_the_test_agrees_with_the_test(rho):
    design = _design(30, 3, rho)
    drawn = power.power_at(design, 0.12, 0.05, SIMS)
    normal = power.power_at(design, 0.12, 0.05, SIMS, test=power.sign_flip_rejects_normal)
    assert 0.2 < drawn < 0.95 and normal == pytest.approx(drawn, abs=0.06)


def test_one_trial_per_task_in_one_file_is_flagged_as_too_optimistic(tmp_path):
    path = write_results(tmp_path / "one.json", np.random.default_rng(3).random((20, 1)) < 0.7)
    report = noise.build_report([str(path)], FAST)
    assert report["flip_rate"]["trials"] is None and report["spread"]["pass_rate"]["sd"] == 0
    assert "surely too optimistic" in report["warnings"][0]
    assert "Warning: every task has one graded trial" in noise.render_text(report)
