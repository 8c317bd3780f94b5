"""``type: tool_constraint``: tools the agent must use (``expect_tools``), must not use
(``reject_tools``), or may only use (``allow_only``).

An expect/reject spec is ``{tool, command_pattern?, skill_pattern?, path_pattern?, args?}``:
``tool`` and the patterns are case-insensitive RE2 regexes (searched, not anchored) on the
call's name and its ``command`` / ``skill`` / ``path`` argument; ``args`` are argument
matchers (see :mod:`waza_graders.argmatcher`). An expect spec passes when some call
matches it, a reject spec when none does. ``allow_only`` lists the permitted tools by
exact name (case-insensitive, with waza's aliases such as ``view`` = ``read``); every
call outside it is one failed check, every call inside one passed check, and a run with
no calls counts one passed check. Score = passed checks / checks. See
docs/graders/tool_constraint.md.
"""

from __future__ import annotations

from waza_core import Grader, GraderResult, GradingContext, RegexError, compile_regex, hookimpl
from waza_graders import argmatcher
from waza_graders._session import arg_text, call_args, calls, go_nil, tokens_total, tools_used, turns

PATTERNS = ("command_pattern", "skill_pattern", "path_pattern")
_SPEC = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tool"],
    "properties": {
        "tool": {"type": "string", "description": "Regex on the tool name (allow_only: the exact name)."},
        "command_pattern": {"type": "string", "description": "Regex on the call's command argument."},
        "skill_pattern": {"type": "string", "description": "Regex on the call's skill argument."},
        "path_pattern": {"type": "string", "description": "Regex on the call's path argument."},
        "args": argmatcher.ARGS_SCHEMA,
    },
}
_SPECS = {"type": "array", "items": _SPEC}


class _Spec:
    """One compiled tool spec."""

    __slots__ = ("raw", "tool", "exact", "patterns", "matchers")

    def __init__(self, raw: dict, field: str, i: int, exact: bool) -> None:

        self.raw = raw
        self.tool = raw["tool"].strip()
        self.exact = exact
        if not self.tool:
            raise ValueError(f"config.{field}[{i}].tool: required non-empty string")
        self.patterns = {}
        for key in ("tool",) + PATTERNS if not exact else PATTERNS:
            pattern = self.tool if key == "tool" else raw.get(key, "")
            if pattern:
                try:
                    self.patterns[key] = compile_regex("(?i)" + pattern)
                except RegexError as exc:
                    raise ValueError(f"config.{field}[{i}].{key}: invalid regex: {exc.reason}") from None
        self.matchers = argmatcher.compile_args(raw.get("args") or {}, f"config.{field}[{i}].args")

    def matches(self, call: dict, events) -> bool:
        name = call.get("name") if isinstance(call.get("name"), str) else ""
        if self.exact:
            if not same_tool(self.tool, name):
                return False
        elif not self.patterns["tool"].search(name):
            return False
        for key, field in (("command_pattern", "command"), ("path_pattern", "path"), ("skill_pattern", "skill")):
            rx = self.patterns.get(key)
            if rx is not None and not rx.search(arg_text(call, field)):
                return False
        return not self.matchers or not argmatcher.failures(self.matchers, call_args(call, events))

    def describe(self) -> str:
        """waza's label: ``tool (command_pattern: x, args: [a, b])``."""
        quals = [f"{k}: {self.raw[k]}" for k in PATTERNS if self.raw.get(k)]
        if self.matchers:
            quals.append(f"args: [{', '.join(sorted(self.matchers))}]")
        return f"{self.tool} ({', '.join(quals)})" if quals else self.tool


def canonical_tool(name: str) -> str:
    """waza's ``CanonicalToolName``: lower case, ``builtin:`` dropped, common aliases merged."""
    name = name.strip().lower()
    for prefix in ("builtin:", "mcp:", "custom:"):
        if name.startswith(prefix):
            if prefix != "builtin:":
                return name
            name = name[len(prefix):]
            break
    return {"readfile": "read", "fileread": "read", "view": "read", "writefile": "write", "filewrite": "write",
            "edit": "write", "runcommand": "bash", "web_fetch": "fetch"}.get(name, name)


