"""``events: cursor-stream-json``: Cursor's ``cursor-agent -p --output-format stream-json``.

A ``tool_call`` event with ``subtype: started`` starts a call and one with ``subtype:
completed`` and the same ``call_id`` ends it. ``tool_call`` holds one key naming the
tool as Cursor spells it (``readToolCall``, ``shellToolCall``, ``editToolCall``, ...;
``function`` holds a function tool whose ``name`` is used) with its ``args`` and
``result``. A call failed when its result has ``error``, ``failure`` or ``rejected``,
or a shell command's exit code is not 0. ``assistant`` text blocks are messages;
``result`` gives usage when present and, with ``is_error``, an error event.
"""

from __future__ import annotations

import json

from waza_core import EventFormat, hookimpl

_QUIET = frozenset({"system", "user", "thinking", "connection", "retry"})
_FAILED = ("error", "failure", "rejected", "permissionDenied", "timeout")


def _tool(tool_call):
    """(name, args, result) from Cursor's one-key ``tool_call`` object."""
    if not isinstance(tool_call, dict) or not tool_call:
        return None, {}, None
    key, body = next(iter(tool_call.items()))
    body = body if isinstance(body, dict) else {}
    if key == "function":
        args = body.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = {"arguments": args}
        return body.get("name") or key, args if isinstance(args, dict) else {}, body.get("result")
    return key, body.get("args") if isinstance(body.get("args"), dict) else {}, body.get("result")


def _failed(result):
    if not isinstance(result, dict):
        return False
    if any(k in result for k in _FAILED):
        return True
    success = result.get("success") if isinstance(result.get("success"), dict) else {}
    code = success.get("exitCode", success.get("exit_code"))
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


class CursorStreamJson(EventFormat):
    name = "cursor-stream-json"
    description = "Cursor: cursor-agent -p --output-format stream-json"
    agent = "cursor-agent -p PROMPT --output-format stream-json"

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("session_id"))
        if kind == "assistant":
            message = event.get("message") if isinstance(event.get("message"), dict) else {}
            content = message.get("content")
            if isinstance(content, str):
                turn.message(content)
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "text":
                    turn.message(block.get("text"))
        elif kind == "tool_call":
            name, args, result = _tool(event.get("tool_call"))
            if event.get("subtype") == "started":
                turn.start_call(event.get("call_id"), name, args)
            elif event.get("subtype") == "completed":
                turn.finish_call(event.get("call_id"), not _failed(result), result,
                                 _error_text(result), name=name, args=args)
            else:
                turn.unknown(f"tool_call:{event.get('subtype')}")
        elif kind == "result":
            turn.usage(event.get("usage"))
            if event.get("is_error"):
                turn.error(event.get("result") or event.get("subtype") or "the run ended with an error")
        elif kind == "error":
            turn.error(event.get("message") or event.get("error") or event)
        elif kind not in _QUIET:
            turn.unknown(kind)


def _error_text(result):
    if not isinstance(result, dict):
        return None
    for key in _FAILED:
        if key in result:
            value = result[key]
            return value.get("message") or value.get("error") or value if isinstance(value, dict) else value
    return None


@hookimpl
def waza_register_event_formats(register):
    register(CursorStreamJson)
