"""Argument matchers for the ``tool_calls`` and ``tool_constraint`` graders (waza's
``internal/graders/argmatcher``).

A matcher is a mapping with exactly one key, one of five kinds::

    query: {regex: "^auth"}          # RE2 on the value's text (non-strings as JSON)
    path:  {contains: "src/"}        # substring of the value's text
    mode:  {equals: "fast"}          # deep equality after JSON normalisation
    count: {range: {gte: 1, lte: 5}} # a number within bounds (gt / lt exclusive)
    opts:  {json_schema: {type: object, required: [dry_run]}}

:func:`compile_matcher` checks one (a ``ValueError`` names the problem) and
:func:`failures` checks a call's arguments against a set of them, with waza's messages.
A missing argument fails. Matching never backtracks: regexes are RE2.
"""

from __future__ import annotations

from typing import Any

from waza_core import RegexError, compile_regex, go_float, go_json, go_quote, go_value

KINDS = ("equals", "regex", "contains", "range", "json_schema")
_NUMBER = {"type": "number"}

#: JSON Schema of one matcher (a mapping with exactly one of the five kinds)
MATCHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "equals": {},
        "regex": {"type": "string"},
        "contains": {"type": "string"},
        "range": {"type": "object", "additionalProperties": False,
                  "properties": {"gte": _NUMBER, "lte": _NUMBER, "gt": _NUMBER, "lt": _NUMBER}},
        "json_schema": {"type": "object"},
    },
}
#: JSON Schema of an ``args`` mapping: argument name -> matcher
ARGS_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": MATCHER_SCHEMA}


class Matcher:
    """One compiled matcher; :meth:`match` returns ``(ok, reason)`` as waza words it."""

    __slots__ = ("kind", "value", "compiled")

    def __init__(self, kind: str, value: Any, compiled: Any = None) -> None:
        self.kind, self.value, self.compiled = kind, value, compiled

    def match(self, actual: Any) -> tuple[bool, str]:
        return getattr(self, "_match_" + self.kind)(actual)

    def _match_equals(self, actual: Any) -> tuple[bool, str]:
        if _deep_equal(self.value, actual):
            return True, f"equals {_render(self.value)}"
        return False, f"expected {_render(self.value)}, got {_render(actual)}"

    def _match_regex(self, actual: Any) -> tuple[bool, str]:
        text = _text(actual)
        if self.compiled.search(text):
            return True, f"regex {go_quote(self.value)} matched"
        return False, f"regex {go_quote(self.value)} did not match {go_quote(text)}"

    def _match_contains(self, actual: Any) -> tuple[bool, str]:
        text = _text(actual)
        if self.value in text:
            return True, f"contains {go_quote(self.value)}"
        return False, f"expected substring {go_quote(self.value)}, got {go_quote(text)}"

    def _match_range(self, actual: Any) -> tuple[bool, str]:
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return False, f"range: value {go_value(actual)} is not numeric"
        n, b = float(actual), self.value
        if "gte" in b and n < b["gte"]:
            return False, f"range: {go_float(n)} < gte {go_float(b['gte'])}"
        if "gt" in b and n <= b["gt"]:
            return False, f"range: {go_float(n)} <= gt {go_float(b['gt'])}"
        if "lte" in b and n > b["lte"]:
            return False, f"range: {go_float(n)} > lte {go_float(b['lte'])}"
        if "lt" in b and n >= b["lt"]:
            return False, f"range: {go_float(n)} >= lt {go_float(b['lt'])}"
        return True, f"range: {go_float(n)} within bounds"

    def _match_json_schema(self, actual: Any) -> tuple[bool, str]:
        error = next(iter(self.compiled.iter_errors(actual)), None)
        if error is not None:
            where = "/" + "/".join(str(p) for p in error.absolute_path)
            return False, f"json_schema: at {where}: {error.message}"
        return True, "json_schema: valid"


def compile_matcher(spec: Any) -> Matcher:
    """A matcher from its config mapping; ``ValueError`` with waza's wording when invalid."""
    if not isinstance(spec, dict):
        raise ValueError("argmatcher: expected mapping (e.g. {regex: '^foo'})")
    if not spec:
        raise ValueError("argmatcher: empty matcher; expected one of equals, regex, contains, range, json_schema")
    if len(spec) > 1:
        raise ValueError(f"argmatcher: exactly one matcher kind allowed, got {len(spec)} ({', '.join(spec)})")
    kind, value = next(iter(spec.items()))
    if kind not in KINDS:
        raise ValueError(f"argmatcher: unknown matcher kind {kind!r} (allowed: {', '.join(KINDS)})")
    compiled = None
    if kind == "regex":

        if not isinstance(value, str) or not value:
            raise ValueError("argmatcher: regex matcher requires a non-empty pattern")
        try:
            compiled = compile_regex(value)
        except RegexError as exc:
            raise ValueError(f"argmatcher: invalid regex {go_quote(value)}: {exc.reason}") from None
    elif kind == "contains":
        if not isinstance(value, str) or not value:
            raise ValueError("argmatcher: contains matcher requires a non-empty substring")
    elif kind == "range":
        if not isinstance(value, dict) or not any(k in value for k in ("gte", "lte", "gt", "lt")):
            raise ValueError("argmatcher: range matcher requires at least one bound (gte, lte, gt, lt)")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value.values()):
            raise ValueError("argmatcher: range bounds must be numbers")
    elif kind == "json_schema":
        compiled = _schema_validator(value)
    return Matcher(kind, value, compiled)


def _schema_validator(schema: Any):
    """A validator for the schema's own ``$schema`` draft (2020-12 when absent); remote
    ``$ref`` targets are never fetched."""
    if not isinstance(schema, dict) or not schema:
        raise ValueError("argmatcher: json_schema matcher requires a non-empty schema")
    # deferred: jsonschema adds ~105.7 ms to importing this module
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"argmatcher: invalid json_schema: {exc.message}") from None
    return cls(schema)


def compile_args(args: dict, where: str) -> dict[str, Matcher]:
    """``args:`` mapping -> compiled matchers; ``ValueError`` naming ``where[arg]``."""
    out = {}
    for name, spec in args.items():
        try:
            out[name] = compile_matcher(spec)
        except ValueError as exc:
            raise ValueError(f"{where}[{name}]: {exc}") from None
    return out


def failures(matchers: dict[str, Matcher], args: dict) -> list[str]:
    """waza's ``evaluateArgMatchers``: one message per failing matcher, by argument name."""
    out = []
    for key in sorted(matchers):
        if key not in args:
            out.append(f"argument {go_quote(key)}: not present on tool call")
            continue
        try:
            ok, reason = matchers[key].match(args[key])
        except RecursionError:  # a value nested past Python's stack (agents can send anything)
            ok, reason = False, "value nests too deeply to match"
        if not ok:
            out.append(f"argument {go_quote(key)}: {reason}")
    return out


def _text(value: Any) -> str:
    """waza's ``toString``: a string as is, null as "", anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else go_json(value)


def _render(value: Any) -> str:
    if value is None:
        return "null"
    return go_quote(value) if isinstance(value, str) else go_json(value)


def _deep_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values as Go compares them after a JSON round trip: numbers
    by value (1 == 1.0), but a boolean is never a number and a list never a mapping."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b
