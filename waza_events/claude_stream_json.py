"""``events: claude-stream-json``: Claude Code's ``claude -p --output-format stream-json --verbose``.

A ``tool_use`` block of an ``assistant`` event starts a call; the ``tool_result`` block
with the same ``tool_use_id`` in a later ``user`` event ends it (``is_error`` marks it
failed). Usage, cost and turns come from the final ``result`` event; a ``result`` with
``is_error`` is an error event.
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

_KNOWN = frozenset({"system", "assistant", "user", "result", "stream_event", "rate_limit_event"})


class ClaudeStreamJson(EventFormat):
    name = "claude-stream-json"
    description = "Claude Code: claude -p --output-format stream-json --verbose"
    agent = "claude -p PROMPT --output-format stream-json --verbose"
    skill_tools = {"Skill": ("skill", "skill_name", "command")}

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("session_id"))
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        if kind == "assistant":
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    turn.message(block.get("text"))
                elif block.get("type") == "tool_use":
                    turn.start_call(block.get("id"), block.get("name"), block.get("input"))
        elif kind == "user":
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    turn.finish_call(block.get("tool_use_id"), not block.get("is_error"), block.get("content"))
        elif kind == "result":
            self._result(event, turn)
        elif kind not in _KNOWN:
            turn.unknown(kind)

    def _result(self, event, turn):
        turn.usage(event.get("usage"), cost_usd=event.get("total_cost_usd"))
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


@hookimpl
def waza_register_event_formats(register):
    register(ClaudeStreamJson)
