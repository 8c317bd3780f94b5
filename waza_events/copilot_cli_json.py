"""``events: copilot-cli-json``: GitHub Copilot CLI's ``copilot -p PROMPT --output-format json``.

Copilot prints its session events as JSON Lines: ``tool.execution_start``
(``data.toolCallId``, ``data.toolName``, ``data.arguments``) starts a call and
``tool.execution_complete`` with the same ``toolCallId`` ends it, failed when
``data.success`` is false. ``assistant.message`` events are messages; ``session.error``
and ``error`` events are error events; a ``skill.invoked`` event or the ``skill`` tool
loads a skill; usage comes from ``assistant.usage`` events and the final ``result``
(which carries ``premiumRequests`` and the session id).
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

_QUIET_PREFIXES = ("assistant.", "session.", "user.", "tool.", "hook.", "subagent.", "pending_messages.")


class CopilotCliJson(EventFormat):
    name = "copilot-cli-json"
    description = "GitHub Copilot CLI: copilot -p PROMPT --output-format json"
    agent = "copilot -p PROMPT --output-format json --allow-all-tools"
    skill_tools = {"skill": ("skill", "name", "skill_name")}

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
        elif kind == "skill.invoked":
            name = data.get("name") or data.get("skill")
            if isinstance(name, str) and name:
                turn.skill(name, "skill_event", "skill")
        elif kind == "assistant.usage":
            turn.usage(data, cost_usd=data.get("cost"))
        elif kind in ("session.error", "error"):
            turn.error(data.get("message") or event.get("message") or data or "error")
        elif kind == "result":
            turn.usage(event.get("usage"))
            code = event.get("exitCode")
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                turn.error(f"the session ended with exit code {code}")
        elif not (isinstance(kind, str) and kind.startswith(_QUIET_PREFIXES)):
            turn.unknown(kind)


@hookimpl
def waza_register_event_formats(register):
    register(CopilotCliJson)
