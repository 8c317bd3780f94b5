"""The executor interface: what runs the agent for one task run.

The core prepares a fresh workspace per run (``inputs.files`` and the context
fixture) before calling :meth:`Executor.execute`, and removes it after grading. An
executor is started once per suite run and shut down once; ``execute`` may be called
from several threads at once (bounded by ``--workers``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar

import attrs

from waza_core.frozen_build import fast_builder
from waza_core.model import RunEvidence, TaskSpec

if TYPE_CHECKING:
    from waza_core.model import Suite


@attrs.frozen(weakref_slot=False)  # see make_request
class ExecutionRequest:
    task: TaskSpec
    prompt: str
    #: the run's fresh workspace; ``None`` only for executors that declare
    #: ``needs_workspace = False`` when nothing else can see the workspace either
    workspace_dir: str | None
    timeout_seconds: int
    model: str
    skill_directories: tuple[str, ...]
    run_number: int = 1
    attempt: int = 1
    files: tuple = ()  # (relative path, content) loaded for this run
    #: extra environment variables for the agent process (``inputs.environment``, mocks)
    environment: Mapping[str, str] = attrs.field(factory=dict)
    #: folders to put first on the agent process's PATH (command-mock shims)
    path_prepend: tuple[str, ...] = ()
    #: MCP servers to hand to the agent: name -> server config (``command``, ``args``,
    #: ``env``, ``cwd``), e.g. the stdio server of an ``mcp_mocks`` entry
    mcp_servers: Mapping[str, dict] = attrs.field(factory=dict)
    #: the agent's working directory relative to the workspace (``inputs.workdir``)
    workdir: str | None = None
    #: called after each completed turn of the conversation (the prompt is turn 1, each
    #: follow-up one more) with the evidence so far; True means "stop the conversation
    #: here" (a failed ``checkpoints`` entry with ``on_failure: stop``). Executors that
    #: call it set ``reports_turns = True``; None when nobody listens.
    on_turn: Callable[[int, RunEvidence], bool] | None = None


#: ``ExecutionRequest(...)``, for one request per run (waza_core/frozen_build.py)
make_request = fast_builder(ExecutionRequest)


class Executor:
    """Base class for executors. Subclasses set ``name`` and implement ``execute``."""

    name: ClassVar[str] = ""
    #: whether running it may cost money (``waza optimize`` then asks for consent)
    paid: ClassVar[bool] = True
    #: whether it reads or writes the run's workspace (agents do; the mock does not)
    needs_workspace: ClassVar[bool] = True
    #: whether it honours ``environment``, ``path_prepend``, ``mcp_servers`` and ``workdir``
    #: of the request, so the suite's ``command_mocks`` and ``mcp_mocks`` are installed
    #: (otherwise they are left out and their evidence stays null; see docs/mocks.md)
    supports_mocks: ClassVar[bool] = False
    #: the key under the suite's ``config:`` that holds this executor's own options
    #: (e.g. ``cli``); empty when it takes none
    config_key: ClassVar[str] = ""
    #: JSON Schema of ``config.<config_key>``, checked when the suite loads
    config_schema: ClassVar[dict] = {"type": "object"}
    #: whether ``execute`` calls ``request.on_turn`` after each turn (needed by task
    #: ``checkpoints``; a suite with checkpoints refuses an executor that does not)
    reports_turns: ClassVar[bool] = False
    #: whether ``execute`` may put token counts or credits in ``RunEvidence.usage``; False
    #: (the offline ``mock``, ``echo`` and ``null``: usage is always null) spares every run the
    #: price table's step (:func:`waza_core.run.prices.price_costs`), which has nothing to price
    reports_usage: ClassVar[bool] = True
    #: suite keys this executor honours from ``request.task`` / the suite config among
    #: ``instruction_files``, ``responder``, ``first_event_timeout_seconds``; a run with
    #: another one prints a warning that it is not used
    supports: ClassVar[frozenset] = frozenset()

    def __init__(self, suite: Suite, options: dict | None = None) -> None:
        self.suite = suite
        self.options = options or {}

    def start(self) -> None:
        """Called once before the first run (check logins and binaries here)."""

    def environment_allow_list(self) -> tuple[str, ...]:
        """Names (``*`` and ``?`` globs allowed) of variables of waza's environment this
        executor reads, a credential say. A backend that runs it on another machine
        (``ray``) passes exactly these along from the driver, and nothing else of it."""
        return ()

    def execute(self, request: ExecutionRequest) -> RunEvidence:  # pragma: no cover - interface
        raise NotImplementedError

    def shutdown(self) -> None:
        """Called once after the last run, also after an interrupt."""
