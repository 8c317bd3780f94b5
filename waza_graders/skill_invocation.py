"""``type: skill_invocation``: which skills the agent loaded (``skill.invoked`` events).

``required_skills`` with ``mode`` (``exact_match`` | ``in_order`` | ``any_order``; note
the spelling differs from action_sequence) decides ``passed``; the score is the F1 of
required and invoked skills, times ``1 - 0.6 * extras / invoked`` when ``allow_extra``
is false and more skills were invoked than required (``passed`` is unaffected: only the
score and feedback change, as in waza). Any of ``forbidden_skills`` invoked fails the
run with score 0. See docs/graders/skill_invocation.md.
"""

from __future__ import annotations

from waza_core import Grader, GraderResult, GradingContext, go_list, hookimpl
from waza_graders._session import (
    any_order_match,
    any_order_missing,
    exact_match,
    f1,
    in_order_match,
    precision_recall,
)

MODES = ("exact_match", "in_order", "any_order")
_MATCH = {"exact_match": exact_match, "in_order": in_order_match, "any_order": any_order_match}
_NAMES = {"type": "array", "items": {"type": "string"}}


class SkillInvocationGrader(Grader):
    name = "skill_invocation"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "required_skills": {**_NAMES, "description": "Skills that must be invoked."},
            "mode": {"enum": list(MODES), "description": "How invocations must match required_skills."},
            "allow_extra": {"type": "boolean", "description": "Extra invocations cost no score (default true)."},
            "forbidden_skills": {**_NAMES, "description": "Skills that must not be invoked."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.required = list(c.get("required_skills") or [])
        self.forbidden = list(c.get("forbidden_skills") or [])
        self.mode = c.get("mode") or "any_order"
        self.allow_extra = c.get("allow_extra", True)

    @classmethod
    def check_config(cls, config):
        if not config.get("required_skills") and not config.get("forbidden_skills"):
            return [((), "skill_invocation grader must have at least one required_skills or forbidden_skills entry")]
        if config.get("required_skills") and not config.get("mode"):
            return [((), f"skill_invocation grader needs 'mode' with required_skills: {', '.join(MODES)}")]
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:
        actual = [s.get("name", "") if isinstance(s, dict) else str(s) for s in ctx.evidence.skill_invocations or []]
        precision = recall = score_f1 = 1.0
        required_ok = True
        if self.required:
            precision, recall = precision_recall(self.required, actual)
            score_f1 = f1(precision, recall)
            required_ok = _MATCH[self.mode](self.required, actual)
        violations = [s for s in dict.fromkeys(self.forbidden) if s in actual]
        extra = len(actual) - len(self.required)
        score = score_f1
        if not self.allow_extra and self.required and extra > 0:
            score = score_f1 * (1.0 - extra / len(actual) * 0.6)
        if violations:
            score = 0.0
        passed = required_ok and not violations
        if not passed:
            feedback = self._failure(actual, required_ok, violations)
        elif not self.required:
            feedback = "Forbidden skills were not invoked"
        elif not self.allow_extra and extra > 0:
            feedback = (f"Skill invocation sequence matched but had extra invocations "
                        f"(got {len(actual)}, expected {len(self.required)})")
        else:
            feedback = "Skill invocation sequence matched"
        return self.result(score, passed, feedback, mode=self.mode, required_skills=self.required,
                           forbidden_skills=self.forbidden, forbidden_violations=violations,
                           actual_skills=actual, allow_extra=self.allow_extra, precision=precision,
                           recall=recall, f1=score_f1)

    def _failure(self, actual: list[str], required_ok: bool, violations: list[str]) -> str:
        req = self.required
        parts = []
        if req and not required_ok:
            if self.mode == "exact_match":
                parts.append(f"Exact match failed: expected {len(req)} skills {go_list(req)}, "
                             f"got {len(actual)} skills {go_list(actual)}")
            elif self.mode == "in_order":
                parts.append(f"In-order match failed: not all required skills {go_list(req)} appeared in order "
                             f"within actual {go_list(actual)}")
            else:
                parts.append(any_order_missing(req, actual, "skills"))
        if req and not self.allow_extra and len(actual) > len(req):
            parts.append(f"Extra invocations not allowed (got {len(actual)}, expected {len(req)})")
        if violations:
            parts.append(f"Forbidden skills invoked: {', '.join(violations)}")
        return "; ".join(parts) or "Skill invocation constraints failed"


@hookimpl
def waza_register_graders(register):
    register(SkillInvocationGrader)
