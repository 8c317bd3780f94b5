"""``events: gemini-stream-json``: Gemini CLI's ``gemini -p PROMPT --output-format stream-json``.

A ``tool_use`` event (``tool_name``, ``tool_id``, ``parameters``) starts a call; the
``tool_result`` with the same ``tool_id`` ends it, failed unless ``status`` is
``success``. Assistant ``message`` events stream as deltas and are joined into one
message up to the next tool call. ``error`` events (and a ``result`` whose ``status`` is
not ``success``) are error events, except an ``error`` of ``severity: warning`` (Gemini CLI's
``ErrorEvent``), which goes to the transcript only; usage comes from ``result.stats``
(``input_tokens`` includes ``cached``; per model from ``stats.models`` when present); the
session id from ``init``. ``activate_skill`` loads a skill. Event types are Gemini CLI's
``JsonStreamEventType`` (``packages/core/src/output/types.ts``).
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl


class GeminiStreamJson(EventFormat, name="gemini-stream-json", agent="gemini -p PROMPT --output-format stream-json",
                       description="Gemini CLI: gemini -p PROMPT --output-format stream-json",
                       skill_tools={"activate_skill": ("name", "skill", "skill_name")}):

    def start(self):
        self._buffer: list[str] = []

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("session_id"))
        if kind == "init":
            return
        if kind == "message":
            if event.get("role") == "assistant" and isinstance(event.get("content"), str):
                self._buffer.append(event["content"])
                if not event.get("delta"):
                    self._flush(turn)
            return
        self._flush(turn)
        if kind == "tool_use":
            turn.start_call(event.get("tool_id"), event.get("tool_name"), event.get("parameters"))
        elif kind == "tool_result":
            ok = event.get("status") == "success"
            turn.finish_call(event.get("tool_id"), ok, event.get("output"), event.get("error"))
        elif kind == "error":
            if event.get("severity") == "warning":
                turn.evidence.transcript.append({"type": "agent.warning", "message": str(event.get("message"))})
            else:
                turn.error(event.get("message") or event)
        elif kind == "result":
            stats = event.get("stats") if isinstance(event.get("stats"), dict) else {}
            turn.usage(stats)
            self._model_metrics(stats.get("models"))
            if event.get("status") not in (None, "success"):
                turn.error(event.get("error") or f"result status {event.get('status')}")
        else:
            turn.unknown(kind)

    def _model_metrics(self, models):
        """``stats.models`` (newer Gemini CLI): tokens per model, so each model can be priced."""
        if not isinstance(models, dict):
            return
        for model, raw in models.items():
            if not isinstance(raw, dict):
                continue
            entry = self.model_metrics.setdefault(str(model), dict.fromkeys(
                ("input_tokens", "output_tokens", "cache_read_tokens"), 0))
            for key, name in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                              ("cache_read_tokens", "cached")):
                value = raw.get(name)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    entry[key] += value

    def end_turn(self, turn):
        self._flush(turn)

    def _flush(self, turn):
        if self._buffer:
            turn.message("".join(self._buffer))
            self._buffer.clear()


@hookimpl
def waza_register_event_formats(register):
    register(GeminiStreamJson)
