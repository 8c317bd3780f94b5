"""Byte-exact renderings of values the way waza (Go) renders them.

Fixtures are YAML values that waza turns into bytes with Go's ``encoding/json`` (a
mocked command's non-string ``stdout``, an MCP tool's ``return``) and into text with
``%q`` (the unmatched-call message). These helpers give the same bytes, so a grader
or an agent sees what it would see under waza (Go). Standard library only: the shim
and the MCP server import this module.
"""

from __future__ import annotations

import json
import math
from typing import Any

_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _plain(value: Any) -> Any:
    """Go decodes YAML ``1.0`` to float64 1 and prints it as ``1``: drop integral ``.0``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def go_json(value: Any) -> str:
    """``json.Marshal(value)``: compact, keys sorted, ``<``, ``>``, ``&`` escaped as Go does."""
    text = json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=str)
    if any(c in text for c in _HTML):
        text = "".join(_HTML.get(c, c) for c in text)
    return text


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote``: double quotes, C escapes, ``\\x``/``\\u`` for the unprintable."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def go_quote_list(items: list[str]) -> str:
    """``fmt.Sprintf("%q", []string{...})``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(s) for s in items) + "]"


def go_sprint(value: Any) -> str:
    """The text an ``match_regex`` pattern is matched against.

    waza (Go) uses ``fmt.Sprint``: strings as they are, ``true``/``false``, numbers in
    their shortest form (``1``, not ``1.0``). For objects and lists Go prints its own
    map syntax (``map[a:1]``) and ``1e+06`` for one million, which no fixture author
    expects; waza for Python prints integral numbers as integers and objects, lists and
    null as compact JSON instead (documented differences).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return go_json(value)
