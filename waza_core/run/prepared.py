"""The prepared suite: everything a run unit needs, built once per process.

A :class:`PreparedSuite` holds the executor, every grader, each task's loaded input
files and the run preparers. It is built from the suite, the plugin registry and the
:class:`UnitSettings` only (no driver state: no progress, no results, no backend), so
a worker process or another machine rebuilds the same thing from a
:class:`SuiteRecipe` (suite file + plugin list + settings) and runs units there.

Building it is where input problems surface: an unknown grader, a grader that cannot
be built, a missing or unreadable input file, a fixture folder outside the fixtures
folder. Each is a :class:`~waza_core.errors.WazaError` (exit 2) before the first run,
not a hundred failed runs.
"""

from __future__ import annotations

import os
import threading
from operator import attrgetter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from waza_core.cancel import CancelEvent
from waza_core.errors import WazaError
from waza_core.grading.base import Grader, GraderSetup
from waza_core.grading.build import build_grader, close_graders, executor_factory, grader_class, start_graders
from waza_core.model import Suite, TaskSpec
from waza_core.paths import PathEscape, display_path, resolve_inside
from waza_core.results.console import get_console
from waza_core.run.execution import Executor

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported by start() only (see there)
    from waza_core.run.workspaces import Workspaces

#: after an interrupt, how long the attempts in flight get to finish their cleanups
STOP_GRACE_SECONDS = 10.0


@attrs.frozen
class UnitSettings:
    """The options that change what one run does (and nothing about scheduling)."""

    executor: str
    model: str = ""
    context_dir: str | None = None
    skill_directories: tuple[str, ...] | None = None  # overrides suite and task lists
    keep_workspaces: bool = False
    skip_graders: bool = False
    judge_model: str | None = None  # --judge-model; else config.judge_model
    update_snapshots: bool = False
    #: the price table (:mod:`waza_core.run.prices`) of runs that report tokens but no cost
    prices: Any = None


@attrs.frozen
class TaskInputs:
    """A task's inputs, read once: (relative path, content) files and a fixture folder to copy."""

    files: tuple[tuple[str, str], ...] = ()
    fixture: Path | None = None


NO_INPUTS = TaskInputs()  # shared by every task without files or fixture


def _warn_on_console(message: str) -> None:
    get_console().warning(message)


class PreparedTask:
    """What the runs of one task need, built once.

    A task whose own graders are all ``built_per_run`` keeps none: ``own_graders`` is
    None and :attr:`graders` builds them for each attempt (see ``Grader.built_per_run``)."""

    __slots__ = ("task", "own_graders", "global_graders", "inputs", "needs_workspace", "position", "_build")

    def __init__(self, task: TaskSpec, own_graders: Sequence[Grader] | None, global_graders: Sequence[Grader],
                 inputs: TaskInputs, needs_workspace: bool, position: int = 0,
                 build: Callable[[TaskSpec], tuple[Grader, ...]] | None = None) -> None:
        self.position = position  # the task's index in the plan (and in the results file)
        self.task = task
        self.own_graders = own_graders
        self.global_graders = global_graders
        self.inputs = inputs
        self.needs_workspace = needs_workspace
        self._build = build

    @property
    def graders(self) -> Sequence[Grader]:
        """Global graders first, then the task's own (the order of the results)."""
        own = self.own_graders
        if own is None:
            assert self._build is not None
            own = self._build(self.task)
        glob = self.global_graders
        return [*glob, *own] if own and glob else own or glob


class _MadeTask(PreparedTask):
    """The record of a bare task, made for one access: a change to it would be lost, so it
    refuses one (:meth:`PreparedTasks.keep` gives the record to change)."""

    __slots__ = ()

    @staticmethod
    def made(record: PreparedTask) -> PreparedTask:
        """``record``, made as any other, now of this class (``__class__`` set: its ``__init__``
        would meet the refusal; set field by field it took six times as long)."""
        record.__class__ = _MadeTask
        return record

    def __setattr__(self, name: str, value: Any) -> None:
        self._refuse()

    def __delattr__(self, name: str) -> None:
        self._refuse()

    def _refuse(self) -> None:
        task = getattr(getattr(self, "task", None), "id", "?")
        raise AttributeError(f"the record of task {task!r} is made on each access, so a change to it would "
                             f"be lost: change it through PreparedSuite.by_id.keep({task!r})")

    def __reduce__(self) -> tuple:
        """A copy is made as the record was (``copy`` would set the fields one by one)."""
        return _MadeTask.made, (PreparedTask(self.task, None, self.global_graders, NO_INPUTS, self.needs_workspace,
                                             self.position, self._build),)


