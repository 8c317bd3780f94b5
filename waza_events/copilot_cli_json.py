"""``events: copilot-cli-json``: GitHub Copilot CLI's ``copilot -p PROMPT --output-format json``.

Copilot prints its session events as JSON Lines: ``tool.execution_start``
(``data.toolCallId``, ``data.toolName``, ``data.arguments``) starts a call and
``tool.execution_complete`` with the same ``toolCallId`` ends it, failed when
``data.success`` is false. ``assistant.message`` events are messages; ``session.error``
and ``error`` events (and ``model.call_failure``) are error events; a ``skill.invoked`` (or
``skill.invoked_ref``) event or the ``skill`` tool loads a skill; the session id comes from any
event that carries it.

Usage: the events are the Copilot runtime's session events (the same the Copilot SDK reads; its
generated ``session_events.py`` lists them). Each ``assistant.usage`` event gives one call's
tokens per ``model``; its ``cost`` is the call's **premium requests** (a multiplier, as waza
(Go) reads it), never money; ``copilotUsage.totalNanoAiu`` / 10^9 is its AI credits, summed only
when every call reports them (and none is marked ``partial`` or ``unavailable``). A
``session.shutdown`` with ``modelMetrics`` replaces the sums with the session's totals
(``totalPremiumRequests``, ``totalNanoAiu``), as the SDK executor does. The final ``result``
adds ``premiumRequests`` when no event gave premium requests.
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

#: event families of the Copilot runtime that carry nothing a grader reads
_QUIET_PREFIXES = ("assistant.", "session.", "user.", "tool.", "hook.", "subagent.", "pending_messages.",
                   "skill.", "permission.", "model.", "mcp.", "mcp_app.", "sandbox.", "system.", "instruction.",
                   "user_input.", "elicitation.", "sampling.", "external_tool.", "command.", "commands.",
                   "capabilities.", "exit_plan_mode.", "human_response.", "workflow.", "auto_mode_switch.",
                   "session_limits_exhausted.", "tool_search.", "ui.", "agent.", "prompt_cache_break", "abort")
_TOKENS = {"input_tokens": "inputTokens", "output_tokens": "outputTokens", "cache_read_tokens": "cacheReadTokens",
           "cache_write_tokens": "cacheWriteTokens"}


class CopilotCliJson(EventFormat, name="copilot-cli-json",
                     agent="copilot -p PROMPT --output-format json --allow-all-tools",
                     description="GitHub Copilot CLI: copilot -p PROMPT --output-format json",
                     skill_tools={"skill": ("skill", "name", "skill_name")}):

    def read_event(self, event, turn):
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        turn.session(event.get("sessionId") or data.get("sessionId"))
        if kind == "tool.execution_start":
            turn.start_call(data.get("toolCallId"), data.get("toolName"), data.get("arguments"))
        elif kind == "tool.execution_complete":
            result = data.get("result") if isinstance(data.get("result"), dict) else {}
            error = data.get("error")
            turn.finish_call(data.get("toolCallId"), data.get("success") is True,
                             result.get("detailedContent") or result.get("content"),
                             error.get("message") if isinstance(error, dict) else error,
                             name=data.get("toolName"), args=data.get("arguments"))
        elif kind == "assistant.message":
            turn.message(data.get("content") or data.get("text"))  # "text" in some 1.0.x releases
        elif kind in ("skill.invoked", "skill.invoked_ref"):
            name = data.get("name") or data.get("skill")
            if isinstance(name, str) and name:
                turn.skill(name, "skill_event", "skill")
        elif kind == "assistant.usage":
            self._call_usage(data)
        elif kind == "session.shutdown":
            self._shutdown = data
        elif kind in ("session.error", "error", "model.call_failure"):
            turn.error(data.get("message") or data.get("errorMessage") or event.get("message") or data or "error")
        elif kind == "result":
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            premium = usage.get("premiumRequests", usage.get("premium_requests"))
            if _number(premium) and self._premium is None:
                self._premium = premium
            code = event.get("exitCode")
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                turn.error(f"the session ended with exit code {code}")
        elif not (isinstance(kind, str) and kind.startswith(_QUIET_PREFIXES)):
            turn.unknown(kind)


    def start(self):
        self._calls: list[dict] = []
        self._premium = None
        self._shutdown = None

    def _call_usage(self, data):
        self._calls.append(data)
        if _number(data.get("cost")):
            self._premium = (self._premium or 0) + data["cost"]

    def end_turn(self, turn):
        """The turn's usage: the shutdown totals when Copilot sent them, else the per-call sums."""
        shutdown, calls, self._shutdown, self._calls = self._shutdown, self._calls, None, []
        metrics = shutdown.get("modelMetrics") if isinstance(shutdown, dict) else None
        models: dict = {}
        usage = _from_shutdown(shutdown, metrics, models) if isinstance(metrics, dict) and metrics \
            else _from_calls(calls, models)
        _merge_models(self.model_metrics, models)
        if usage is None and self._premium is None:
            return
        usage = usage or {}
        if "premium_requests" not in usage and self._premium is not None:
            usage["premium_requests"] = self._premium
        self._premium = None
        turn.usage(usage)


