"""Spend: reported, never capped, and never a made-up zero.

Each evaluation and proposal gets a spend object with a status: ``measured`` (usage
came from the engine or adapter), ``unavailable`` (nothing was reported; counters are
omitted, not zero) or ``partial`` (some parts reported, some did not; what was
observed is still given). ``premium_requests`` counts GitHub Copilot premium requests
only; a custom model provider is named in ``provider`` with its own
``provider_requests``, and the two are never added together.
"""

from __future__ import annotations

from typing import Any, Iterable

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
UNAVAILABLE = {"status": "unavailable"}


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def normalize_part(usage: dict[str, Any] | None) -> dict[str, Any]:
    """One session's usage (an engine run or an adapter call) as a spend object.

    Engine usage comes as free-form counters; a ``provider`` other than
    ``copilot``/``github-copilot`` marks a custom provider, whose request count may be
    given as ``provider_requests`` or ``requests``.
    """
    if not usage:
        return dict(UNAVAILABLE)
    status = usage.get("status")
    if status == "unavailable":
        return dict(UNAVAILABLE)
    out: dict[str, Any] = {}
    provider = usage.get("provider")
    if isinstance(provider, str) and provider and provider.lower() not in ("copilot", "github-copilot"):
        if provider == "mixed":
            status = "partial"
        else:
            out["provider"] = provider
            reqs = usage.get("provider_requests", usage.get("requests"))
            if _num(reqs):
                out["provider_requests"] = reqs
            else:
                del out["provider"]
                status = "partial"
    elif _num(usage.get("premium_requests")):
        out["premium_requests"] = usage["premium_requests"]
    for k in TOKEN_KEYS:
        if _num(usage.get(k)) and isinstance(usage[k], int):
            out[k] = usage[k]
    if not out:
        return {"status": "partial"} if status == "partial" else dict(UNAVAILABLE)
    return {"status": status if status in ("measured", "partial") else "measured", **out}


def combine(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Add spend objects. Any unavailable or partial part makes the sum partial (or
    unavailable when nothing was measured). Provider requests are added only when
    every part names the same provider; Copilot and a custom provider together give
    no request count at all, and a partial total."""
    parts = list(parts)
    measured = [p for p in parts if p.get("status") != "unavailable" and len(p) > 1]
    if not measured:
        return dict(UNAVAILABLE)
    requests, mixed = _request_total(parts, measured)
    out = {**requests, **_token_totals(measured)}
    if not out:
        return {"status": "partial"}
    partial = mixed or any(p.get("status") != "measured" for p in parts)
    return {"status": "partial" if partial else "measured", **out}


def _request_total(parts: list[dict[str, Any]], measured: list[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """The summed request count, and whether it had to be dropped because the parts mix
    Copilot with a custom provider, several providers, or a part that names none."""
    copilot = any("premium_requests" in p for p in measured)
    custom = {p["provider"] for p in measured if "provider" in p}
    if custom and (copilot or len(custom) > 1 or None in {p.get("provider") for p in parts}):
        return {}, True
    if custom:
        return {"provider": custom.pop(), "provider_requests": sum(p["provider_requests"] for p in measured)}, False
    if copilot:
        return {"premium_requests": sum(p.get("premium_requests", 0) for p in measured)}, False
    return {}, False


def _token_totals(measured: list[dict[str, Any]]) -> dict[str, int]:
    """Each token counter summed over the parts that report it."""
    out = {}
    for k in TOKEN_KEYS:
        vals = [p[k] for p in measured if k in p]
        if vals:
            out[k] = sum(vals)
    return out


def evaluation_spend(results: dict[str, Any] | None) -> dict[str, Any]:
    """Spend of one evaluation from its results file: one part per run."""
    if not results:
        return dict(UNAVAILABLE)
    parts = [normalize_part(r.get("usage")) for t in results.get("tasks") or [] for r in t.get("runs") or []]
    return combine(parts)


def proposal_spend(doc_usage: dict[str, Any] | None, measured_usage: dict[str, Any] | None,
                   adapter_reported: bool) -> dict[str, Any]:
    """Usage measured by the adapter plugin itself (e.g. from an SDK) wins; the
    reply's own ``usage`` counts only when ``usage.adapter-reported`` was negotiated."""
    if measured_usage:
        return normalize_part(measured_usage)
    if adapter_reported and doc_usage:
        return normalize_part(doc_usage)
    return dict(UNAVAILABLE)