class PreparedTasks(Mapping):
    """Task id -> :class:`PreparedTask`, in plan order.

    A *bare* task (no input files or fixture, own graders all built per run, the workspace
    need of its kind of graders) keeps no object: its ``PreparedTask`` is made when asked for
    (a fraction of a microsecond, once per run). Kept, the objects were 88 B a task, 9 MB of a
    100,000-task run. Change a task's record through :meth:`keep` only."""

    __slots__ = ("tasks", "positions", "kept", "_bare_workspace", "_global_graders", "_build")

    def __init__(self, tasks: Sequence[TaskSpec], global_graders: Sequence[Grader],
                 build: Callable[[TaskSpec], tuple[Grader, ...]]) -> None:
        self.tasks = tasks  # in plan order
        #: task id -> its position in the plan (and in the results file): read it, do not change it
        self.positions: dict[str, int] = {}
        #: position -> the record of a task that is not bare
        self.kept: dict[int, PreparedTask] = {}
        self._bare_workspace = bytearray(len(tasks))  # whether a bare task needs a workspace
        self._global_graders = global_graders
        self._build = build

    def add_bare(self, position: int, needs_workspace: bool) -> None:
        self._place(self.tasks[position].id, position)
        self._bare_workspace[position] = needs_workspace

    def add(self, prepared: PreparedTask) -> None:
        self._place(prepared.task.id, prepared.position)
        self.kept[prepared.position] = prepared

    def _place(self, task_id: str, position: int) -> None:
        """Map ``task_id`` to ``position``; an earlier task of the same id is forgotten, as a
        dict forgets the value it replaces."""
        earlier = self.positions.get(task_id)
        if earlier is not None:
            self.kept.pop(earlier, None)
        self.positions[task_id] = position

    def _at(self, position: int) -> PreparedTask:
        kept = self.kept.get(position)
        return kept if kept is not None else _MadeTask.made(self._bare(position))

    def _bare(self, position: int) -> PreparedTask:
        """A new record of the bare task at ``position``."""
        return PreparedTask(self.tasks[position], None, self._global_graders, NO_INPUTS,
                            bool(self._bare_workspace[position]), position, self._build)

    def __getitem__(self, task_id: str) -> PreparedTask:
        return self._at(self.positions[task_id])

    def keep(self, task_id: str) -> PreparedTask:
        """The record of ``task_id``, kept from now on: what a run preparer changes in it
        (``needs_workspace``) reaches every run of the task."""
        position = self.positions[task_id]
        kept = self.kept.get(position)
        if kept is None:
            kept = self.kept[position] = self._bare(position)
        return kept

    def __iter__(self) -> Iterator[str]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)

    def task_specs(self) -> Iterator[TaskSpec]:
        """Each task once, in plan order (a task id listed twice: its last entry, as in a dict)."""
        tasks = self.tasks
        for position in self.positions.values():
            yield tasks[position]


class _TaskSpecs(Mapping):
    """Task id -> TaskSpec, a read-only view of :class:`PreparedTasks` (no record made)."""

    __slots__ = ("by_id",)

    def __init__(self, by_id: PreparedTasks) -> None:
        self.by_id = by_id

    def __getitem__(self, task_id: str) -> TaskSpec:
        return self.by_id.tasks[self.by_id.positions[task_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id.positions)

    def __len__(self) -> int:
        return len(self.by_id.positions)

    def values(self):  # type: ignore[override]  # the tasks themselves, not a view made per key
        return list(self.by_id.task_specs())


class _TaskInputsView(Mapping):
    """Task id -> TaskInputs, a read-only view of :class:`PreparedTasks`."""

    __slots__ = ("by_id",)

    def __init__(self, by_id: PreparedTasks) -> None:
        self.by_id = by_id

    def __getitem__(self, task_id: str) -> TaskInputs:
        kept = self.by_id.kept.get(self.by_id.positions[task_id])
        return NO_INPUTS if kept is None else kept.inputs

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id.positions)

    def __len__(self) -> int:
        return len(self.by_id.positions)


