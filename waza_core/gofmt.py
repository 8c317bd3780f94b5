"""Text as waza (Go) prints it, for results that must read the same byte for byte.

Feedback strings, argument renderings and mock replies are part of waza's results, so
where waza prints a value with Go's ``fmt`` or ``encoding/json`` the graders and mocks
print it with these helpers instead of Python's own formatting:

- :func:`go_quote` / :func:`go_quote_list`: ``%q`` (``strconv.Quote``) of a string / a
  ``[]string``; :func:`go_list`: ``%v`` of a ``[]string`` (``[a b c]``).
- :func:`go_float`: ``%v`` of a float64 (``1e+06``, ``0.5``, ``1e-05``).
- :func:`go_json`: ``json.Marshal`` of a decoded JSON value (compact, keys sorted,
  ``<``/``>``/``&`` escaped, floats as ``encoding/json`` writes them: ``1e-7``, ``1e+21``,
  ``0.00001``).
- :func:`go_value`: ``%v`` of a decoded JSON value (``map[k:v]``, ``<nil>``).
- :func:`go_lower` / :func:`go_upper` / :func:`go_trim_space`: Go's per-character case
  mapping and white space, which differ from Python's on a few characters.

Standard library only: the command-mock shim and the MCP mock server import it.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["go_float", "go_json", "go_json_float", "go_list", "go_lower", "go_quote", "go_quote_list", "go_trim_space",
           "go_upper", "go_value"]

# -- strings -----------------------------------------------------------------------------

_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
                  '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """``strconv.Quote`` / ``%q``: double quotes, Go's escapes, printable Unicode kept
    (Go's ``IsPrint`` and Python's ``isprintable`` agree: letters, marks, numbers,
    punctuation, symbols and the ASCII space)."""
    out = ['"']
    for ch in text:
        if ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # not valid UTF-8: Go sees U+FFFD
            out.append("\ufffd")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_quote_list(items) -> str:
    """``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(s) for s in items) + "]"


def go_list(items) -> str:
    """``%v`` of a ``[]string``: ``[a b c]``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def go_lower(text: str) -> str:
    """``strings.ToLower``: one character in, one out (Python's full mapping turns "İ"
    into two characters and a word-final "Σ" into "ς"; Go gives "i" and "σ")."""
    if text.isascii():
        return text.lower()
    return text.replace("\u0130", "i").replace("\u03a3", "\u03c3").lower()


def go_upper(text: str) -> str:
    """``strings.ToUpper``: one character in, one out ("ß" stays "ß", not "SS")."""
    if text.isascii():
        return text.upper()
    out = []
    for ch in text:
        up = ch.upper()
        out.append(up if len(up) == 1 else ch)
    return "".join(out)


#: the characters Go's unicode.IsSpace accepts (Python's str.isspace also takes \x1c-\x1f)
_GO_SPACE = ("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
             "\u200a\u2028\u2029\u202f\u205f\u3000")


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(_GO_SPACE)


# -- numbers ------------------------------------------------------------------------------


def _digits(x: float) -> tuple[str, str, int]:
    """(sign, shortest round-trip digits without trailing zeros, decimal exponent of the
    first digit) of a finite, non-zero float: what Go's ``strconv`` formats from."""
    from decimal import Decimal  # only when a float is printed: the shim imports this module

    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # digits before the decimal point
    stripped = text.lstrip("0")
    point -= len(text) - len(stripped)
    stripped = stripped.rstrip("0") or "0"
    return ("-" if sign else ""), stripped, point - 1


def _fmt_e(sign: str, digits: str, exp: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _fmt_f(sign: str, digits: str, exp: int) -> str:
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    whole, frac = digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
    return f"{sign}{whole}" + (f".{frac}" if frac else "")


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    return None


def go_float(x: float) -> str:
    """``%v`` of a float64 (``strconv.FormatFloat(x, 'g', -1, 64)``): the shortest digits,
    in exponent form when the exponent is below -4 or 6 and above (``1e+06``, ``1e-05``,
    ``123456``, ``0.0001``)."""
    special = _special(float(x))
    if special is not None:
        return special
    sign, digits, exp = _digits(float(x))
    return _fmt_e(sign, digits, exp) if exp < -4 or exp >= 6 else _fmt_f(sign, digits, exp)


def go_json_float(x: float) -> str:
    """A float64 as ``encoding/json`` writes it: positional from 1e-6 up to 1e21, else
    exponent form with no leading zero in a negative exponent (``1e-7``, ``1e+21``)."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"json: unsupported value: {go_float(x)}")
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digits, exp = _digits(x)
    if 1e-6 <= abs(x) < 1e21:
        return _fmt_f(sign, digits, exp)
    text = _fmt_e(sign, digits, exp)
    if text[-4:-1] == "e-0":  # Go trims e-09 to e-9
        text = text[:-2] + text[-1]
    return text


# -- decoded JSON values ------------------------------------------------------------------

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json_string(text: str) -> str:
    out = ['"']
    for ch in text:
        escaped = _JSON_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # not valid UTF-8: Go writes U+FFFD
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON (or YAML) value: compact, object keys sorted,
    HTML characters and U+2028/U+2029 escaped, floats as :func:`go_json_float` (an
    integral float is a whole number: YAML ``1.0`` reaches Go as float64 1, written ``1``).
    Other objects are written as their ``str``. Raises ``ValueError`` for NaN/Infinity, as
    ``json.Marshal`` fails on them."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=str)
        return "{" + ",".join(f"{_json_string(str(k))}:{go_json(value[k])}" for k in keys) + "}"
    return _json_string(str(value))


def go_value(value: Any) -> str:
    """``%v`` of a decoded JSON value: strings bare, numbers as float64 (:func:`go_float`),
    lists ``[a b]``, objects ``map[k:v]`` with sorted keys, null ``<nil>``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return go_float(float(value))
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value, key=str)) + "]"
    return str(value)
