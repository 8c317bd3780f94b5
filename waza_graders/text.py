"""``type: text``: substring and regular-expression checks on the agent's output.

``contains``/``not_contains`` compare case-insensitively, the ``_cs`` variants
case-sensitively; ``regex_match``/``regex_not_match`` search anywhere in the output
(Python ``re`` syntax; ``(?i)`` works as in RE2). Score = passed checks / checks.
Patterns are compiled once, when the suite loads; an invalid one is a load error.
"""

from __future__ import annotations

import re

from waza_core import Grader, GraderResult, GradingContext, hookimpl

KEYS = ("contains", "not_contains", "contains_cs", "not_contains_cs", "regex_match", "regex_not_match")


class TextGrader(Grader):
    name = "text"
    bounded = True  # regexes only (RE2 semantics): called in the run's thread
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
        "properties": {k: {"type": "array", "items": {"type": "string"}} for k in KEYS},
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.contains = [(s, s.lower()) for s in c.get("contains", ())]
        self.not_contains = [(s, s.lower()) for s in c.get("not_contains", ())]
        self.contains_cs = list(c.get("contains_cs", ()))
        self.not_contains_cs = list(c.get("not_contains_cs", ()))
        self.regex_match = [(p, re.compile(p)) for p in c.get("regex_match", ())]
        self.regex_not_match = [(p, re.compile(p)) for p in c.get("regex_not_match", ())]
        self.total = sum(len(c.get(k, ())) for k in KEYS)

    @classmethod
    def check_config(cls, config):
        import warnings

        problems = []
        for key in ("regex_match", "regex_not_match"):
            for i, pattern in enumerate(config.get(key, ())):
                with warnings.catch_warnings():
                    # re warns (FutureWarning) where RE2 and Python differ, e.g. "[[:digit:]]"
                    warnings.simplefilter("error", FutureWarning)
                    try:
                        re.compile(pattern)
                    except re.error as exc:
                        problems.append(((key, i), f"invalid {key} pattern '{pattern}': {exc.msg} "
                                                   f"at position {exc.pos}"))
                    except FutureWarning as exc:
                        problems.append(((key, i), f"{key} pattern '{pattern}' means something else in Python's re "
                                         f"than in RE2 ({exc}); POSIX classes like [[:digit:]] are not supported, "
                                         "use \\d, \\w, \\s or an explicit set"))
        return problems

    def grade(self, ctx: GradingContext) -> GraderResult:
        out = ctx.evidence.output or ""
        low = out.lower() if (self.contains or self.not_contains) else ""
        failures = []
        failures += [f"Missing expected substring: {s}" for s, ls in self.contains if ls not in low]
        failures += [f"Found forbidden substring: {s}" for s, ls in self.not_contains if ls in low]
        failures += [f"Missing expected substring (case-sensitive): {s}" for s in self.contains_cs if s not in out]
        failures += [f"Found forbidden substring (case-sensitive): {s}" for s in self.not_contains_cs if s in out]
        failures += [f"Missing expected pattern: {p}" for p, rx in self.regex_match if not rx.search(out)]
        failures += [f"Found forbidden pattern: {p}" for p, rx in self.regex_not_match if rx.search(out)]
        score = 1.0 if self.total == 0 else (self.total - len(failures)) / self.total
        feedback = "; ".join(failures) if failures else "All text checks passed"
        details = {k: list(self.spec.config.get(k, ())) for k in KEYS}
        details["failures"] = failures
        return self.result(score, not failures, feedback, **details)


@hookimpl
def waza_register_graders(register):
    register(TextGrader)
