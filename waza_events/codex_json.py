"""``events: codex-json``: OpenAI Codex's ``codex exec --json`` (thread/turn/item events).

Each item of type ``command_execution``, ``file_change``, ``mcp_tool_call``,
``web_search`` or ``collab_tool_call`` is a tool call, matched by ``item.id`` from
``item.started`` to ``item.completed``. The name is the item type, except for MCP and
collaboration calls, whose name is the item's ``tool``. A call failed when its
``status`` is ``failed`` or ``declined``, a command's ``exit_code`` is not 0, or an MCP
call carries an ``error``. ``agent_message`` items are the answer; ``error`` items,
``turn.failed`` and top-level ``error`` events are error events; the session id is
``thread.started``'s ``thread_id``.

Usage comes from ``turn.completed``, whose ``usage`` is the thread's running total (Codex
``usage_from_last_total`` writes ``ThreadTokenUsage.total``), not the turn's: a resumed thread
(``codex exec resume``, a follow-up turn) reports everything since the thread began. So each
turn's usage is the difference from the last total seen for that thread (a total that went
down, a new thread, starts again from it). Item and event types are those of Codex's
``exec_events.rs`` (``ThreadEvent``, ``ThreadItemDetails``).
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

_CALL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call"})
_QUIET_ITEMS = frozenset({"reasoning", "todo_list", "plan"})
_QUIET_EVENTS = frozenset({"turn.started", "session.created", "item.plan.delta"})
_TOTALS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
_LEGACY_QUIET = frozenset({"task_started", "task_complete", "agent_reasoning", "agent_reasoning_delta",
                           "agent_message_delta", "exec_command_output_delta", "background_event",
                           "agent_reasoning_section_break", "turn_diff", "plan_update", "user_message"})


class CodexJson(EventFormat, name="codex-json", agent="codex exec --json PROMPT",
                description="OpenAI Codex: codex exec --json"):

    def start(self):
        #: thread id -> the running token totals its last ``turn.completed`` reported
        self._totals: dict = {}

    def read_event(self, event, turn):
        if isinstance(event.get("msg"), dict) and "type" not in event:
            self._legacy(event["msg"], turn)  # codex exec --json before 0.44: {"id", "msg": {...}}
            return
        kind = event.get("type")
        if kind in ("thread.started", "session.created"):
            turn.session(event.get("thread_id") or event.get("session_id"))
        elif kind in ("item.started", "item.updated", "item.completed"):
            self._item(event.get("item") if isinstance(event.get("item"), dict) else {}, kind, turn)
        elif kind == "turn.completed":
            self.turns += 1
            turn.usage(self._turn_usage(event.get("usage")))
        elif kind == "request_user_input":
            turn.evidence.transcript.append({"type": "user_input.requested", "call_id": event.get("call_id"),
                                             "questions": event.get("questions")})
        elif kind == "turn.failed":
            self.turns += 1
            turn.error(event.get("error") or "turn failed")
        elif kind == "error":
            turn.error(event.get("message") or event)
        elif kind not in _QUIET_EVENTS:
            turn.unknown(kind)

    def _turn_usage(self, usage):
        """This turn's share of the thread's running total (see the module docstring)."""
        if not isinstance(usage, dict):
            return usage
        totals = self._totals
        now = {k: usage[k] for k in _TOTALS if isinstance(usage.get(k), (int, float))
               and not isinstance(usage.get(k), bool)}
        if self.session_id is None:  # no thread id: nothing says two turns share a thread
            return usage
        before = totals.get(self.session_id)
        totals[self.session_id] = now
        if before is None or any(now.get(k, 0) < before.get(k, 0) for k in now):
            return usage
        return {**usage, **{k: v - before.get(k, 0) for k, v in now.items()}}

    def _item(self, item, kind, turn):
        item_type = item.get("type") or item.get("item_type")
        if item_type in _CALL_ITEMS:
            name = item.get("tool") if item_type in ("mcp_tool_call", "collab_tool_call") and item.get("tool") \
                else item_type
            args = self._args(item, item_type)
            if kind == "item.completed":
                turn.finish_call(item.get("id"), self._ok(item, item_type), self._result(item), item.get("error"),
                                 name=name, args=args)
            else:
                turn.start_call(item.get("id"), name, args)
        elif item_type in ("agent_message", "assistant_message"):
            if kind == "item.completed":
                turn.message(item.get("text"))
        elif item_type == "error":
            if kind == "item.completed":
                turn.error(item.get("message") or "error")
        elif item_type not in _QUIET_ITEMS:
            turn.unknown(f"item:{item_type}")

    def _legacy(self, msg, turn):
        """The older ``{"id", "msg"}`` events, mapped to the same names as the item events."""
        kind = msg.get("type")
        call_id = msg.get("call_id")
        if kind == "exec_command_begin":
            command = msg.get("command")
            turn.start_call(call_id, "command_execution",
                            {"command": " ".join(command) if isinstance(command, list) else command})
        elif kind == "exec_command_end":
            code = msg.get("exit_code")
            output = msg.get("aggregated_output") or msg.get("formatted_output") or msg.get("stdout")
            turn.finish_call(call_id, code == 0, output, msg.get("stderr"))
        elif kind == "mcp_tool_call_begin":
            inv = msg.get("invocation") if isinstance(msg.get("invocation"), dict) else {}
            args = inv.get("arguments") if isinstance(inv.get("arguments"), dict) else {}
            turn.start_call(call_id, inv.get("tool") or "mcp_tool_call", {**args, "server": inv.get("server")})
        elif kind == "mcp_tool_call_end":
            result = msg.get("result") if isinstance(msg.get("result"), dict) else {}
            ok = "Err" not in result and not (isinstance(result.get("Ok"), dict) and result["Ok"].get("isError"))
            turn.finish_call(call_id, ok, result.get("Ok") or result.get("Err"), result.get("Err"))
        elif kind == "patch_apply_begin":
            turn.start_call(call_id, "file_change", {"changes": msg.get("changes")})
        elif kind == "patch_apply_end":
            turn.finish_call(call_id, msg.get("success") is True, msg.get("stdout"), msg.get("stderr"))
        elif kind in ("web_search_begin", "web_search_end"):
            turn.start_call(call_id, "web_search", {"query": msg.get("query")})
            if kind == "web_search_end":
                turn.finish_call(call_id, True, "")
        elif kind == "agent_message":
            turn.message(msg.get("message"))
        elif kind == "token_count":
            info = msg.get("info") if isinstance(msg.get("info"), dict) else None
            if info is None:
                turn.usage(msg)
            elif isinstance(info.get("last_token_usage"), dict):
                turn.usage(info["last_token_usage"])
        elif kind == "session_configured":
            turn.session(msg.get("session_id"))
        elif kind in ("error", "stream_error"):
            turn.error(msg.get("message") or "error")
        elif kind not in _LEGACY_QUIET:
            turn.unknown(f"msg:{kind}")

    @staticmethod
    def _args(item, item_type):
        if item_type == "command_execution":
            return {"command": item.get("command")}
        if item_type == "file_change":
            changes = item.get("changes") if isinstance(item.get("changes"), list) else []
            paths = [c.get("path") for c in changes if isinstance(c, dict) and isinstance(c.get("path"), str)]
            return {"changes": changes, **({"path": paths[0]} if paths else {})}
        if item_type == "web_search":
            action = item.get("action")
            return {"query": item.get("query"), **({"action": action} if action is not None else {})}
        args = item.get("arguments")
        out = dict(args) if isinstance(args, dict) else ({} if args is None else {"arguments": args})
        if item.get("server"):
            out.setdefault("server", item["server"])
        if item_type == "collab_tool_call" and item.get("prompt"):
            out.setdefault("prompt", item["prompt"])
        return out

    @staticmethod
    def _ok(item, item_type):
        if item.get("status") in ("failed", "declined"):
            return False
        if item_type == "command_execution" and isinstance(item.get("exit_code"), int) and item["exit_code"] != 0:
            return False
        return not (item_type == "mcp_tool_call" and item.get("error"))

    @staticmethod
    def _result(item):
        for key in ("aggregated_output", "result", "output"):
            value = item.get(key)
            if isinstance(value, dict) and isinstance(value.get("content"), list):
                return value["content"]  # an MCP result: its content blocks
            if value is not None:
                return value
        return ""


@hookimpl
def waza_register_event_formats(register):
    register(CodexJson)
