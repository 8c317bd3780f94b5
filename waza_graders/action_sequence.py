"""``type: action_sequence``: the agent's tool calls against an expected path of actions.

``matching_mode`` decides ``passed``: ``exact_match`` (the same list), ``in_order_match``
(the expected actions appear in order, other calls may come between) or
``any_order_match`` (each expected action appears at least as often). The score is
always the F1 of the two lists as multisets, so a run can score 0.9 and still fail
(waza's behaviour). See docs/graders/action_sequence.md.
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
    tools_used,
)

MODES = ("exact_match", "in_order_match", "any_order_match")
_MATCH = {"exact_match": exact_match, "in_order_match": in_order_match, "any_order_match": any_order_match}


class ActionSequenceGrader(Grader):
    name = "action_sequence"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["matching_mode", "expected_actions"],
        "properties": {
            "matching_mode": {"enum": list(MODES), "description": "How the calls must match the expected list."},
            "expected_actions": {"type": "array", "minItems": 1, "items": {"type": "string"},
                                 "description": "Tool names, in the expected order."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        self.mode = spec.config["matching_mode"]
        self.expected = list(spec.config["expected_actions"])

    def grade(self, ctx: GradingContext) -> GraderResult:
        actual = tools_used(ctx.evidence)
        precision, recall = precision_recall(self.expected, actual)
        score = f1(precision, recall)
        passed = _MATCH[self.mode](self.expected, actual)
        feedback = "Action sequence matched" if passed else self._failure(actual)
        return self.result(score, passed, feedback, matching_mode=self.mode, expected_actions=self.expected,
                           actual_actions=actual, precision=precision, recall=recall, f1=score)

    def _failure(self, actual: list[str]) -> str:
        exp = self.expected
        if self.mode == "exact_match":
            return (f"Exact match failed: expected {len(exp)} actions {go_list(exp)}, "
                    f"got {len(actual)} actions {go_list(actual)}")
        if self.mode == "in_order_match":
            return (f"In-order match failed: not all expected actions {go_list(exp)} appeared in order "
                    f"within actual {go_list(actual)}")
        return any_order_missing(exp, actual, "actions")


@hookimpl
def waza_register_graders(register):
    register(ActionSequenceGrader)