#: a grader spec's type (``map`` over a task's graders: once per task of a 100,000-task suite)
_grader_type = attrgetter("type")


class PreparedSuite:
    """Executor, graders, inputs and run preparers of one suite run, in one process."""

    def __init__(self, suite: Suite, registry, settings: UnitSettings, tasks: list[TaskSpec]) -> None:
        self.suite = suite
        self.registry = registry
        self.settings = settings
        executor_cls = registry.get("executor", settings.executor)
        if executor_cls is None:
            raise WazaError(registry.unknown("executor", settings.executor))
        options = suite.config.extra.get(executor_cls.config_key, {}) if executor_cls.config_key else {}
        self.executor: Executor = executor_cls(suite, dict(options))
        self.global_graders = [build_grader(s, suite, registry) for s in suite.graders]
        build_own = self._build_own
        #: task id -> what its runs need (a bare task keeps no record: :class:`PreparedTasks`)
        self.by_id = PreparedTasks(tasks, self.global_graders, build_own)
        #: grader type -> class, of the graders built for each attempt
        self._per_run_classes: dict[str, type[Grader]] = {}
        #: the grader types of a task -> their classes, whether all are built per run, and
        #: whether a task with them and no inputs needs a workspace: looked up once per
        #: kind of task, not once per task of a 100,000-task suite
        kinds: dict[tuple[str, ...], tuple[list[type[Grader]], bool, bool]] = {}
        for position, t in enumerate(tasks):
            if t.files or (t.has_context and isinstance(t.context.get("fixture"), str)):
                inputs = load_inputs(t, self.fixtures_dir(t), self.inputs_root(t), suite.dir)
            else:  # nothing to read: no folder to resolve (a resolve is a system call per level)
                inputs = NO_INPUTS
            kind = tuple(map(_grader_type, t.graders))
            known = kinds.get(kind)
            if known is None:
                known = kinds[kind] = self._grader_kind(t)  # an unknown type fails here
            classes, per_run, bare_needs_workspace = known
            if per_run and inputs is NO_INPUTS:
                self.by_id.add_bare(position, bare_needs_workspace)
                continue
            if per_run:
                own = None  # built for each attempt (PreparedTask.graders)
                needs_workspace = self._needs_workspace(inputs, [*self.global_graders, *classes])
            else:  # tuples: the one shared () for a task without graders of its own
                own = tuple([build_grader(s, suite, registry, c) for s, c in zip(t.graders, classes, strict=True)])
                needs_workspace = self._needs_workspace(inputs, [*self.global_graders, *own])
            self.by_id.add(PreparedTask(t, own, self.global_graders, inputs, needs_workspace, position, build_own))
        #: task id -> TaskSpec, TaskInputs, position in the plan (read-only views of ``by_id``)
        self.tasks: Mapping[str, TaskSpec] = _TaskSpecs(self.by_id)
        self.inputs: Mapping[str, TaskInputs] = _TaskInputsView(self.by_id)
        self.positions: Mapping[str, int] = self.by_id.positions
        #: setting it also kills every running child process group of this process, and
        #: stops every grading call of this suite in progress (waza_core.grading.deadline)
        self.cancel = CancelEvent()
        self.cancel._subscribe(self._stop_grading)
        #: graders that features add (checkpoint graders): started and closed with the others
        self.extra_graders: list[Grader] = []
        #: the features' run preparers, attached by :func:`waza_core.run.recipe.prepare_suite`
        self.preparers: list[Callable] = []
        self.workspaces: Workspaces | None = None  # from start() to close()
        self._in_flight = 0  # attempts running in this process (see wait_idle)
        self._flight = threading.Condition()  # notified when _in_flight drops to 0
        self._idle_waiters = 0  # threads in wait_idle (changed only under _flight)
        self._count_lock = threading.Lock()
        self.started = False  # the executor started: close() must shut it down
        #: how a feature reports a problem of one run that does not stop it (``waza: warning:``
        #: on the console, after the progress lines it holds back, the text escaped)
        self.warn: Callable[[str], None] = _warn_on_console

    def attempt_started(self) -> None:
        with self._count_lock:
            self._in_flight += 1

    def attempt_ended(self) -> None:
        with self._count_lock:
            self._in_flight -= 1
            idle = self._in_flight == 0
        # the condition only when someone waits (a sequential run is idle after every
        # attempt): a waiter counted after this read sees _in_flight == 0 before it waits
        if idle and self._idle_waiters:
            with self._flight:
                self._flight.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no attempt runs in this process; False when ``timeout`` passed first."""
        with self._flight:
            self._idle_waiters += 1
            try:
                return self._flight.wait_for(lambda: self._in_flight == 0, timeout)
            finally:
                self._idle_waiters -= 1

    def _stop_grading(self) -> None:
        # deferred: waza_core.grading adds ~3.3 ms to importing this module
        from waza_core.grading import deadline

        deadline.cancel_all(self.cancel)

    # -- what a run of a task sees ------------------------------------------------------
    def graders_of(self, task_id: str) -> Sequence[Grader]:
        """Global graders first, then the task's own (the order of the results)."""
        return self.by_id[task_id].graders

    def _grader_kind(self, task: TaskSpec) -> tuple[list[type[Grader]], bool, bool]:
        """The classes of ``task``'s graders, whether all are built per run (then kept by type
        for :meth:`_build_own`), and, if so, whether a task with them and no inputs needs a
        workspace (a grader built per run says at class level whether it reads it)."""
        classes = [grader_class(s, self.registry) for s in task.graders]
        if not all([c.built_per_run for c in classes]):
            return classes, False, True
        for spec, cls in zip(task.graders, classes, strict=True):
            self._per_run_classes[spec.type] = cls
        return classes, True, self._needs_workspace(NO_INPUTS, [*self.global_graders, *classes])

    def _build_own(self, task: TaskSpec) -> tuple[Grader, ...]:
        """A task's own graders, for one attempt (all of them ``built_per_run``)."""
        classes, suite, registry = self._per_run_classes, self.suite, self.registry
        return tuple([build_grader(s, suite, registry, classes[s.type]) for s in task.graders])

    def all_graders(self) -> list[Grader]:
        """Every grader kept for the suite run (those built per run are not: they have no
        ``start`` or ``close``)."""
        kept = [g for p in self.by_id.kept.values() if p.own_graders for g in p.own_graders]  # a bare task has none
        return self.global_graders + kept + self.extra_graders

    def fixtures_dir(self, task: TaskSpec) -> Path:
        if task.context_dir:
            return Path(task.context_dir).absolute()
        if self.settings.context_dir is not None:
            return Path(self.settings.context_dir).absolute()
        return self.suite.dir / "fixtures"

    def inputs_root(self, task: TaskSpec) -> Path:
        """What input files must stay inside once links are resolved: the fixtures folder
        a user named (``context_dir``, ``--context-dir``), else the suite's folder (so a
        ``fixtures`` link out of the suite cannot read files from elsewhere)."""
        if task.context_dir or self.settings.context_dir is not None:
            return self.fixtures_dir(task).resolve()
        return self.suite.dir.resolve()

    def skill_directories(self, task: TaskSpec) -> tuple[str, ...]:
        skills = self.settings.skill_directories
        if skills is None:
            skills = task.skill_directories if task.skill_directories is not None else \
                self.suite.config.skill_directories
        return tuple(skills)

    def _needs_workspace(self, inputs: TaskInputs, graders: Sequence[Grader | type[Grader]]) -> bool:
        """Whether a run of a task can observe its workspace at all.

        A workspace with no files, no fixture, read by neither the executor nor any
        grader (each declares ``needs_workspace``; plugins default to True) cannot be
        seen by anyone, so making and removing an empty folder would be pure cost.
        """
        return bool(self.settings.keep_workspaces or inputs.files or inputs.fixture is not None
                    or self.executor.needs_workspace or any([g.needs_workspace for g in graders]))

    # -- lifetime -------------------------------------------------------------------
    def start(self) -> None:
        """Start the workspace janitor, the executor, then every grader once (where runs happen).

        When the executor cannot start, nothing is left running; after a grader
        fails to start, :meth:`close` closes every grader and the executor."""
        # deferred: tempfile, shutil and queue only where runs happen (not `waza validate`)
        from waza_core.run.workspaces import Workspaces

        self.workspaces = Workspaces(keep=self.settings.keep_workspaces)
        self.executor.model = self.settings.model  # so start() can check the model once, not per run
        try:
            self.executor.start()
        except BaseException:
            self.workspaces.close()
            self.workspaces = None
            raise
        self.started = True
        start_graders(self.all_graders(), self.grader_setup())

    def close(self) -> None:
        """Close every grader, shut the executor down, and wait until every used
        workspace is removed, also after a failure. After an interrupt the attempts still
        in flight (told to stop: child groups killed, graders cancelled, executor shut
        down) get :data:`STOP_GRACE_SECONDS` to clean up their workspaces and grading
        context folders first."""
        try:
            if self.started:
                self.started = False
                try:
                    close_graders(self.all_graders())
                finally:
                    self.executor.shutdown()
        finally:
            if self.cancel.is_set():
                self.wait_idle(STOP_GRACE_SECONDS)
            if self.workspaces is not None:
                self.workspaces.close()
                self.workspaces = None

    def grader_setup(self) -> GraderSetup:
        judge = self.settings.judge_model
        if judge is None:
            judge = self.suite.config.judge_model
        return GraderSetup(judge_model=judge, model=self.settings.model, executor=self.settings.executor,
                           update_snapshots=self.settings.update_snapshots,
                           new_executor=executor_factory(self.suite, self.registry), cancel=self.cancel)


