"""``type: text``: substring and regular-expression checks on the agent's output.

``contains``/``not_contains`` compare case-insensitively (both sides lowered as Go's
``strings.ToLower`` does), the ``_cs`` variants case-sensitively;
``regex_match``/``regex_not_match`` search anywhere in the output with RE2 (waza's
regex syntax, linear-time matching). Score = passed checks / checks. Patterns are
compiled once, when the suite loads; an invalid one is a load error (waza (Go) counts it
as a failed check at run time instead).
"""

from __future__ import annotations

from waza_core import Grader, GraderResult, GradingContext, RegexError, compile_regex, go_lower, hookimpl

KEYS = ("contains", "not_contains", "contains_cs", "not_contains_cs", "regex_match", "regex_not_match")
_LIST = {"type": "array", "items": {"type": "string"}}


class TextGrader(Grader):
    name = "text"
    bounded = True  # regexes only (RE2 semantics): called in the run's thread
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
        "properties": {
            "contains": {**_LIST, "description": "Substrings that must appear (case-insensitive)."},
            "not_contains": {**_LIST, "description": "Substrings that must not appear (case-insensitive)."},
            "contains_cs": {**_LIST, "description": "Substrings that must appear (case-sensitive)."},
            "not_contains_cs": {**_LIST, "description": "Substrings that must not appear (case-sensitive)."},
            "regex_match": {**_LIST, "description": "RE2 patterns that must match somewhere in the output."},
            "regex_not_match": {**_LIST, "description": "RE2 patterns that must match nowhere in the output."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)

        # tuples, and the one shared () for a key that is not set: a suite of 100,000
        # tasks builds 100,000 text graders, and six lists each were 30 MB
        c = spec.config
        self.contains, self.contains_low = _lowered(c.get("contains"))
        self.not_contains, self.not_contains_low = _lowered(c.get("not_contains"))
        self.contains_cs = tuple(c.get("contains_cs") or ())
        self.not_contains_cs = tuple(c.get("not_contains_cs") or ())
        self.regex_match = _compiled(c.get("regex_match"), compile_regex)
        self.regex_not_match = _compiled(c.get("regex_not_match"), compile_regex)
        self.total = sum([len(c[k]) for k in KEYS if k in c])
        #: the configured keys, in ``details`` order (one tuple shared by every grader
        #: with the same keys: a suite holds one grader per task)
        shown = tuple([k for k in KEYS if k in c])
        self.shown = _KEY_SETS.setdefault(shown, shown)

    @classmethod
    def check_config(cls, config):

        problems = []
        for key in ("regex_match", "regex_not_match"):
            for i, pattern in enumerate(config.get(key, ())):
                try:
                    compile_regex(pattern)
                except RegexError as exc:
                    problems.append(((key, i), f"invalid {key} pattern {pattern!r}: {exc.reason}"))
        return problems

    def grade(self, ctx: GradingContext) -> GraderResult:
        out = ctx.evidence.output or ""
        failures = []
        if self.contains or self.not_contains:
            low = go_lower(out)
            for s, ls in zip(self.contains, self.contains_low, strict=True):
                if ls not in low:
                    failures.append(f"Missing expected substring: {s}")
            for s, ls in zip(self.not_contains, self.not_contains_low, strict=True):
                if ls in low:
                    failures.append(f"Found forbidden substring: {s}")
        if self.contains_cs or self.not_contains_cs:
            failures += [f"Missing expected substring (case-sensitive): {s}" for s in self.contains_cs if s not in out]
            failures += [f"Found forbidden substring (case-sensitive): {s}" for s in self.not_contains_cs if s in out]
        if self.regex_match or self.regex_not_match:
            failures += [f"Missing expected pattern: {p}" for p, rx in self.regex_match if not rx.search(out)]
            failures += [f"Found forbidden pattern: {p}" for p, rx in self.regex_not_match if rx.search(out)]
        score = 1.0 if self.total == 0 else (self.total - len(failures)) / self.total
        # waza (Go) reports a list that was not configured as null, not []; copies, so
        # nothing done to a result can change the suite's config
        details = dict(_NO_DETAILS)
        spec = self.spec
        c = spec.config
        for key in self.shown:
            details[key] = list(c[key])
        if failures:
            details["failures"] = failures
            return GraderResult(spec.name, spec.type, score, False, "; ".join(failures), spec.weight, details)
        return GraderResult(spec.name, spec.type, score, True, "All text checks passed", spec.weight, details)


#: the distinct tuples of configured keys (see ``TextGrader.shown``)
_KEY_SETS: dict[tuple[str, ...], tuple[str, ...]] = {}
#: ``details`` of a result before the configured lists are filled in: every key null
_NO_DETAILS = dict.fromkeys((*KEYS, "failures"))


def _lowered(values: list[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The strings and their ``go_lower`` forms: the same tuple twice when no string
    has a capital to lower (the usual case: no second tuple to keep)."""
    if not values:
        return (), ()
    strings = tuple(values)
    lowered = tuple([go_lower(s) for s in strings])
    return strings, strings if lowered == strings else lowered


def _compiled(patterns: list[str] | None, compile_regex) -> tuple:
    return tuple([(p, compile_regex(p)) for p in patterns]) if patterns else ()


@hookimpl
def waza_register_graders(register):
    register(TextGrader)
