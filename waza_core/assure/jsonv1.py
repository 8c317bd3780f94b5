"""The ``json-v1`` digest: SHA-256 of JSON normalized as waza (Go) normalizes it.

waza (Go) ``evidence.JSONDigest`` marshals a value, parses it keeping every number as its exact
token, and marshals it again: objects with sorted keys, no spaces, Go's string escaping (``<``,
``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX``; other non-ASCII text as UTF-8). The same bytes
give the same digest here, so an authored input sealed by waza (Go) verifies in waza for Python
and the other way round. Parsing is strict: a duplicate key is ambiguous and refused.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from waza_core.gofmt import go_json


class Number(str):
    """A JSON number kept as its exact token (no float rounding on digest-bearing input)."""


class JsonProblem(ValueError):
    """The bytes are not one unambiguous JSON value."""


def parse(data: bytes) -> Any:
    """One JSON value, numbers as :class:`Number` tokens; a duplicate key is an error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonProblem(f"not UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(text, parse_int=Number, parse_float=Number, parse_constant=_no_constant,
                          object_pairs_hook=_unique)
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _no_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonProblem(f"duplicate key {key!r}")
        out[key] = value
    return out


def canonical(value: Any) -> bytes:
    """The normalized bytes of ``value`` (parsed JSON, or plain Python data from YAML)."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts).encode("utf-8")


def digest(value: Any) -> str:
    """The lower-case hex SHA-256 of :func:`canonical`."""
    return hashlib.sha256(canonical(value)).hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(value: Any, out: list[str]) -> None:
    """Containers and exact number tokens here; every other value as waza's Go-compatible
    ``encoding/json`` writer (:func:`waza_core.gofmt.go_json`) writes it."""
    if isinstance(value, Number):
        out.append(str.__str__(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=str)):
            out.append("," if i else "")
            out.append(go_json(str(key)) + ":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _write(item, out)
        out.append("]")
    else:
        out.append(go_json(value))