def _merge_models(total, turn):
    """Add one turn's per-model usage to the run's; a model's credits stay known only while
    every turn that used it reported them."""
    for model, entry in turn.items():
        if model not in total:
            total[model] = dict(entry)
            continue
        known = total[model]
        for key, value in entry.items():
            if key != "ai_credits":
                known[key] = known.get(key, 0) + value
        if "ai_credits" not in entry and "ai_credits" not in known:
            continue
        both = entry.get("ai_credits") is not None and known.get("ai_credits") is not None
        known["ai_credits"] = round(known["ai_credits"] + entry["ai_credits"], 9) if both else None


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _credits(obj):
    """AI credits of a usage object (``totalNanoAiu`` / 1e9), unless marked incomplete."""
    if not isinstance(obj, dict) or obj.get("aiCreditsStatus") in ("partial", "unavailable"):
        return None
    nano = obj.get("totalNanoAiu")
    return round(nano / 1e9, 9) if _number(nano) and nano >= 0 else None


def _from_calls(calls, per_model):
    if not calls:
        return None
    usage = dict.fromkeys(_TOKENS, 0)
    credits = []
    for data in calls:
        entry = per_model.setdefault(str(data.get("model") or "unknown"), {**dict.fromkeys(_TOKENS, 0),
                                                                         "request_count": 0, "request_cost": 0})
        for key, wire in _TOKENS.items():
            value = data.get(wire) if _number(data.get(wire)) else 0
            usage[key] += value
            entry[key] += value
        entry["request_count"] += 1
        entry["request_cost"] += data.get("cost") if _number(data.get("cost")) else 0
        credits.append(_credits(data.get("copilotUsage")) if data.get("aiCreditsStatus") not in
                       ("partial", "unavailable") else None)
    if credits and all(c is not None for c in credits):
        usage["ai_credits"] = round(sum(credits), 9)
    return usage


def _from_shutdown(shutdown, metrics, per_model):
    usage = dict.fromkeys(_TOKENS, 0)
    for model, metric in metrics.items():
        raw = metric.get("usage") if isinstance(metric, dict) and isinstance(metric.get("usage"), dict) else {}
        requests = metric.get("requests") if isinstance(metric, dict) and isinstance(metric.get("requests"), dict) \
            else {}
        entry = {key: raw.get(wire) if _number(raw.get(wire)) else 0 for key, wire in _TOKENS.items()}
        entry.update(request_count=requests.get("count") or 0, request_cost=requests.get("cost") or 0)
        credits = _credits(metric)
        if credits is not None:
            entry["ai_credits"] = credits
        per_model[str(model)] = entry
        for key in _TOKENS:
            usage[key] += entry[key]
    premium = shutdown.get("totalPremiumRequests", shutdown.get("totalPremiumRequestCost"))
    if _number(premium):
        usage["premium_requests"] = premium
    credits = _credits(shutdown)
    if credits is not None:
        usage["ai_credits"] = credits
    return usage


@hookimpl
def waza_register_event_formats(register):
    register(CopilotCliJson)
