"""``events: claude-stream-json``: Claude Code's ``claude -p --output-format stream-json --verbose``.

A ``tool_use`` block of an ``assistant`` event starts a call; the ``tool_result`` block
with the same ``tool_use_id`` in a later ``user`` event ends it (``is_error`` marks it
failed). A ``server_tool_use`` block (``web_search``, ``web_fetch``, run by Anthropic's API) is
a call too, ended by the ``..._tool_result`` block of the same message (failed when its content
is an ``..._error``). Tokens and turns come from each ``result`` event (summed: a process that resumes
itself prints one per segment); a ``result`` with ``is_error`` is an error event.

Cost: ``total_cost_usd`` is a running total, not a per-event figure. Within one process it
grows with each ``result`` (the last one is the process's spend). Across follow-up turns
(``--resume``), Claude Code before 2.1.277 starts a resumed process from zero, and from 2.1.277
restores the session's saved total first (measured in Enderfga/claw-orchestrator#112; before:
iOfficeAI/AionCore#767 on 2.1.221). So a turn's cost is the process's last total, less the
session's total before it when the ``system`` ``init`` event says ``claude_code_version`` is
2.1.277 or later (a total that went down started again).
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

_KNOWN = frozenset({"system", "assistant", "user", "result", "stream_event", "rate_limit_event"})


class ClaudeStreamJson(EventFormat, name="claude-stream-json",
                       agent="claude -p PROMPT --output-format stream-json --verbose",
                       description="Claude Code: claude -p --output-format stream-json --verbose",
                       skill_tools={"Skill": ("skill", "skill_name", "command")}):

    def start(self):
        self._version: tuple[int, ...] = ()
        self._process_cost = None  # the last total_cost_usd of this turn's process
        self._session_cost: dict = {}  # session id -> the running total seen at the end of a turn

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("session_id"))
        if kind == "system" and isinstance(event.get("claude_code_version"), str):
            self._version = _version(event["claude_code_version"])
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        if kind == "assistant":
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    turn.message(block.get("text"))
                elif block.get("type") in ("tool_use", "server_tool_use"):
                    turn.start_call(block.get("id"), block.get("name"), block.get("input"))
                elif str(block.get("type")).endswith("_tool_result") and block.get("tool_use_id"):
                    # a server tool (web_search, web_fetch) answers in the same message
                    content = block.get("content")
                    failed = isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
                    turn.finish_call(block["tool_use_id"], not failed, content)
        elif kind == "user":
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    turn.finish_call(block.get("tool_use_id"), not block.get("is_error"), block.get("content"))
        elif kind == "result":
            self._result(event, turn)
        elif kind not in _KNOWN:
            turn.unknown(kind)

    def _result(self, event, turn):
        turn.usage(event.get("usage"))
        cost = event.get("total_cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
            self._process_cost = cost
        if isinstance(event.get("num_turns"), int) and not isinstance(event.get("num_turns"), bool):
            self.turns += event["num_turns"]
        if event.get("is_error"):
            turn.error(event.get("result") or event.get("subtype") or "the run ended with an error")
        per_model = event.get("modelUsage") if isinstance(event.get("modelUsage"), dict) else {}
        for model, raw in per_model.items():
            if not isinstance(raw, dict):
                continue
            entry = self.model_metrics.setdefault(str(model), dict.fromkeys(
                ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "request_cost"), 0))
            for key, names in (("input_tokens", ("inputTokens", "input_tokens")),
                               ("output_tokens", ("outputTokens", "output_tokens")),
                               ("cache_read_tokens", ("cacheReadInputTokens",)),
                               ("cache_write_tokens", ("cacheCreationInputTokens",)),
                               ("request_cost", ("costUSD",))):
                value = next((raw[n] for n in names if isinstance(raw.get(n), (int, float))
                              and not isinstance(raw.get(n), bool)), 0)
                entry[key] += value


    def end_turn(self, turn):
        """The turn's cost from the process's running total (see the module docstring)."""
        cost, self._process_cost = self._process_cost, None
        if cost is None:
            return
        before = self._session_cost.get(self.session_id) if self.session_id else None
        restored = self._version >= RESTORES_TOTALS
        own = cost - before if restored and before is not None and cost >= before else cost
        self._session_cost[self.session_id] = cost if restored else (before or 0) + cost
        turn.usage({}, cost_usd=round(own, 10))


#: the first Claude Code version whose resumed process starts from the session's saved totals
RESTORES_TOTALS = (2, 1, 277)


def _version(text):
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


@hookimpl
def waza_register_event_formats(register):
    register(ClaudeStreamJson)
