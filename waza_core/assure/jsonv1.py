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
import math
from decimal import Decimal
from typing import Any


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


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
            "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, Number):
        out.append(str.__str__(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_go_float(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=str)):
            if i:
                out.append(",")
            out.append(_string(str(key)))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        _write(str(value), out)  # a YAML date or the like: as its text


def _go_float(f: float) -> str:
    """A float as Go's encoding/json writes a float64: the shortest digits, positional from 1e-6
    up to 1e21, else an exponent without a leading zero (``1e-7``, ``1e+21``)."""
    if not math.isfinite(f):
        raise JsonProblem(f"{f} is not a JSON number")
    shortest = repr(f)
    if f != 0 and not 1e-6 <= abs(f) < 1e21:
        mantissa, exp = shortest.split("e") if "e" in shortest else (shortest, "0")
        sign, digits = ("-", exp[1:]) if exp.startswith("-") else ("+", exp.lstrip("+"))
        return f"{mantissa.removesuffix('.0')}e{sign}{int(digits) if sign == '-' else digits.zfill(2)}"
    text = format(Decimal(shortest), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
