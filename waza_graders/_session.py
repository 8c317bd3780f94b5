"""What the session graders (behavior, action_sequence, skill_invocation, tool_constraint,
tool_calls) read of a run, and how waza (Go) prints it.

waza grades these from its *session digest*: ``tools_used`` (the name of every tool call,
in call order, repeats kept), ``tool_call_count``, the tool calls themselves and the
usage. Here the digest is the run evidence (``RunEvidence.tool_calls`` and friends), so
``waza grade`` on a saved results file sees exactly what the run saw.

The formatting helpers reproduce what a Go program prints, because feedback strings are
part of waza's results: ``%v`` of a string list is ``[a b c]``, ``%q`` quotes like Go,
a nil slice is JSON ``null``, a whole float prints without ``.0``.
"""

from __future__ import annotations

import json
import math
from typing import Any


def tools_used(evidence) -> list[str]:
    """waza's ``SessionDigest.ToolsUsed``: every call's name, in order, repeats kept."""
    return [c.get("name") if isinstance(c.get("name"), str) else "" for c in calls(evidence)]


def calls(evidence) -> list[dict]:
    return [c for c in (evidence.tool_calls or []) if isinstance(c, dict)]


def tokens_total(usage: Any) -> int | float | None:
    """input + output tokens, or None when the run has no usage."""
    if not isinstance(usage, dict):
        return None
    return _num(usage.get("input_tokens")) + _num(usage.get("output_tokens"))


def turns(usage: Any) -> int | float:
    return _num(usage.get("turns")) if isinstance(usage, dict) else 0


def _num(value: Any) -> int | float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def arg_text(call: dict, key: str) -> str:
    """One of waza's legacy string argument fields (``path``, ``command``, ``skill`` ...)."""
    args = call.get("arguments")
    value = args.get(key) if isinstance(args, dict) else None
    return value if isinstance(value, str) else ""


def call_args(call: dict, events: list | None) -> dict:
    """The arguments an argument matcher sees (waza's ``resolveToolCallArgs``): the tool
    event's full ``args`` for this call id when recorded as an object, else the call's
    ``arguments`` without empty strings (waza's legacy fields are "" when absent)."""
    call_id = call.get("id")
    if call_id:
        for ev in events or ():
            if isinstance(ev, dict) and ev.get("tool_call_id") == call_id:
                if isinstance(ev.get("args"), dict):
                    return ev["args"]
                break
    args = call.get("arguments")
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if v != ""}


# -- printing values the way Go does -----------------------------------------------------


def go_list(items) -> str:
    """``fmt.Sprintf("%v", []string{...})``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def go_nil(items: list | None) -> list | None:
    """A Go slice that was never appended to is ``null`` in JSON, not ``[]``."""
    return list(items) if items else None


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """``strconv.Quote`` / ``%q``: double quotes, Go escapes, printable Unicode kept."""
    out = ['"']
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_float(x: float) -> str:
    """``%v`` of a float64: shortest form, no ``.0`` on whole numbers, exponent past 1e21."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    text = repr(float(x))
    if "e" in text:
        mant, exp = text.split("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-")
        return f"{mant}e{sign}{digits.zfill(2)}"
    return text


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value: compact, keys sorted, HTML characters
    escaped, whole floats without ``.0``."""
    return _go_json(value)


def _go_json(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return go_float(float(v)) if isinstance(v, float) or abs(v) >= 2**53 else str(v)
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=False)
        return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_go_json(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{_go_json(str(k))}:{_go_json(v[k])}" for k in sorted(v, key=str)) + "}"
    return _go_json(str(v))


def go_value(v: Any) -> str:
    """``%v`` of a decoded JSON value (strings bare, maps as ``map[k:v]``)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return go_float(float(v))
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(go_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_value(v[k])}" for k in sorted(v, key=str)) + "]"
    return str(v)


def any_order_missing(expected: list[str], actual: list[str], noun: str) -> str:
    """The "missing or insufficient" list of waza's any-order feedback, in the order the
    names were first expected (waza walks a Go map, whose order changes run to run)."""
    need: dict[str, int] = {}
    for name in expected:
        need[name] = need.get(name, 0) + 1
    got: dict[str, int] = {}
    for name in actual:
        got[name] = got.get(name, 0) + 1
    missing = [f"{name} (need {n}, got {got.get(name, 0)})" for name, n in need.items() if got.get(name, 0) < n]
    return f"Any-order match failed: missing or insufficient {noun}: {', '.join(missing)}"


def precision_recall(expected: list[str], actual: list[str]) -> tuple[float, float]:
    """waza's multiset precision and recall: TP = sum of min(expected, actual) counts."""
    if not expected and not actual:
        return 1.0, 1.0
    need: dict[str, int] = {}
    for name in expected:
        need[name] = need.get(name, 0) + 1
    got: dict[str, int] = {}
    for name in actual:
        got[name] = got.get(name, 0) + 1
    tp = sum(min(n, got.get(name, 0)) for name, n in need.items())
    precision = tp / len(actual) if actual else 0.0
    recall = tp / len(expected) if expected else 0.0
    return precision, recall


def f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def exact_match(expected: list[str], actual: list[str]) -> bool:
    return list(expected) == list(actual)


def in_order_match(expected: list[str], actual: list[str]) -> bool:
    """``expected`` is a subsequence of ``actual`` (other steps may come between)."""
    i = 0
    for name in actual:
        if i < len(expected) and name == expected[i]:
            i += 1
    return i == len(expected)


def any_order_match(expected: list[str], actual: list[str]) -> bool:
    """Each expected name appears in ``actual`` at least as often as expected."""
    got: dict[str, int] = {}
    for name in actual:
        got[name] = got.get(name, 0) + 1
    for name in set(expected):
        if got.get(name, 0) < expected.count(name):
            return False
    return True
