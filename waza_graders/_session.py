"""What the session graders (behavior, action_sequence, skill_invocation, tool_constraint,
tool_calls) read of a run, and the matching rules they share.

waza grades these from its *session digest*: ``tools_used`` (the name of every tool call,
in call order, repeats kept), ``tool_call_count``, the tool calls themselves and the
usage. Here the digest is the run evidence (``RunEvidence.tool_calls`` and friends), so
``waza grade`` on a saved results file sees exactly what the run saw.
Values are printed as Go prints them with the ``go_*`` helpers of ``waza_core``.
"""

from __future__ import annotations

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


def go_nil(items: list | None) -> list | None:
    """A Go slice that was never appended to is ``null`` in JSON, not ``[]``."""
    return list(items) if items else None


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