def load_inputs(task: TaskSpec, base: Path, root: Path | None = None, suite_dir: Path | None = None) -> TaskInputs:
    """Read a task's input files; every problem is a config error now, not later.

    With ``root``, a file that resolves (through symbolic links) outside it is refused,
    as ``inputs.prompt_file`` is. ``inputs.context.fixture`` is looked up in ``suite_dir``
    first, then in ``base`` (see :func:`_find_fixture`).
    """
    problems, files = [], []
    for f in task.files:
        rel = Path(f.path)
        if rel.is_absolute() or ".." in rel.parts:
            problems.append(f"inputs.files path {f.path!r} must be relative, without '..'")
            continue
        if f.content is not None:
            files.append((f.path, f.content))
            continue
        src = base / rel
        if root is not None and not _inside(src, root):
            problems.append(f"inputs.files path {f.path!r}: {src} leaves {root} through a symbolic link")
            continue
        if _special(src):
            problems.append(f"cannot read input file {src}: it is not a regular file")
            continue
        try:
            files.append((f.path, src.read_text("utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            problems.append(f"cannot read input file {src}: {reason}")
    fixture = None
    name = task.context.get("fixture")
    if isinstance(name, str):
        fixture, problem = _find_fixture(name, suite_dir, base)
        if problem:
            problems.append(problem)
    if problems:

        raise WazaError(f"task {task.id!r} ({display_path(task.filename)}): " + "; ".join(problems))
    return TaskInputs(tuple(files), fixture) if files or fixture is not None else NO_INPUTS


def _inside(path: Path, root: Path) -> bool:
    target = path.resolve()
    return target == root or target.is_relative_to(root)


def _special(path: Path) -> bool:
    """A FIFO or device: reading it could block for ever or never end."""
    # deferred: waza_core.safe_write adds ~1.0 ms to importing this module
    from waza_core.safe_write import is_special

    return is_special(path)


def _find_fixture(name: str, suite_dir: Path | None, base: Path) -> tuple[Path | None, str | None]:
    """``inputs.context.fixture``: a file or folder, relative to the suite's folder (as in
    waza Go since v0.33: ``fixture: fixtures/demo``), else to the fixtures folder; it
    must stay inside that folder once links are resolved. (fixture, problem)."""

    if os.path.isabs(name) or ".." in Path(name).parts:
        return None, (f"inputs.context.fixture {name!r} must be relative to the suite's folder (or the fixtures "
                      "folder), without '..'")
    tried = []
    for root in ([suite_dir] if suite_dir is not None else []) + [base]:
        try:
            candidate = resolve_inside(root, name)
        except PathEscape as exc:
            return None, f"inputs.context.fixture {name!r}: {exc}"
        tried.append(str(root / name))
        if candidate.is_dir():
            if not os.access(candidate, os.R_OK | os.X_OK):
                return None, f"inputs.context.fixture {name!r}: directory {candidate} is not readable"
            return candidate, None
        if candidate.is_file():
            if not os.access(candidate, os.R_OK):
                return None, f"inputs.context.fixture {name!r}: file {candidate} is not readable"
            return candidate, None
    return None, f"inputs.context.fixture {name!r}: no such file or directory ({' or '.join(tried)})"

