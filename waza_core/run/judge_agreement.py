"""``waza grade --repeat K``: ask every judge grader K times per run and measure its agreement.

A judge (a grader with ``model_judge = True``: ``prompt``) can give a different verdict on
the same evidence when asked again. :class:`JudgeRepeats` asks it K-1 more times after the
ordinary grading of a run, keeps the K verdicts in the first result's
``details.judge_repeats``, and at the end turns them into the results file's
``judge_agreement`` block (:mod:`waza_core.results.agreement`). Deterministic graders are
graded once, as always. The run's grade stays the first judgment: repeating measures the
judge, it does not vote.
"""

from __future__ import annotations

from typing import Any

from waza_core.errors import WazaError
from waza_core.grading.base import Grader, GradingContext
from waza_core.grading.grade import grade_one
from waza_core.model import GraderResult
from waza_core.results import agreement


def judgment(res: GraderResult) -> dict[str, Any]:
    """One judgment as agreement data: its verdict and score, or why it has none (an
    error, or an executor that cannot judge): a missing value, not a verdict."""
    if res.error:
        return {"error": f"{res.error.get('kind', 'error')}: {res.error.get('message', '')}"}
    if (res.details or {}).get("judged") is False:
        return {"error": "not judged: the judge executor does not answer prompts"}
    return {"passed": bool(res.passed), "score": float(res.score)}


class JudgeRepeats:
    """The repeated judgments of one ``waza grade`` call, collected per grader name."""

    def __init__(self, repeat: int, min_alpha: float = agreement.DEFAULT_MIN_ALPHA) -> None:
        if repeat < 2:
            raise WazaError(f"--repeat {repeat}: give 2 or more judgments per run to measure agreement "
                            "(one judgment per run is a plain `waza grade`)")
        if not -1.0 <= min_alpha <= 1.0:
            raise WazaError(f"--min-agreement {min_alpha:g}: Krippendorff's alpha lies between -1 and 1; "
                            "give a value in that range (e.g. 0.667 or 0.8)")
        self.repeat = repeat
        self.min_alpha = min_alpha
        #: grader name -> (its type, per run {"task", "run", "verdicts"})
        self.seen: dict[str, tuple[str, list[dict[str, Any]]]] = {}

    def judge(self, graders: list[Grader], ctx: GradingContext, validations: dict[str, GraderResult],
              task_id: str, run_number: int) -> None:
        """Ask each judge grader of a graded run ``repeat - 1`` more times."""
        for g in graders:
            first = validations.get(g.spec.name)
            if not getattr(g, "model_judge", False) or first is None:
                continue
            verdicts = [judgment(first)]
            for _ in range(self.repeat - 1):
                if ctx.cancel is not None and ctx.cancel.is_set():
                    break  # an interrupted grade: the judgments so far still count
                verdicts.append(judgment(grade_one(g, ctx)))
            first.details = {**(first.details or {}), "judge_repeats": verdicts}
            _, runs = self.seen.setdefault(g.spec.name, (g.spec.type, []))
            runs.append({"task": task_id, "run": run_number, "verdicts": verdicts})

    def block(self) -> dict[str, Any]:
        """The results file's ``judge_agreement`` object."""
        graders = {name: agreement.grader_agreement(gtype, runs, self.min_alpha)
                   for name, (gtype, runs) in self.seen.items()}
        return agreement.agreement_block(self.repeat, self.min_alpha, graders)
