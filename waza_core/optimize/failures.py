"""Failure categories of ``waza optimize`` and how each maps to an outcome and exit code.

A failure ends the run: the loop raises :class:`OptimizeFailure`, the report records
its category, and the command exits 1.
"""

from __future__ import annotations

from waza_core.errors import ExitCode

CATEGORIES = (
    "unsupported_version", "incompatible_capability", "invalid_suite", "invalid_config",
    "consent_required", "malformed_proposal", "unsafe_candidate_path", "optimizer_failure",
    "infrastructure_failure", "missing_evidence", "suite_changed", "evaluation_incomplete",
    "cancelled", "timeout",
)

#: failure categories whose outcome is ``incomplete`` rather than ``failed``: the run
#: could not finish its measurement, nothing was found wrong with a component.
INCOMPLETE = frozenset({"cancelled", "timeout", "evaluation_incomplete"})

OUTCOME_EXIT = {"accepted": int(ExitCode.OK), "no_improvement": int(ExitCode.OK), "rejected": int(ExitCode.OK),
                "not_qualified": int(ExitCode.FAILED), "failed": int(ExitCode.FAILED),
                "incomplete": int(ExitCode.FAILED)}


class OptimizeFailure(Exception):
    """A run-ending failure with its report category and optional context."""

    def __init__(self, category: str, message: str, **context):
        if category not in CATEGORIES:  # a typo here would produce an invalid report
            raise ValueError(f"unknown failure category {category!r}")
        super().__init__(message)
        self.category = category
        self.message = message
        self.context = {k: v for k, v in context.items() if v is not None}

    def to_json(self) -> dict:
        return {"category": self.category, "message": self.message, **self.context}


def outcome_for(category: str) -> str:
    return "incomplete" if category in INCOMPLETE else "failed"


def stop_reason_for(category: str) -> str:
    return category if category in ("cancelled", "timeout") else "failure"