def same_tool(declared: str, observed: str) -> bool:
    """waza's ``MatchesToolCallName``: an allow_only entry against a recorded call name."""
    declared, observed = declared.strip().lower(), observed.strip().lower()
    if ":" not in observed:
        for prefix in ("mcp:", "custom:"):
            if declared.startswith(prefix):
                return declared[len(prefix):] == observed
    return canonical_tool(declared) == canonical_tool(observed)


def _compile(config: dict) -> tuple[list[_Spec], list[_Spec], list[_Spec] | None]:
    expect = [_Spec(s, "expect_tools", i, False) for i, s in enumerate(config.get("expect_tools") or [])]
    reject = [_Spec(s, "reject_tools", i, False) for i, s in enumerate(config.get("reject_tools") or [])]
    allow = None
    if config.get("allow_only") is not None:
        allow = [_Spec(s, "allow_only", i, True) for i, s in enumerate(config["allow_only"])]
    return expect, reject, allow


class ToolConstraintGrader(Grader):
    name = "tool_constraint"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "expect_tools": {**_SPECS, "description": "Each must match at least one call."},
            "reject_tools": {**_SPECS, "description": "None may match any call."},
            "allow_only": {**_SPECS, "description": "Every call must be one of these tools (exact names); "
                                                    "[] allows none."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        self.expect, self.reject, self.allow = _compile(spec.config)

    @classmethod
    def check_config(cls, config):
        if not config.get("expect_tools") and not config.get("reject_tools") and config.get("allow_only") is None:
            return [((), "tool_constraint grader must have at least one constraint configured "
                         "(expect_tools, reject_tools or allow_only)")]
        try:
            _compile(config)
        except ValueError as exc:
            return [((), str(exc))]
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:
        ev = ctx.evidence
        run_calls = calls(ev)
        failures = [f"Expected tool not used: {s.describe()}" for s in self.expect
                    if not any(s.matches(c, ev.tool_events) for c in run_calls)]
        failures += [f"Rejected tool was used: {s.describe()}" for s in self.reject
                     if any(s.matches(c, ev.tool_events) for c in run_calls)]
        constraint_failures = len(failures)
        allow_checks, allow_failed, violations = self._allow_only(run_calls, ev.tool_events, failures)
        total = len(self.expect) + len(self.reject) + allow_checks
        score = (total - constraint_failures - allow_failed) / total if total else 1.0
        details = {"expect_tools": [s.describe() for s in self.expect],
                   "reject_tools": [s.describe() for s in self.reject],
                   "failures": go_nil(failures), "tools_used": tools_used(ev)}
        if self.allow is not None:
            details["allow_only"] = [s.describe() for s in self.allow]
            details["allow_only_declared"] = True
            details["allow_only_violations"] = go_nil(violations)
        tokens = tokens_total(ev.usage)
        if tokens is not None:
            details["tokens_total"] = tokens
            details["total_turns"] = turns(ev.usage)
        feedback = "; ".join(failures) if failures else "All tool constraint checks passed"
        return self.result(score, not failures, feedback, **details)

    def _allow_only(self, run_calls: list[dict], events, failures: list[str]) -> tuple[int, int, list[str]]:
        """(checks, failed checks, violating names): one check per call, or one for none."""
        if self.allow is None:
            return 0, 0, []
        if not run_calls:
            return 1, 0, []
        counts: dict[str, int] = {}
        for call in run_calls:
            if not any(s.matches(call, events) for s in self.allow):
                name = call.get("name") or "<unnamed>"
                counts[name] = counts.get(name, 0) + 1
        allowed = ", ".join(s.describe() for s in self.allow)
        for name, n in counts.items():
            many = f"{n} calls; " if n > 1 else ""
            failures.append(f"Undeclared tool used: {name} ({many}not in allow_only: [{allowed}])")
        return len(run_calls), sum(counts.values()), list(counts)


@hookimpl
def waza_register_graders(register):
    register(ToolConstraintGrader)
