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


#: keywords that validate differently in jsonschema-rs (``pattern``: Rust's regexes) or that it
#: does not take alike (``uniqueItems``), checked here the way jsonschema checks them when they
#: sit on a plain property path of the schema (``properties`` from the root all the way down,
#: as ``config.cli.output_path`` and ``config.models`` of the eval schema): so the eval
#: document of a warm load is known valid without importing jsonschema (~30 ms of a warm
#: ``waza validate``, measured with ``python -X importtime``)
ON_PATHS = frozenset({"pattern", "uniqueItems"})


def checker(schema: dict) -> Callable[[Any], bool]:
    """``is_valid(doc)``: True only when ``doc`` is valid; False means "ask jsonschema".
    Built once per schema by the caller (compiling costs ~5 ms)."""
    on_paths: list[tuple[tuple[str, ...], str, Any]] = []
    schema = _lift(schema, (), on_paths)
    if not _same_keywords(schema) or not _local_refs(schema, defs_only=bool(on_paths)):
        return NO_CHECK
    try:  # imported on first use: `waza <command> --help` never needs it (measured start-up)
        # deferred: jsonschema_rs is optional; a missing one is handled here
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
            valid = is_valid(doc)
        except Exception:  # a value it cannot take (a date, an integer key, a huge integer)
            return False
        return valid and all(_holds(doc, path, keyword, value) for path, keyword, value in on_paths)

    return check


def _lift(node: Any, path: tuple[str, ...], out: list) -> Any:
    """``node`` without the :data:`ON_PATHS` keywords of its plain property paths (each
    appended to ``out`` as (path, keyword, value)); the rest as it is."""
    if not isinstance(node, dict):
        return node
    lifted = {}
    for key, value in node.items():
        if key in ON_PATHS:
            out.append((path, key, value))
        elif key == "properties" and isinstance(value, dict):
            lifted[key] = {name: _lift(sub, (*path, name), out) for name, sub in value.items()}
        else:
            lifted[key] = value
    return lifted


def _holds(doc: Any, path: tuple[str, ...], keyword: str, value: Any) -> bool:
    """Whether ``keyword: value`` at ``path`` holds for ``doc`` as jsonschema finds it: it
    applies only where every step of the path is present in an object (``properties``);
    ``pattern`` is Python's ``re.search`` on a string; ``uniqueItems`` is decided here only
    for a list of strings (anything else: False, "ask jsonschema")."""
    for name in path:
        if not isinstance(doc, dict) or name not in doc:
            return True
        doc = doc[name]
    if keyword == "pattern":
        return not isinstance(doc, str) or not isinstance(value, str) or re.search(value, doc) is not None
    if value is not True or not isinstance(doc, list):
        return value is False or not isinstance(doc, list)
    return all(type(item) is str for item in doc) and len(set(doc)) == len(doc)


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


def _local_refs(schema: Any, defs_only: bool = False) -> bool:
    """Only local references (``#/...``; with ``defs_only``, ``#/$defs/...``, so none points
    into a property path whose keywords were lifted): nothing is fetched or resolved differently."""
    prefix = "#/$defs/" if defs_only else "#/"
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not (isinstance(ref, str) and ref.startswith(prefix)):
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
        # deferred: jsonschema_rs is optional; a missing one is handled here
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
