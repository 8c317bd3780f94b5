"""A fake :class:`~waza_adapters.copilot_sdk.CopilotBackend` replaying recorded event streams.

A stream file (``copilot_streams/*.json``) holds ``turns``: one list of wire-format
session events per prompt, as the SDK's ``SessionEvent.to_dict()`` gives them, plus
the ``usage_metrics`` that ``session.usage.getMetrics`` would return. The fake plays
the SDK's part: events go to the executor's callback, a ``user_input.requested``
event first asks the executor's user-input handler, ``session.error`` makes
``send_and_wait`` raise, and the marker ``"HANG"`` blocks like a stuck agent.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

STREAMS = Path(__file__).parent / "copilot_streams"


def load_stream(name: str) -> dict:
    return json.loads((STREAMS / f"{name}.json").read_text())


class FakeSession:
    def __init__(self, backend: FakeBackend, session_id: str, turns, on_event, on_user_input):
        self.backend = backend
        self.session_id = session_id
        self.turns = list(turns)
        self.on_event = on_event
        self.on_user_input = on_user_input

    async def send_and_wait(self, prompt: str, timeout: float) -> None:
        self.backend.calls.append(("send", self.session_id, prompt))
        turn = self.turns.pop(0) if self.turns else []
        for event in turn:
            if event == "HANG":
                await asyncio.sleep(3600)
            if self.backend.event_delay:
                await asyncio.sleep(self.backend.event_delay)
            if event["type"] == "user_input.requested":
                data = event["data"]
                try:
                    reply = await self.on_user_input({"question": data["question"], "choices": data.get("choices"),
                                                      "allowFreeform": data.get("allowFreeform", True)})
                    self.backend.user_input_replies.append(reply)
                except Exception as exc:  # the SDK returns the error to the runtime
                    self.backend.user_input_replies.append(exc)
            self.on_event(copy.deepcopy(event))
            if event["type"] == "session.error":
                raise Exception(f"Session error: {event['data']['message']}")

    async def abort(self) -> None:
        self.backend.calls.append(("abort", self.session_id))

    async def usage_metrics(self) -> dict | None:
        self.backend.calls.append(("usage_metrics", self.session_id))
        return copy.deepcopy(self.backend.usage_metrics)

    async def disconnect(self) -> None:
        self.backend.calls.append(("disconnect", self.session_id))


class FakeBackend:
    def __init__(self, stream: dict | None = None, *, authenticated: bool = True, models: list[str] | None = None,
                 start_error: Exception | None = None, create_error: Exception | None = None,
                 event_delay: float = 0.0):
        stream = stream or {"turns": [[]], "usage_metrics": None, "session_id": "sess"}
        self.turns = stream["turns"]
        self.usage_metrics = stream.get("usage_metrics")
        self.session_prefix = stream.get("session_id", "sess")
        self.authenticated = authenticated
        self.models = models
        self.start_error = start_error
        self.create_error = create_error
        self.event_delay = event_delay
        self.calls: list[tuple] = []
        self.options: list[dict] = []
        self.user_input_replies: list = []
        self._count = 0

    async def start(self) -> None:
        self.calls.append(("start",))
        if self.start_error:
            raise self.start_error

    async def auth_status(self):
        return self.authenticated, "octocat" if self.authenticated else "No authentication information found"

    async def list_models(self):
        return self.models

    async def create_session(self, options, on_event, on_user_input):
        self.calls.append(("create_session",))
        self.options.append(options)
        if self.create_error:
            raise self.create_error
        self._count += 1
        session_id = f"{self.session_prefix}-{self._count}"
        return FakeSession(self, session_id, self.turns, on_event, on_user_input)

    async def delete_session(self, session_id: str) -> None:
        self.calls.append(("delete_session", session_id))

    async def stop(self) -> None:
        self.calls.append(("stop",))

    def names(self, session_id: str | None = None) -> list[str]:
        return [c[0] for c in self.calls if session_id is None or (len(c) > 1 and c[1] == session_id)]
