"""Krippendorff's alpha and percent agreement (waza_core/results/agreement.py).

Checked against the worked examples of Krippendorff, K. (2011), "Computing Krippendorff's
Alpha-Reliability" (published values to three decimals), and against small cases computed
by hand from the coincidence matrix.
"""

from __future__ import annotations

import pytest

from waza_core.results import agreement
from waza_core.results.agreement import alpha, grader_agreement, observed_agreement

# Krippendorff (2011), example C: 4 observers x 12 units, values 1-5, with missing data
# (None). Published: nominal alpha 0.743, interval alpha 0.849.
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
UNITS_C = [[row[u] for row in OBSERVERS if row[u] is not None] for u in range(12)]

# Krippendorff (2011), example A: 2 observers x 10 units, binary. Published: alpha 0.095.
A = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
B = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]


def test_published_example_with_missing_data_nominal_and_interval():
    nominal, why = alpha(UNITS_C, "nominal")
    assert why is None and round(nominal, 3) == 0.743
    interval, _ = alpha(UNITS_C, "interval")
    assert round(interval, 3) == 0.849
    # the last unit has one value: not pairable, so dropping it changes nothing
    assert alpha(UNITS_C[:-1], "interval")[0] == pytest.approx(interval)


def test_published_binary_example_and_its_observed_agreement():
    units = list(zip(A, B, strict=True))
    assert round(alpha(units)[0], 3) == 0.095
    assert observed_agreement(units) == pytest.approx(0.6)  # 6 of 10 units agree
    # two values: interval alpha equals nominal alpha (the squared difference is constant)
    assert alpha(units, "interval")[0] == pytest.approx(alpha(units)[0])


def test_hand_computed_split_verdicts_give_negative_alpha():
    # four runs judged three times, each split 2:1. Coincidences: o_PP = o_FF = 2,
    # o_PF = o_FP = 4, n = 12, n_P = n_F = 6. alpha = 1 - (n-1) * 8 / (2 * 6 * 6) = -2/9;
    # agreeing pairs: 4 of 12.
    units = [[True, True, False], [False, False, True], [True, False, True], [False, True, False]]
    assert alpha(units)[0] == pytest.approx(-2 / 9)
    assert observed_agreement(units) == pytest.approx(1 / 3)


def test_perfect_agreement_is_one_and_no_variation_is_undefined():
    assert alpha([[True] * 3, [False] * 3]) == (1.0, None)
    value, why = alpha([[True] * 3, [True] * 3])
    assert value is None and "every verdict was the same (pass)" in why
    assert observed_agreement([[True] * 3, [True] * 3]) == 1.0
    value, why = alpha([[True], []])
    assert value is None and why == "no run has two verdicts to compare"
    assert observed_agreement([[True]]) is None
    with pytest.raises(ValueError):
        alpha([[1, 2]], "ratio")


def _runs(*verdict_rows):
    return [{"task": f"t{i}", "run": 1, "verdicts": row} for i, row in enumerate(verdict_rows)]


P, F = {"passed": True, "score": 1.0}, {"passed": False, "score": 0.0}
ERR = {"error": "timeout: too slow"}


def test_grader_block_flags_an_unstable_judge_and_counts_errors_as_missing():
    g = grader_agreement("prompt", _runs([P, P, F], [F, F, P], [P, F, P, ERR], [F, P, F]), 0.667)
    assert g["alpha"] == pytest.approx(-2 / 9) and g["unstable"] is True
    assert (g["runs"], g["runs_compared"], g["runs_unanimous"]) == (4, 4, 0)
    assert (g["judgments"], g["judgment_errors"]) == (13, 1)
    assert g["split_runs"][0] == {"task": "t0", "run": 1, "passes": 2, "fails": 1}
    stable = grader_agreement("prompt", _runs([P, P], [F, F]), 0.667)
    assert (stable["alpha"], stable["percent_agreement"], stable["unstable"]) == (1.0, 1.0, False)
    same = grader_agreement("prompt", _runs([P, P], [P, P]), 0.667)
    assert same["alpha"] is None and same["percent_agreement"] == 1.0 and same["unstable"] is False
    assert "alpha is undefined" in same["alpha_reason"]


def test_fractional_scores_use_interval_alpha():
    half = {"passed": False, "score": 0.5}
    g = grader_agreement("prompt", _runs([P, half], [F, F], [P, P]), 0.667)
    # pass/fail: run 0 splits; scores: 1 vs 0.5 is a small difference, not a full one
    assert g["score_alpha"] > g["alpha"]


def test_text_lines_name_each_grader_and_the_verdict():
    block = agreement.agreement_block(3, 0.667, {
        "steady": grader_agreement("prompt", _runs([P, P, P], [F, F, F]), 0.667),
        "coin": grader_agreement("prompt", _runs([P, P, F], [F, F, P]), 0.667),
    })
    lines = agreement.summary_lines(block)
    assert lines[0] == "JUDGE AGREEMENT (3 judgments per run, stable at alpha >= 0.667)"
    assert lines[1].startswith("  steady: agreement 100.0%, alpha 1.000") and lines[1].endswith(": stable")
    assert "UNSTABLE" in lines[2] and block["unstable"] == ["coin"]
    assert "judge 'coin' is unstable: alpha" in agreement.unstable_warning("coin", block)
    assert agreement.summary_lines(agreement.agreement_block(3, 0.667, {}))[1].startswith(
        "  no prompt (judge) grader")
    assert agreement.summary_lines(None) == []


def test_the_worked_example_of_docs_statistics_md():
    units = [[True, True, True], [False, False, False], [True, True, False], [False, False, False]]
    assert observed_agreement(units) == pytest.approx(10 / 12)
    assert alpha(units)[0] == pytest.approx(1 - (2 / 12) / (2 * 5 * 7 / (12 * 11)))
    assert round(alpha(units)[0], 3) == 0.686


def test_the_bootstrap_interval_of_alpha_is_seeded_and_needs_enough_runs():
    from waza_core.results.agreement import alpha_interval

    units = [[True] * 3, [False] * 3] * 10 + [[True, True, False], [False, False, True]]
    low, high = alpha_interval(units)
    assert alpha_interval(units) == (low, high)  # the same data, the same interval
    assert low <= alpha(units)[0] <= high <= 1.0
    assert alpha_interval(units[:4]) is None  # fewer than 5 runs compared
    # one split run among 39 unanimous passes: most resamples have no variation at all
    assert alpha_interval([[True] * 3] * 39 + [[True, False, True]]) is None
    # perfect agreement with variation: every resample that has both values gives 1
    assert alpha_interval([[True] * 3, [False] * 3] * 5) == (1.0, 1.0)
    g = grader_agreement("prompt", _runs(*([P, F, P], [F, P, F], [P, P, F]) * 3), 0.667)
    assert g["alpha_ci"] == list(alpha_interval([[True, False, True], [False, True, False], [True, True, False]] * 3))
    assert "(95% CI " in agreement.grader_line("judge", g, 0.667)
