"""A fake Copilot backend for ``copilot-reflect``: the same seam as the ``copilot-sdk``
executor's (start, auth_status, list_models, create_session, delete_session, stop; a
session with send_and_wait, abort, usage_metrics, disconnect), with scripted replies.

Each :class:`Scripted` reply plays one session: wire-format events go to the adapter's
callback (an ``assistant.message`` with the text, ``assistant.usage`` events), then the
session's usage metrics, a session error, an exception, or a hang until aborted. The
backend records every session's options and prompt, and every call in order.
"""

from __future__ import annotations

import asyncio
import copy
import os
from typing import Any

import attrs


@attrs.define
class Scripted:
    text: str | None = None
    usage: list[dict] = attrs.field(factory=list)  # assistant.usage data, one per model call
    metrics: Any = None  # session.usage.getMetrics result (wire keys), or an Exception to raise
    error: str | None = None  # a session.error event, then send_and_wait raises
    raises: Exception | None = None  # send_and_wait raises without an event
    hang: bool = False  # send_and_wait blocks until aborted/cancelled
    create_error: Exception | None = None
    stuck_cleanup: bool = False  # abort, usage_metrics and disconnect never return
    extra_events: list[dict] = attrs.field(factory=list)


def usage_event(cost: float | None = 1.0, inp: int = 1000, out: int = 200, model: str = "claude-haiku-4.5") -> dict:
    data = {"model": model, "inputTokens": inp, "outputTokens": out}
    if cost is not None:
        data["cost"] = cost
    return data


def reply(text: str, cost: float | None = 1.0, **kw) -> Scripted:
    return Scripted(text=text, usage=[usage_event(cost)], **kw)


class FakeSession:
    def __init__(self, backend: FakeReflectBackend, session_id: str, script: Scripted, on_event) -> None:
        self.backend = backend
        self.session_id = session_id
        self.script = script
        self.on_event = on_event
        self.aborted = asyncio.Event()

    def _emit(self, kind: str, data: dict, **extra) -> None:
        self.on_event({"type": kind, "data": copy.deepcopy(data), **extra})

    async def send_and_wait(self, prompt: str, timeout: float) -> None:
        self.backend.calls.append(("send", self.session_id))
        self.backend.prompts.append(prompt)
        self.backend.sdk_timeouts.append(timeout)
        s = self.script
        self._emit("user.message", {"content": prompt})
        for data in s.usage:
            self._emit("assistant.usage", data)
        for event in s.extra_events:
            self.on_event(copy.deepcopy(event))
        if s.hang:
            await self.aborted.wait()
            return
        if s.text is not None:
            self._emit("assistant.message", {"content": s.text, "messageId": "m1"})
        if s.error is not None:
            self._emit("session.error", {"message": s.error})
            raise Exception(f"Session error: {s.error}")
        if s.raises is not None:
            raise s.raises
        self._emit("session.idle", {})

    async def _maybe_stuck(self) -> None:
        if self.script.stuck_cleanup:
            await asyncio.sleep(3600)

    async def abort(self) -> None:
        self.backend.calls.append(("abort", self.session_id))
        await self._maybe_stuck()
        self.aborted.set()

    async def usage_metrics(self) -> dict | None:
        self.backend.calls.append(("usage_metrics", self.session_id))
        await self._maybe_stuck()
        if isinstance(self.script.metrics, Exception):
            raise self.script.metrics
        return copy.deepcopy(self.script.metrics)

    async def disconnect(self) -> None:
        self.backend.calls.append(("disconnect", self.session_id))
        await self._maybe_stuck()


class FakeReflectBackend:
    def __init__(self, replies: list[Scripted] | None = None, *, authenticated: bool = True, who: str = "octocat",
                 models: list[str] | None = None, start_error: Exception | None = None) -> None:
        self.replies = list(replies or [])
        self.authenticated = authenticated
        self.who = who
        self.models = models
        self.start_error = start_error
        self.calls: list[tuple] = []
        self.options: list[dict] = []
        self.prompts: list[str] = []
        self.sdk_timeouts: list[float] = []
        self.workdirs_seen: list[tuple[str, list[str]]] = []
        self.user_input_refused: list[str] = []
        self._n = 0

    async def start(self) -> None:
        self.calls.append(("start",))
        if self.start_error is not None:
            raise self.start_error

    async def auth_status(self):
        self.calls.append(("auth_status",))
        return (True, self.who) if self.authenticated else (False, "No authentication information found")

    async def list_models(self):
        return self.models

    async def create_session(self, options, on_event, on_user_input):
        self.calls.append(("create_session",))
        self.options.append(copy.deepcopy(options))
        wd = options.get("working_directory")
        self.workdirs_seen.append((wd, sorted(os.listdir(wd)) if wd and os.path.isdir(wd) else None))
        try:
            await on_user_input({"question": "which?", "choices": []})
        except Exception as exc:  # the adapter must refuse: nobody is there to answer
            self.user_input_refused.append(str(exc))
        script = self.replies.pop(0) if self.replies else Scripted(text="<<<WAZA-DONE>>>")
        if script.create_error is not None:
            raise script.create_error
        self._n += 1
        return FakeSession(self, f"reflect-{self._n}", script, on_event)

    async def delete_session(self, session_id: str) -> None:
        self.calls.append(("delete_session", session_id))

    async def stop(self) -> None:
        self.calls.append(("stop",))

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]
