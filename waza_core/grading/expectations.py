"""The task-level ``expected.output_contains*`` keys, graded as in waza (Go).

Each key becomes a synthetic grader named ``_<key>`` with an empty ``type``:
``output_contains`` and ``output_not_contains`` score the matched fraction
(case-insensitive), ``output_contains_any`` is binary.
"""

from __future__ import annotations

from waza_core.grading.base import Grader, GradingContext
from waza_core.model import GraderResult


class ExpectationGrader(Grader):
    name = "_expected"
    bounded = True  # substring checks only
    needs_workspace = False

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        ((self.key, values),) = spec.config.items()
        self.values = [(v, v.lower()) for v in values]

    def grade(self, ctx: GradingContext) -> GraderResult:
        low = (ctx.evidence.output or "").lower()
        if self.key == "output_contains_any":
            ok = any(lv in low for _, lv in self.values)
            msg = "Output contains one of the expected substrings" if ok else \
                "Missing all of: " + ", ".join(v for v, _ in self.values)
            return self._result(1.0 if ok else 0.0, ok, msg)
        want = self.key == "output_contains"
        failures = [v for v, lv in self.values if (lv in low) != want]
        label = "Missing expected substring" if want else "Found forbidden substring"
        score = (len(self.values) - len(failures)) / len(self.values)
        msg = "; ".join(f"{label}: {v}" for v in failures) or "All expectations met"
        return self._result(score, not failures, msg)

    def _result(self, score: float, passed: bool, feedback: str) -> GraderResult:
        return GraderResult(identifier=self.spec.name, type="", score=score, passed=passed,
                            feedback=feedback, weight=1.0, details={self.key: [v for v, _ in self.values]})
