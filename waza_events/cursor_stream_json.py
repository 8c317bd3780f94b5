"""``events: cursor-stream-json``: Cursor's ``cursor-agent -p --output-format stream-json``.

A ``tool_call`` event with ``subtype: started`` starts a call and one with ``subtype:
completed`` and the same ``call_id`` ends it. ``tool_call`` holds one key naming the
tool as Cursor spells it (``readToolCall``, ``shellToolCall``, ``editToolCall``, ...;
``function`` holds a function tool whose ``name`` is used) with its ``args`` and
``result``. A ``result`` holds one outcome key: ``success`` (and the tool-specific
``complete``, ``registered``, ``startSuccess``, ``saveSuccess``, ``discardSuccess``) is a success
unless a shell command's exit code is not 0; ``approved``, ``async`` and ``stillRunning`` are not
final (the call stays open); every other outcome fails it (``failure``, ``error``, ``rejected``,
``timeout``, ``spawnError``, ``permissionDenied``, ``fileNotFound``, ``needsConfirmation``, ...; the
outcomes Cursor CLI 2026.08 prints, as captured by ZhengyiLuo/AgentsServer). ``assistant`` text blocks are messages;
``result`` gives usage when present and, with ``is_error``, an error event.

With ``--stream-partial-output`` Cursor sends each chunk of text as an ``assistant`` event
with ``timestamp_ms`` (a chunk repeated with a ``model_call_id`` is a copy), and the whole
message once more without ``timestamp_ms`` (Cursor forum, "stream-partial-output: assistant
events have multiple undocumented forms"): chunks are joined into one message up to the next
tool call, and the whole message replaces them when it comes. Without that flag, the message
written before tool calls carries ``model_call_id`` and ``timestamp_ms`` and is the only copy
(reifying/cursor-hack's captures): it is a message.
"""

from __future__ import annotations

import json

from waza_core import EventFormat, hookimpl

_QUIET = frozenset({"system", "user", "thinking", "connection", "retry", "interaction_query"})
_SUCCESS = ("success", "complete", "registered", "startSuccess", "saveSuccess", "discardSuccess")
_PENDING = ("approved", "async", "stillRunning")
#: outcome keys that name a failure, for the error text (any outcome but a success fails)
_FAILED = ("error", "failure", "rejected", "permissionDenied", "timeout", "spawnError", "readPermissionDenied",
           "writePermissionDenied", "fileNotFound", "invalidFile", "notFile", "fileBusy", "noSpace",
           "sandboxUnsupported", "notFound", "serverNotFound", "toolNotFound", "needsConfirmation")


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
    outcome = next((result[k] for k in _SUCCESS if k in result), None)
    if outcome is None:
        return any(isinstance(v, dict) for v in result.values())  # an outcome this reader does not know
    success = outcome if isinstance(outcome, dict) else {}
    code = success.get("exitCode", success.get("exit_code"))
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _pending(result):
    return isinstance(result, dict) and any(k in result for k in _PENDING) and \
        not any(k in result for k in _SUCCESS + _FAILED)


class CursorStreamJson(EventFormat, name="cursor-stream-json",
                       agent="cursor-agent -p PROMPT --output-format stream-json",
                       description="Cursor: cursor-agent -p --output-format stream-json"):

    def start(self):
        self._chunks: list[str] = []
        self._chunked = False  # chunks were streamed: a message with model_call_id repeats them

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("session_id"))
        if kind == "assistant":
            text = _text(event.get("message"))
            if "timestamp_ms" not in event:
                self._chunks.clear()  # the whole message: it supersedes the chunks streamed before it
                self._chunked = False
                turn.message(text)
            elif "model_call_id" not in event and text:
                self._chunks.append(text)
                self._chunked = True
            elif not self._chunked:
                turn.message(text)  # without --stream-partial-output: the message before the tool calls
            return
        self.end_turn(turn)
        if kind == "tool_call":
            name, args, result = _tool(event.get("tool_call"))
            if event.get("subtype") == "started":
                turn.start_call(event.get("call_id"), name, args)
            elif event.get("subtype") == "completed" and _pending(result):
                turn.start_call(event.get("call_id"), name, args)  # not final yet: the call stays open
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


    def end_turn(self, turn):
        if self._chunks:
            turn.message("".join(self._chunks))
            self._chunks.clear()


def _text(message):
    """The text blocks of an ``assistant`` message, joined."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    return "".join(b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"
                   and isinstance(b.get("text"), str)) if isinstance(content, list) else ""


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
