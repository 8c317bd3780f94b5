"""``events: opencode-json``: OpenCode's ``opencode run --format json``.

OpenCode prints a ``tool_use`` event when a tool part reaches a final state: its
``part.callID`` is the call id, ``part.tool`` the name, ``part.state.input`` the
arguments; ``state.status`` ``completed`` is a success, ``error`` a failure (any other
status leaves the call unfinished), and so is a completed call of OpenCode's ``invalid`` tool
(the model named a tool that does not exist; the input's ``tool`` says which) or a command whose
``metadata.exit`` is not 0. ``text`` parts are messages; usage (tokens and cost)
comes from each ``step_finish`` part (``cost`` is OpenCode's own USD figure); ``error`` events
are error events; the session id is ``sessionID``. The ``skill`` tool loads a skill. The final
``done`` event (``reason``, and the permissions OpenCode rejected because nobody could answer
them, e.g. ``question``) goes to the transcript. Event types are those ``opencode run`` emits
(``packages/opencode/src/cli/cmd/run.ts``): only the parts of the run's own session, so a
subagent's (``task`` tool) inner calls are not in the stream.
"""

from __future__ import annotations

from waza_core import EventFormat, hookimpl

_QUIET = frozenset({"step_start", "reasoning"})


class OpencodeJson(EventFormat, name="opencode-json", agent="opencode run --format json PROMPT",
                   description="OpenCode: opencode run --format json", skill_tools={"skill": ("name", "skill")}):

    def read_event(self, event, turn):
        kind = event.get("type")
        turn.session(event.get("sessionID"))
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        if kind == "tool_use":
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            call_id = part.get("callID") if part.get("callID") not in (None, "") else part.get("id")
            turn.start_call(call_id, part.get("tool"), state.get("input"))
            if state.get("status") in ("completed", "error"):
                failed = state["status"] == "error" or _failed_anyway(part.get("tool"), state)
                turn.finish_call(call_id, not failed, state.get("output"), state.get("error") or state.get("output"))
        elif kind == "text":
            turn.message(part.get("text"))
        elif kind == "step_finish":
            self.turns += 1
            tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
            cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
            turn.usage({"input_tokens": tokens.get("input"), "output_tokens": tokens.get("output"),
                        "cache_read_tokens": cache.get("read"), "cache_write_tokens": cache.get("write")},
                       cost_usd=part.get("cost"))
        elif kind == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            turn.error(data.get("message") or error.get("name") or event.get("error") or "error")
        elif kind == "done":
            rejected = event.get("rejected") if isinstance(event.get("rejected"), list) else []
            turn.evidence.transcript.append({"type": "session.done", "reason": event.get("reason"),
                                             "rejected_permissions": rejected})
        elif kind not in _QUIET:
            turn.unknown(kind)


def _failed_anyway(tool, state):
    """A ``completed`` part that a person reads as failed: OpenCode's ``invalid`` tool (the
    model called a tool that does not exist, or with bad arguments; its input names the tool
    it tried) and a command whose ``metadata.exit`` is not 0."""
    if tool == "invalid":
        return True
    metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    code = metadata.get("exit")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


@hookimpl
def waza_register_event_formats(register):
    register(OpencodeJson)
