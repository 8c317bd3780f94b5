"""A fast "is this document valid?" for the suite schemas, where it agrees with jsonschema.

Why: a cold load checks every task file against the task schema and every grader's
``config`` against its grader's schema. jsonschema (pure Python) costs ~110 us for a
ten-line task file; jsonschema-rs (Rust) answers the same question in ~1 us. Only the
*answer valid* is taken from it: a document it finds invalid, or cannot take (a date
from ruamel.yaml's fallback, an integer key, an integer past 64 bits), goes to
jsonschema, which reports every error as before (messages, paths, ``file:line:col``).

So the fast check must never call valid what jsonschema calls invalid. It is used only
for schemas made of keywords whose meaning is the same in both (:data:`SAME_KEYWORDS`;
no ``pattern``: Python's ``$`` also matches before a final newline, Rust's does not; no
``format``, ``multipleOf``, ``uniqueItems`` or ``unevaluated*``), only for a schema
jsonschema-rs' meta-schema check accepts (an invalid plugin schema still fails in
jsonschema's ``check_schema``), and with formats not asserted, as jsonschema's
``Draft202012Validator`` without a format checker. tests/suite/test_fastschema.py
compares both answers over generated documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: keywords that validate alike in jsonschema and jsonschema-rs (draft 2020-12), plus
#: the annotations that validate nothing
SAME_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "enum", "const",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems",
    "maxItems", "minProperties", "maxProperties", "$ref", "$defs", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "propertyNames", "dependentRequired",
    "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly",
})
# whose value is a mapping of names (property names, not keywords)
_NAMED = frozenset({"properties", "$defs", "dependentRequired"})

#: what :func:`checker` returns for a schema the fast check does not take
NO_CHECK: Callable[[Any], bool] = lambda _doc: False  # noqa: E731 - "not known valid": ask jsonschema


def checker(schema: dict) -> Callable[[Any], bool]:
    """``is_valid(doc)``: True only when ``doc`` is valid; False means "ask jsonschema".
    Built once per schema by the caller (compiling costs ~5 ms)."""
    if not _same_keywords(schema) or not _local_refs(schema):
        return NO_CHECK
    try:  # imported on first use: `waza <command> --help` never needs it (measured start-up)
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a platform without a jsonschema-rs wheel
        return NO_CHECK
    try:
        if not jsonschema_rs.meta.is_valid(schema):
            return NO_CHECK
        validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=False)
    except Exception:  # a schema it cannot compile: jsonschema decides
        return NO_CHECK
    is_valid = validator.is_valid

    def check(doc: Any) -> bool:
        try:
            return is_valid(doc)
        except Exception:  # a value it cannot take (a date, an integer key, a huge integer)
            return False

    return check


def _same_keywords(schema: Any) -> bool:
    """Whether every keyword of ``schema`` (at any depth) is in :data:`SAME_KEYWORDS`."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            if key not in SAME_KEYWORDS:
                return False
            if key in _NAMED:
                if not isinstance(value, dict):
                    return False
                if key != "dependentRequired":
                    stack.extend(value.values())
            elif key in ("items", "additionalProperties", "not", "if", "then", "else", "propertyNames"):
                stack.append(value)
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                if not isinstance(value, list):
                    return False
                stack.extend(value)
    return True


def _local_refs(schema: Any) -> bool:
    """Only ``#/$defs/...`` references: nothing is fetched or resolved differently."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not (isinstance(ref, str) and ref.startswith("#/")):
                return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def schema_is_valid(schema: Any) -> bool:
    """True when ``schema`` is surely a valid draft 2020-12 schema, as jsonschema's
    ``check_schema`` (its meta-schema, with formats) would find it: jsonschema-rs' meta-schema
    check, and every ``pattern`` compiling as a Python regex (jsonschema's format check of
    the meta-schema; Rust's regex syntax differs). False: ask jsonschema."""
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a platform without a jsonschema-rs wheel
        return False
    try:
        if not jsonschema_rs.meta.is_valid(schema):
            return False
    except Exception:
        return False
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    try:
                        re.compile(value)
                    except (re.error, RecursionError, OverflowError):
                        return False
                elif key == "patternProperties" and isinstance(value, dict):
                    for name in value:
                        try:
                            re.compile(name)
                        except (re.error, RecursionError, OverflowError):
                            return False
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return True
