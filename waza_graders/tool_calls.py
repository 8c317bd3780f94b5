"""``type: tool_calls``: which tools were called, how often, and with what arguments.

Checks, each optional (at least one): every ``required_tools`` name was called; no
``forbidden_tools`` name was called (exact names); at least ``min_calls`` and at most
``max_calls`` calls in total; and each ``expect`` entry ``{tool: <regex>, args: {...}}``
is met by some call whose name matches the case-insensitive regex and whose arguments
pass every matcher (see :mod:`waza_graders.argmatcher`). Score = passed / checks.

waza (Go) leaves this grader's ``type`` empty in results, which breaks its own
``waza compare`` (it looks for ``type == "tool_calls"``); here it is ``tool_calls``.
See docs/graders/tool_calls.md.
"""

from __future__ import annotations

from typing import Any

from waza_core import Grader, GraderResult, GradingContext, RegexError, compile_regex, go_quote, hookimpl
from waza_graders import argmatcher
from waza_graders._session import call_args, calls

_COUNT = {"type": "integer", "minimum": 0}
_NAMES = {"type": "array", "items": {"type": "string"}}
CONSTRAINTS = ("required_tools", "forbidden_tools", "min_calls", "max_calls", "expect")


class _Expectation:
    __slots__ = ("tool", "regex", "matchers", "raw_args")

    def __init__(self, raw: dict, i: int) -> None:

        self.tool = raw["tool"]
        if not self.tool.strip():
            raise ValueError(f"expect[{i}].tool: required non-empty string")
        try:
            self.regex = compile_regex("(?i)" + self.tool)
        except RegexError as exc:
            raise ValueError(f"expect[{i}].tool: invalid regex: {exc.reason}") from None
        self.raw_args = raw.get("args") or {}
        self.matchers = argmatcher.compile_args(self.raw_args, f"expect[{i}].args")

    def evaluate(self, run_calls: list[dict], events: list | None) -> tuple[bool, dict[str, Any]]:
        """waza's ``evaluateExpectation``: tool events first when there are matchers, else calls."""
        detail: dict[str, Any] = {"tool": self.tool}
        if self.matchers:
            detail["args"] = self.raw_args
            evs = [e for e in events or [] if isinstance(e, dict)]
            if evs:
                found, reason = self._over_events(evs, detail)
                if found is not None:
                    return found, detail if found else {**detail, "reason": reason}
        names = 0
        reason = ""
        for i, call in enumerate(run_calls):
            if not self.regex.search(call.get("name") if isinstance(call.get("name"), str) else ""):
                continue
            names += 1
            problems = argmatcher.failures(self.matchers, call_args(call, None)) if self.matchers else []
            if not problems:
                return True, {**detail, "matched_call_index": i, "matched_call_id": call.get("id", "")}
            reason = "; ".join(problems)
        detail["reason"] = "no tool call with matching name" if names == 0 else (reason or "no matching call")
        return False, detail

    def _over_events(self, events: list[dict], detail: dict) -> tuple[bool | None, str]:
        names = 0
        reason = ""
        for i, ev in enumerate(events):
            if not self.regex.search(ev.get("tool_name") if isinstance(ev.get("tool_name"), str) else ""):
                continue
            names += 1
            args = ev.get("args")
            if args is None:
                args = {}
            if not isinstance(args, dict):
                reason = "unmarshaling tool event args as object: not a JSON object"
                continue
            problems = argmatcher.failures(self.matchers, args)
            if not problems:
                seq = ev.get("sequence")
                detail["matched_call_index"] = seq - 1 if isinstance(seq, int) and seq > 0 else i
                detail["matched_tool_event_index"] = i
                detail["matched_call_id"] = ev.get("tool_call_id", "")
                return True, ""
            reason = "; ".join(problems)
        if names:
            return False, reason or "no matching call"
        return None, ""


def _compile(config: dict) -> list[_Expectation]:
    return [_Expectation(e, i) for i, e in enumerate(config.get("expect") or [])]


class ToolCallsGrader(Grader):
    name = "tool_calls"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "required_tools": {**_NAMES, "description": "Tools that must be called (exact names)."},
            "forbidden_tools": {**_NAMES, "description": "Tools that must not be called (exact names)."},
            "min_calls": {**_COUNT, "description": "At least this many tool calls."},
            "max_calls": {**_COUNT, "description": "At most this many tool calls."},
            "expect": {"type": "array", "items": {
                "type": "object", "additionalProperties": False, "required": ["tool"],
                "properties": {"tool": {"type": "string", "description": "Regex on the tool name."},
                               "args": argmatcher.ARGS_SCHEMA}}},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.required = list(c.get("required_tools") or [])
        self.forbidden = list(c.get("forbidden_tools") or [])
        self.min_calls = c.get("min_calls")
        self.max_calls = c.get("max_calls")
        self.expect = _compile(c)

    @classmethod
    def check_config(cls, config):
        if not any(config.get(k) or (k in ("min_calls", "max_calls") and k in config) for k in CONSTRAINTS):
            return [((), f"tool_calls grader needs at least one constraint ({', '.join(CONSTRAINTS)})")]
        lo, hi = config.get("min_calls"), config.get("max_calls")
        if lo is not None and hi is not None and lo > hi:
            return [(("min_calls",), f"min_calls ({lo}) must be <= max_calls ({hi})")]
        try:
            _compile(config)
        except ValueError as exc:
            return [((), str(exc))]
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:
        ev = ctx.evidence
        run_calls = calls(ev)
        called = list(dict.fromkeys(c.get("name") for c in run_calls))
        total_calls = len(run_calls)
        failures = [f"required tool {go_quote(t)} was not called" for t in self.required if t not in called]
        failures += [f"forbidden tool {go_quote(t)} was called" for t in self.forbidden if t in called]
        checks = len(self.required) + len(self.forbidden)
        if self.min_calls is not None:
            checks += 1
            if total_calls < self.min_calls:
                failures.append(f"expected at least {self.min_calls} tool calls, got {total_calls}")
        if self.max_calls is not None:
            checks += 1
            if total_calls > self.max_calls:
                failures.append(f"expected at most {self.max_calls} tool calls, got {total_calls}")
        results = []
        for exp in self.expect:
            checks += 1
            ok, detail = exp.evaluate(run_calls, ev.tool_events)
            results.append(detail)
            if not ok:
                failures.append(f"expectation tool={go_quote(exp.tool)} not satisfied: {detail['reason']}")
        passed_checks = checks - len(failures)
        details: dict[str, Any] = {"total_calls": total_calls, "unique_tools": called,
                                   "passed_checks": passed_checks, "total_checks": checks}
        if results:
            details["expect"] = results
        feedback = "; ".join(failures) if failures else "all tool_calls checks passed"
        return self.result(passed_checks / checks, not failures, feedback, **details)


@hookimpl
def waza_register_graders(register):
    register(ToolCallsGrader)
