"""The one-run and one-grader fast paths of results/stats.py give exactly what the
general formulas give (the same floats, -0.0, NaN and infinities included)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core.model import GraderResult
from waza_core.results import stats
from waza_core.results.model import RunResult

NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5) | st.sampled_from([0.0, -0.0, 0.1])
STATUSES = st.sampled_from(["passed", "failed", "error", "n/a", "unknown"])


def _general_run_scores(validations):
    vals = list(validations.values())
    scores = [v.score for v in vals]
    weights = [v.weight or 1.0 for v in vals]
    wsum = sum(weights)
    return sum(scores) / len(vals), (sum([s * w for s, w in zip(scores, weights, strict=True)]) / wsum if wsum else 0.0)


@settings(max_examples=examples(500), deadline=None)
@given(score=NUMBERS, weight=NUMBERS, status=STATUSES, duration=st.integers(0, 10**12))
def test_one_run_with_one_grader_matches_the_general_formulas(score, weight, status, duration):
    grade = GraderResult(identifier="g", type="text", score=score, passed=True, weight=weight)
    run = RunResult(run_number=1, attempts=1, status=status, duration_ms=duration, validations={"g": grade})
    assert repr(stats.run_scores(run.validations)) == repr(_general_run_scores(run.validations))
    assert repr(stats.task_stats([run])) == repr(stats._runs_stats([run]))


@settings(max_examples=examples(200), deadline=None)
@given(scores=st.lists(NUMBERS, min_size=2, max_size=4), status=STATUSES)
def test_one_run_with_several_graders_matches_the_general_formulas(scores, status):
    grades = {f"g{i}": GraderResult(identifier=f"g{i}", type="text", score=s, passed=True, weight=1 + i)
              for i, s in enumerate(scores)}
    run = RunResult(run_number=1, attempts=1, status=status, validations=grades)
    assert repr(stats.task_stats([run])) == repr(stats._runs_stats([run]))
