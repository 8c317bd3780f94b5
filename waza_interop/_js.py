"""What JavaScript does with the values promptfoo reads, so the import renders text the
way promptfoo (Node.js) renders it: ``String(value)``, ``JSON.stringify(value, null, 2)``
and ``JSON.parse`` without Python's extensions (NaN, Infinity).

Only the values a YAML or JSON config can hold are handled (strings, numbers, booleans,
null, lists, mappings); anything else raises :class:`NotJs`, and the caller refuses.
"""

from __future__ import annotations

import json
import math

#: integers beyond this lose precision as JavaScript numbers: refused, not rounded
MAX_SAFE_INTEGER = 2**53 - 1


class NotJs(ValueError):
    """A value whose JavaScript rendering this module cannot reproduce exactly."""


def number_to_string(value: int | float) -> str:
    """``String(n)`` for a JavaScript number (ECMAScript Number::toString, radix 10)."""
    if isinstance(value, bool):
        raise NotJs("a boolean is not a number")
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise NotJs(f"the integer {value} is beyond JavaScript's exact range (2^53)")
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest(abs(value))
    k = len(digits)
    n = exponent + k  # the decimal point sits after n digits
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest(value: float) -> tuple[str, int]:
    """The shortest round-tripping digits of ``value`` and the power of ten of the last one
    (Python's repr and JavaScript both produce the shortest round-trip form)."""
    text = repr(value)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent -= len(frac)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped or "0", exponent


def to_string(value) -> str:
    """``String(value)``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_to_string(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None else to_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    raise NotJs(f"a {type(value).__name__} value")


def template_output(value) -> str:
    """What Nunjucks prints for ``{{ value }}`` (autoescape off): nothing for null or
    undefined, ``String(value)`` otherwise."""
    return "" if value is None else to_string(value)


def stringify(value, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``."""
    return _stringify(value, indent, 0)


def _stringify(value, indent: int, level: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return number_to_string(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    pad = "\n" + " " * (indent * (level + 1)) if indent else ""
    end = "\n" + " " * (indent * level) if indent else ""
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [_stringify(v, indent, level + 1) for v in value]
        return "[" + ",".join(pad + i for i in items) + end + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        sep = ": " if indent else ":"
        items = [json.dumps(str(k), ensure_ascii=False) + sep + _stringify(v, indent, level + 1)
                 for k, v in value.items()]
        return "{" + ",".join(pad + i for i in items) + end + "}"
    raise NotJs(f"a {type(value).__name__} value")


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str):
    """``JSON.parse(text)``: raises ValueError where JavaScript throws. Integers beyond
    2^53 raise :class:`NotJs` (JavaScript would round them)."""
    value = json.loads(text, parse_constant=_refuse_constant, parse_float=float)
    _check_ints(value)
    return value


def _check_ints(value) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        raise NotJs(f"the integer {value} is beyond JavaScript's exact range (2^53)")
    if isinstance(value, list):
        for v in value:
            _check_ints(v)
    elif isinstance(value, dict):
        for v in value.values():
            _check_ints(v)
