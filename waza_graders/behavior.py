"""``type: behavior``: limits on how the agent worked (tool calls, tokens, time) and which
tools it had to use or avoid.

Rules, each optional (``0`` or absent turns a number rule off), at least one set:
``max_tool_calls``, ``max_tokens`` (input + output; a run without usage fails it),
``required_tools`` / ``forbidden_tools`` (exact tool names, one check each),
``max_duration_ms`` (the agent's run time). Score = passed checks / checks, as in waza.
Not deterministic (``max_duration_ms`` is a clock), so it turns the result cache off as in
waza. See docs/graders/behavior.md.
"""

from __future__ import annotations

from waza_core import Grader, GraderResult, GradingContext, hookimpl
from waza_graders._session import go_nil, tokens_total, tools_used

_LIMIT = {"type": "integer", "minimum": 0}
_NAMES = {"type": "array", "items": {"type": "string"}}
RULES = ("max_tool_calls", "max_tokens", "required_tools", "forbidden_tools", "max_duration_ms")


class BehaviorGrader(Grader):
    name = "behavior"
    needs_workspace = False
    deterministic = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "max_tool_calls": {**_LIMIT, "description": "At most this many tool calls (0: no limit)."},
            "max_tokens": {**_LIMIT, "description": "At most this many input + output tokens (0: no limit)."},
            "required_tools": {**_NAMES, "description": "Tools that must be called (exact names)."},
            "forbidden_tools": {**_NAMES, "description": "Tools that must not be called (exact names)."},
            "max_duration_ms": {**_LIMIT, "description": "The agent's run time limit in ms (0: no limit)."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.max_tool_calls = c.get("max_tool_calls", 0)
        self.max_tokens = c.get("max_tokens", 0)
        self.required = c.get("required_tools")
        self.forbidden = c.get("forbidden_tools")
        self.max_duration_ms = c.get("max_duration_ms", 0)
        self.total = (bool(self.max_tool_calls) + bool(self.max_tokens) + len(self.required or ())
                      + len(self.forbidden or ()) + bool(self.max_duration_ms))

    @classmethod
    def check_config(cls, config):
        if not any(config.get(k) for k in RULES):
            return [((), f"behavior grader must have at least one rule configured ({', '.join(RULES)})")]
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:
        ev = ctx.evidence
        used = tools_used(ev)
        tokens = tokens_total(ev.usage)
        failures = []
        if self.max_tool_calls and len(used) > self.max_tool_calls:
            failures.append(f"Tool call count {len(used)} exceeds max allowed {self.max_tool_calls}")
        if self.max_tokens:
            if tokens is None:
                failures.append("No usage data available to check max tokens")
            elif tokens > self.max_tokens:
                failures.append(f"Token usage {tokens} exceeds max allowed {self.max_tokens}")
        failures += [f"Required tool not used: {t}" for t in self.required or () if t not in used]
        failures += [f"Forbidden tool was used: {t}" for t in self.forbidden or () if t in used]
        if self.max_duration_ms and ev.duration_ms > self.max_duration_ms:
            failures.append(f"Duration {ev.duration_ms}ms exceeds max allowed {self.max_duration_ms}ms")
        score = (self.total - len(failures)) / self.total if self.total else 1.0
        details = {
            "max_tool_calls": self.max_tool_calls, "max_tokens": self.max_tokens,
            "required_tools": self.required, "forbidden_tools": self.forbidden,
            "max_duration_ms": self.max_duration_ms, "failures": go_nil(failures),
            "tool_call_count": len(used), "tools_used": used, "actual_duration": ev.duration_ms,
        }
        if tokens is not None:
            details["tokens_total"] = tokens
        feedback = "; ".join(failures) if failures else "All behavior checks passed"
        return self.result(score, not failures, feedback, **details)


@hookimpl
def waza_register_graders(register):
    register(BehaviorGrader)
