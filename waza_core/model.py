"""The data model: suite and task specs (frozen values) and the run evidence.

Suite objects are built once by :mod:`waza_core.suite.load`; the evidence of one run is
what the executor recorded, kept whole in the results file so that ``waza grade``
can rebuild the grading input. ``None`` means "no evidence recorded", ``[]`` means
"recorded, and empty": the two are kept apart everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from waza_core import cache_json
from waza_core.frozen_build import fast_builder
from waza_core.paths import display_path


def _plain_config(config: dict | bytes) -> dict:
    return cache_json.decode(config) if isinstance(config, bytes) else config


# no __weakref__ slot: what lets fast_builder build them (100,000 a run)
@attrs.frozen(eq=False, repr=False, weakref_slot=False)
class GraderSpec:
    """One entry of a ``graders:`` list."""

    type: str
    name: str
    weight: float = 1.0
    #: the entry's ``config`` (passed as ``config=``): a dict, or its compact JSON for a task
    #: whose document the suite cache holds (see :attr:`config`); equal either way
    _config: dict | bytes = attrs.field(factory=dict, alias="config")
    #: :attr:`where` (passed as ``where=``), or, for the entry of a task file the suite cache
    #: holds, its index in that file's ``graders`` list: :attr:`where` is then made from it and
    #: ``at_file`` when asked for (the string per grader was 80 B, 8 MB of a 100,000-task suite)
    _where: str | int = attrs.field(default="", alias="where")
    #: the task file (a path string shared with its ``TaskSpec``) of an index ``where``
    _at_file: str | None = attrs.field(default=None, alias="at_file")

    @property
    def config(self) -> dict:
        """The entry's ``config``. A grader of a task whose document the suite cache holds
        (found there, or stored by the load) keeps it as compact JSON and decodes it on each
        access (about a microsecond; the dict, its lists and strings held ~270 B more per
        grader, 27 MB of a 100,000-task suite), so the dict returned is then a new one each
        time: read it, do not change it."""
        return _plain_config(self._config)

    @property
    def where(self) -> str:
        """Where the entry is written, for messages: ``file:line:col``, or ``file (graders[i])``
        for a task file read through the suite cache (no positions there)."""
        where = self._where
        if isinstance(where, str):
            return where
        return f"{display_path(self._at_file or '')} (graders[{where}])"

    def _place(self) -> str | tuple:
        """:attr:`where` as compared and hashed: the string, or (file, index) for an index,
        so that neither depends on the working folder at the time (``where`` shows the file
        relative to it)."""
        where = self._where
        return where if isinstance(where, str) else (self._at_file, where)

    def _key(self) -> tuple:
        return self.type, self.name, self.weight, self.config, self._place()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:  # not the config (a dict): equal specs still hash alike
        return hash((self.type, self.name, self.weight, self._place()))

    def __repr__(self) -> str:
        return (f"GraderSpec(type={self.type!r}, name={self.name!r}, weight={self.weight!r}, "
                f"config={self.config!r}, where={self.where!r})")


@attrs.frozen
class CheckpointSpec:
    """One ``checkpoints:`` entry of a task: graders run after a given turn."""

    after_turn: int  # 1-based: the prompt is turn 1, each follow-up one more
    graders: tuple[GraderSpec, ...]
    on_failure: str = "continue"  # or "stop": end the conversation, the run becomes error


@attrs.frozen
class FileInput:
    path: str
    content: str | None = None


def _none_if_empty(value: dict | None) -> dict | None:
    return value or None


def _path_string(path: str | os.PathLike[str]) -> str:
    return os.fspath(path)


@attrs.frozen(weakref_slot=False)  # see fast_builder
class TaskSpec:
    id: str
    name: str
    prompt: str
    #: the task's YAML file as a path string (``file=`` when built; :attr:`file` is its Path):
    #: a Path per task held ~260 B more, 26 MB of a 100,000-task suite
    filename: str = attrs.field(alias="file", converter=_path_string)
    description: str = ""
    tags: tuple[str, ...] = ()
    enabled: bool = True
    timeout_seconds: int | None = None
    context_dir: str | None = None
    files: tuple[FileInput, ...] = ()
    #: ``inputs.context`` (passed as ``context=``; :attr:`context` reads it): None when empty,
    #: as for almost every task (an empty dict per task was 64 B, 6 MB of a 100,000-task suite)
    _context: dict | None = attrs.field(default=None, alias="context", converter=_none_if_empty,
                                        repr=lambda context: repr(context or {}))
    follow_up_prompts: tuple[str, ...] = ()
    skill_directories: tuple[str, ...] | None = None
    graders: tuple[GraderSpec, ...] = ()
    #: the task's document as checked: a dict, or its compact JSON when it came through
    #: the suite cache (see :attr:`raw`); passed as ``raw=``
    _raw: dict | bytes = attrs.field(factory=dict, eq=False, repr=False, alias="raw")
    #: a must-pass task for ``waza gate --golden-must-pass``; copied to the results
    golden: bool = False
    #: descriptive ``requirements`` entries, kept as written and never scored
    requirements: tuple[dict, ...] = ()
    checkpoints: tuple[CheckpointSpec, ...] = ()
    #: added to ``config.instruction_files`` for this task (resolved paths)
    instruction_files: tuple[str, ...] = ()
    first_event_timeout_seconds: int | None = None
    #: ``inputs.responder``: {model, instructions, max_followups}, for executors that support it
    responder: dict | None = None

    @property
    def context(self) -> dict:
        """``inputs.context`` as written; for a task without one, a new empty dict each time
        (nothing one caller adds reaches another task)."""
        context = self._context
        return {} if context is None else context

    @property
    def has_context(self) -> bool:
        """Whether the task has an ``inputs.context`` (spares :attr:`context`'s new empty dict)."""
        return self._context is not None

    @property
    def file(self) -> Path:
        """The task's YAML file (a new Path each time: :attr:`filename` is the string)."""
        return Path(self.filename)

    @property
    def raw(self) -> dict:
        """The task's document as checked (``id``, ``inputs``, ``graders``, ...).

        A task loaded through the suite cache keeps it as compact JSON and decodes it on
        each access (about a microsecond; a dict tree costs ~0.7 KB more per task, 70 MB
        of a 100,000-task suite), so the dict returned is then a new one each time:
        read it, do not change it."""
        raw = self._raw
        return cache_json.decode(raw) if isinstance(raw, bytes) else raw

    def may_hold(self, *strings: bytes) -> bool:
        """False only when :attr:`raw` certainly holds none of ``strings`` (ASCII keys such
        as ``b"command_mocks"``) anywhere: the compact JSON of a cached task has none of
        their bytes and no ``\\u`` escape. Spares decoding the documents of 100,000 tasks
        to look for a key that almost none of them has."""
        raw = self._raw
        if not isinstance(raw, bytes):
            return True
        return not _holds_none(raw, strings)  # the same test as a chunk of documents gets

    @property
    def raw_json(self) -> bytes | None:
        """The compact JSON of :attr:`raw` when the task came through the suite cache (a
        byte search there spares decoding it), else None."""
        raw = self._raw
        return raw if isinstance(raw, bytes) else None


#: ``GraderSpec(...)`` and ``TaskSpec(...)`` for the loader's many (waza_core/frozen_build.py)
make_grader_spec = fast_builder(GraderSpec)
make_task_spec = fast_builder(TaskSpec)


#: tasks whose cached documents :func:`tasks_that_may_hold` searches at once
MAY_HOLD_CHUNK = 512


def tasks_that_may_hold(tasks: list[TaskSpec], *strings: bytes) -> Iterator[int]:
    """The positions in ``tasks`` of those whose document may hold one of ``strings``: where
    :meth:`TaskSpec.may_hold` is True, in order. The compact JSON of every MAY_HOLD_CHUNK
    cached tasks is searched joined into one text first (one ``find`` a string for 512 tasks,
    not one a task: a pass over 100,000 tasks took ~1 us a task), and only a chunk where one
    is found is looked at task by task. A string holding a newline (the joint; compact JSON
    has none) is looked for task by task."""
    whole = not any(b"\n" in s for s in strings)
    for start in range(0, len(tasks), MAY_HOLD_CHUNK):
        chunk = tasks[start:start + MAY_HOLD_CHUNK]
        if whole:
            try:  # the documents as kept (raw_json without a property call a task)
                text = b"\n".join([t._raw for t in chunk])  # type: ignore[misc]  # a dict raises TypeError
            except TypeError:  # a document kept as a dict (a task not from the suite cache)
                text = None
            if text is not None and _holds_none(text, strings):
                continue
        for i, task in enumerate(chunk, start):
            if task.may_hold(*strings):
                yield i


def share_tags(tags: Sequence[str], shared: dict | None) -> tuple[str, ...]:
    """``tags`` as a tuple, the same strings and the same tuple as an earlier task's with the
    same tags (``shared``: what a load has seen so far; suites repeat a few tags over many tasks,
    and at 100,000 tasks of two tags each a copy per task held ~16 MB more)."""
    if shared is None or not tags:
        return tuple(tags)
    kept = tuple([shared.setdefault(tag, tag) for tag in tags])
    return shared.setdefault(kept, kept)


def _holds_none(text: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether ``text`` holds none of ``needles`` and no ``\\u`` escape. A backslash is looked
    for first: one byte is found by ``memchr``, ~80 times as fast as the two of ``\\u`` (~1 against
    ~72 us in the 72 KB of 512 documents), and most documents have no escape at all. find(), not
    ``in``: on Python 3.11 ``needle in text`` first tries the needle as an integer (a byte) and
    builds a TypeError it then drops (twice the time); a loop, not any(<generator>)."""
    if text.find(b"\\") >= 0 and text.find(b"\\u") >= 0:
        return False
    for needle in needles:
        if text.find(needle) >= 0:
            return False
    return True


@attrs.frozen
class SuiteConfig:
    trials_per_task: int = 1
    timeout_seconds: int = 300
    parallel: bool = False
    workers: int = 4
    executor: str = "mock"
    model: str = ""
    judge_model: str = ""
    max_attempts: int = 1
    fail_fast: bool = False
    skill_directories: tuple[str, ...] = ()
    required_skills: tuple[str, ...] = ()
    disabled_skills: tuple[str, ...] = ()
    backend: str | None = None  # where the runs run (``waza run --backend``); None: not set
    extra: dict = attrs.field(factory=dict)  # executor-specific keys, e.g. ``cli``
    first_event_timeout_seconds: int = 0
    reasoning_effort: str = ""
    judge_reasoning_effort: str = ""
    group_by: str = ""  # "model", "tags" or "" (no groups)
    instruction_files: tuple[str, ...] = ()  # resolved paths
    inject_skill_body: bool | None = None
    trigger_skill_routing: bool = False
    models: tuple[str, ...] = ()  # waza for Python: one run of the suite per model


class TaskFileInodes:
    """The inode of every task file one load read (folded into an ``array('q')``, disabled
    tasks too), for the tasks tuple that load made: a suite whose ``tasks`` were replaced
    since (``attrs.evolve``) is not covered, and gets every task file compared by ``stat``."""

    __slots__ = ("tasks", "inodes")

    def __init__(self, tasks: tuple[TaskSpec, ...], inodes: Any) -> None:
        self.tasks, self.inodes = tasks, inodes

    def rules_out(self, suite: Suite, folded: int) -> bool:
        """True when no task file of ``suite`` had the inode ``folded`` (see
        ``suite.cache.folded_inode``) when it was loaded."""
        return suite.tasks is self.tasks and folded not in self.inodes


@attrs.frozen
class Suite:
    name: str
    skill: str
    file: Path
    config: SuiteConfig
    tasks: tuple[TaskSpec, ...]
    graders: tuple[GraderSpec, ...] = ()
    description: str = ""
    version: str = ""
    metrics: tuple[dict, ...] = ()
    inputs: dict = attrs.field(factory=dict)
    hooks: dict | None = None
    baseline: bool = False
    raw: dict = attrs.field(factory=dict, eq=False, repr=False)
    #: the version the eval was read as (the declared one, or the current one)
    schema_version: str = "1.5"
    #: the workflow identity of a scenario (2.0) suite; None for a skill suite
    scenario: str | None = None
    #: ``adversarial`` as written (for ``waza adversarial``, which waza for Python lacks)
    adversarial: dict | None = None
    #: ``trigger_tests.yaml`` next to eval.yaml, checked; None when there is none
    trigger_tests: dict | None = None
    #: ``file:line:col: warning: ...`` lines found while loading (unknown keys of a 1.x eval)
    warnings: tuple[str, ...] = ()
    #: the tasks the loader read with ``enabled: false`` (not in :attr:`tasks`): their files and
    #: the files they name are still the suite's, so no output may overwrite them
    #: (:mod:`waza_core.run.collisions`)
    disabled_tasks: tuple[TaskSpec, ...] = attrs.field(default=(), eq=False, repr=False)
    #: the inodes of the task files the loader read, from the ``stat`` it made anyway
    #: (:class:`TaskFileInodes`); None when not known. The output collision check stats a task
    #: file only when the target's inode is one of these (:mod:`waza_core.run.collisions`): a
    #: ``stat`` per task file of every re-run was ~5% of a warm 100,000-task run
    task_file_inodes: TaskFileInodes | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def dir(self) -> Path:
        return self.file.parent

    def skills_disabled_for(self, task: TaskSpec) -> bool:
        """Whether ``task`` runs with no skills at all (waza Go ``SkillsDisabledForTask``).

        True when ``disabled_skills`` has ``"*"`` or ``skill_directories`` has ``"none"``
        (any suite); and, for scenario suites, when the task sets ``skill_directories: []``
        or when neither the suite (``skill``, ``config.skill_directories``) nor the task
        names any skill context: a scenario gets no ambient skill discovery.
        """
        cfg = self.config
        if "*" in cfg.disabled_skills or "none" in cfg.skill_directories:
            return True
        if self.scenario is None:
            return False
        if task.skill_directories is not None and not task.skill_directories:
            return True
        return not self.skill and not cfg.skill_directories and not task.skill_directories


@attrs.define
class RunEvidence:
    """Everything one agent run produced that a grader may judge."""

    output: str = ""
    transcript: list = attrs.field(factory=list)
    tool_calls: list = attrs.field(factory=list)
    tool_events: list | None = None
    host_lifecycle: dict | None = None
    command_invocations: list | None = None
    #: tool calls answered by the run's ``mcp_mocks`` (waza for Python only; see docs/mocks.md)
    mcp_invocations: list | None = None
    user_input_requests: list | None = None
    skill_invocations: list | None = None
    outcome: dict = attrs.field(factory=dict)
    duration_ms: int = 0
    usage: dict | None = None
    session_id: str | None = None
    error: str | None = None

    def context_json(self) -> dict[str, Any]:
        """The grading-context projection (version 1), as the program grader writes it."""
        return {
            "version": 1,
            "output": self.output,
            "outcome": self.outcome if self.outcome is not None else {},
            "transcript": self.transcript if self.transcript is not None else [],
            "tool_calls": self.tool_calls if self.tool_calls is not None else [],
            "tool_events": self.tool_events,
            "host_lifecycle": self.host_lifecycle,
            "command_invocations": self.command_invocations,
            "user_input_requests": self.user_input_requests,
            "duration_ms": int(self.duration_ms),
        } | ({"mcp_invocations": self.mcp_invocations} if self.mcp_invocations is not None else {})


@attrs.define
class GraderResult:
    """What one grader said about one run (the Go ``GraderResults`` shape)."""

    identifier: str
    type: str
    score: float
    passed: bool
    feedback: str = ""
    weight: float = 1.0
    details: dict = attrs.field(factory=dict)
    duration_ms: int = 0
    error: dict | None = None  # {"kind", "message"} when the grader could not judge
    #: fields of a saved result this version does not know, kept when a file is rewritten
    extra: dict = attrs.field(factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "identifier": self.identifier,
            "type": self.type,
            "score": self.score,
            "weight": self.weight,
            "passed": self.passed,
            "feedback": self.feedback,
            "details": self.details,
            "duration_ms": self.duration_ms,
        }
        if self.error is not None:
            out["error"] = self.error
        if self.extra:
            out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out
