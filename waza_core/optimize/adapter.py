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
import types
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

#: the dedicated flags of ``waza optimize run`` (waza's own), each an alias of one
#: ``--adapter-option KEY=VALUE``: flag -> key
OPTION_ALIASES: Mapping[str, str] = {
    "--fake-script": "script",
    "--adapter-command": "command",
    "--adapter-arg": "arg",
    "--adapter-env": "env",
    "--reflect-model": "model",
}


def _freeze_values(values: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    return types.MappingProxyType({str(k): tuple(v) if isinstance(v, (list, tuple)) else (str(v),)
                                   for k, v in values.items()})


@attrs.frozen
class AdapterOptions:
    """What an adapter is configured with: its own options, and facts from the run.

    ``values`` holds the adapter's options (``--adapter-option KEY=VALUE`` and the
    dedicated flags that alias them), every key with the values in the order given.
    ``origins`` says how the user spelled each key, for messages.
    """

    values: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict, converter=_freeze_values)
    origins: Mapping[str, str] = attrs.field(factory=dict, converter=lambda m: types.MappingProxyType(dict(m)))
    timeout_seconds: float = 600.0  # --adapter-timeout
    eval_model: str = ""
    eval_executor: str = "mock"

    @classmethod
    def of(cls, values: Mapping[str, Any] | None = None, **facts: Any) -> AdapterOptions:
        """Options from a plain mapping: a string value is one value, a list several;
        ``None`` and empty lists are left out."""
        return cls(values={k: v for k, v in (values or {}).items() if v is not None and v != [] and v != ()},
                   **facts)

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of a single-valued option, or ``default`` when not given."""
        given = self.values.get(key)
        return given[-1] if given else default

    def get_all(self, key: str) -> tuple[str, ...]:
        """Every value of a repeatable option, in the order given."""
        return self.values.get(key, ())

    def origin(self, key: str) -> str:
        """How the user gave ``key`` (``--adapter-command``, ``--adapter-option command``), for messages."""
        if key in self.origins:
            return self.origins[key]
        alias = next((flag for flag, k in OPTION_ALIASES.items() if k == key), None)
        return alias or f"--adapter-option {key}"


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
    """Base class. Subclasses set ``name`` and implement :meth:`call`.

    ``option_help`` declares the options the adapter reads (``--adapter-option
    KEY=VALUE``), each with one line of help; the core refuses any other key before
    the first call (``invalid_config``), so a typo or an option meant for another
    adapter never passes silently. ``repeatable_options`` are the keys that may be
    given more than once (read them with ``self.options.get_all(key)``).
    """

    name: ClassVar[str] = ""
    #: True when this adapter always needs ``--allow-paid-calls`` (command, copilot-reflect)
    always_paid: ClassVar[bool] = False
    #: option key -> one line of help
    option_help: ClassVar[Mapping[str, str]] = {}
    #: option keys that may be given more than once
    repeatable_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, options: AdapterOptions) -> None:
        self.options = options

    @classmethod
    def option_problems(cls, options: AdapterOptions) -> list[str]:
        """Keys this adapter does not declare, and single-valued keys given twice."""
        known = ", ".join(sorted(cls.option_help)) or "none"
        problems = [f"{options.origin(key)} is not an option of --adapter {cls.name} (its options: {known})"
                    for key in options.values if key not in cls.option_help]
        problems += [f"{options.origin(key)} given {len(values)} times; --adapter {cls.name} takes one"
                     for key, values in options.values.items()
                     if key in cls.option_help and key not in cls.repeatable_options and len(values) > 1]
        return problems

    def check_options(self) -> list[str]:
        """Problems with the option values (each becomes ``invalid_config``); empty when
        fine. Unknown keys are refused before this is called."""
        return []

    def call(self, request: dict[str, Any], *, timeout: float | None,
             cancel: threading.Event) -> AdapterReply:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Called once when the optimizer run ends."""
