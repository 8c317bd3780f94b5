"""The optimizer adapter interface shared by every adapter plugin.

An adapter only *proposes*: it turns one request document
(``optimizer-adapter-request-1.0``) into one response document
(``optimizer-adapter-response-1.0``). It never evaluates or grades. The core sends
every request and checks every reply against the schemas itself, whichever adapter
made it, so ``fake`` and ``copilot-reflect`` are held to exactly what a ``command``
adapter must send.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import attrs


@attrs.frozen
class AdapterOptions:
    """The ``waza optimize run`` flags an adapter may use."""

    fake_script: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env_names: tuple[str, ...] = ()
    reflect_model: str | None = None
    timeout_seconds: float = 600.0  # --adapter-timeout
    eval_model: str = ""
    eval_executor: str = "mock"


@attrs.frozen
class AdapterReply:
    """What an adapter returned for one call.

    ``raw`` is the response document exactly as produced (JSON bytes); the core parses
    and validates it. ``usage`` is spend the adapter measured outside the document
    (e.g. from the SDK), kept even when ``raw`` turns out malformed.
    """

    raw: bytes
    usage: dict[str, Any] | None = None
    stderr_tail: str | None = None


class AdapterFailure(Exception):
    """The adapter could not answer. ``category`` is a report failure category:
    usually ``optimizer_failure``; ``malformed_proposal`` when it answered nonsense."""

    def __init__(self, message: str, category: str = "optimizer_failure",
                 usage: dict[str, Any] | None = None, stderr_tail: str | None = None):
        super().__init__(message)
        self.category = category
        self.usage = usage
        self.stderr_tail = stderr_tail


class OptimizerAdapter:
    """Base class. Subclasses set ``name`` and implement :meth:`call`."""

    name: ClassVar[str] = ""
    #: True when this adapter always needs ``--allow-paid-calls`` (command, copilot-reflect)
    always_paid: ClassVar[bool] = False
    #: the :class:`AdapterOptions` fields this adapter reads (e.g. ``("command", "args",
    #: "env_names")``); the core rejects an adapter flag given to an adapter that ignores it,
    #: so a mistyped ``--adapter`` never silently drops ``--adapter-command``
    options_used: ClassVar[tuple[str, ...]] = ()

    def __init__(self, options: AdapterOptions) -> None:
        self.options = options

    def check_options(self) -> list[str]:
        """Problems with the flags (each becomes ``invalid_config``); empty when fine."""
        return []

    def call(self, request: dict[str, Any], *, timeout: float | None,
             cancel: threading.Event) -> AdapterReply:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Called once when the optimizer run ends."""
