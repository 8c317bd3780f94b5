"""``type: text``: substring and regular-expression checks on the agent's output.

``contains``/``not_contains`` compare case-insensitively (both sides lowered as Go's
``strings.ToLower`` does), the ``_cs`` variants case-sensitively;
``regex_match``/``regex_not_match`` search anywhere in the output with RE2 (waza's
regex syntax, linear-time matching). Score = passed checks / checks. Patterns are
checked when the suite loads; an invalid one is a load error (waza (Go) counts it as a
failed check at run time instead). The grader keeps nothing but its spec: it is built for
each run (``built_per_run``), and a pattern is compiled once per process and kept.
"""

from __future__ import annotations

import functools

from waza_core import Grader, GraderResult, GradingContext, RegexError, compile_regex, go_lower, hookimpl

KEYS = ("contains", "not_contains", "contains_cs", "not_contains_cs", "regex_match", "regex_not_match")
_LIST = {"type": "array", "items": {"type": "string"}}


class TextGrader(Grader):
    name = "text"
    bounded = True  # regexes only (RE2 semantics): called in the run's thread
    built_per_run = True  # patterns checked at load (check_config); no lifecycle, no environment
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
        # everything straight from the config: the grader is built for each run
        # (built_per_run), so it keeps nothing of its own
        c = self.spec.config
        out = ctx.evidence.output or ""
        failures: list[str] = []
        # plain loops over the lists a config has (most have one): a comprehension is a call
        # of its own on Python 3.11, and this runs once per run of every task
        contains, not_contains = c.get("contains"), c.get("not_contains")
        if contains or not_contains:
            low = go_lower(out)
            for s in contains or ():
                if go_lower(s) not in low:
                    failures.append(f"Missing expected substring: {s}")
            for s in not_contains or ():
                if go_lower(s) in low:
                    failures.append(f"Found forbidden substring: {s}")
        contains_cs, not_contains_cs = c.get("contains_cs"), c.get("not_contains_cs")
        if contains_cs or not_contains_cs:
            failures += [f"Missing expected substring (case-sensitive): {s}" for s in contains_cs or () if s not in out]
            failures += [f"Found forbidden substring (case-sensitive): {s}" for s in not_contains_cs or () if s in out]
        regex_match, regex_not_match = c.get("regex_match"), c.get("regex_not_match")
        if regex_match or regex_not_match:
            failures += [f"Missing expected pattern: {p}" for p in regex_match or () if not _regex(p).search(out)]
            failures += [f"Found forbidden pattern: {p}" for p in regex_not_match or () if _regex(p).search(out)]
        # waza (Go) reports a list that was not configured as null, not []; copies, so
        # nothing done to a result can change the suite's config
        details = dict(_NO_DETAILS)  # every key, in KEYS order: filling some keeps that order
        total = 0
        for key, values in c.items():
            if key in _KEY_SET:
                total += len(values)
                details[key] = list(values)
        score = 1.0 if total == 0 else (total - len(failures)) / total
        spec = self.spec
        if failures:
            details["failures"] = failures
            return GraderResult(spec.name, spec.type, score, False, "; ".join(failures), spec.weight, details)
        return GraderResult(spec.name, spec.type, score, True, "All text checks passed", spec.weight, details)


#: a pattern compiled once and kept (suites repeat their patterns over many tasks; RE2
#: objects are immutable and safe to share between threads); bounded
_regex = functools.lru_cache(maxsize=4096)(compile_regex)

#: ``details`` of a result before the configured lists are filled in: every key null
_NO_DETAILS = dict.fromkeys((*KEYS, "failures"))
_KEY_SET = frozenset(KEYS)


@hookimpl
def waza_register_graders(register):
    register(TextGrader)
