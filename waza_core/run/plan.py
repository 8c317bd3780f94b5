"""Planning a suite run: which tasks, how many trials, which model; the list of run units.

This is the first stage of the run flow (see :mod:`waza_core.run.engine`)::

    plan  ->  prepare  ->  backend (run units)  ->  aggregate  ->  results / reporters

Everything here runs on the driver before the first run and fails fast with a
:class:`~waza_core.errors.WazaError` (exit 2): no task matches the filters, an unknown
executor, a required skill missing.  A :class:`RunUnit` is the plain description of
one run that a backend ships to wherever runs happen.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs

from waza_core.errors import WazaError
from waza_core.model import Suite, TaskSpec
from waza_core.paths import display_path

if TYPE_CHECKING:
    from waza_core.results.model import TaskResult


@attrs.define
class RunOptions:
    """What the caller (``waza run``, the optimizer, a notebook) asks of one suite run.

    ``None`` means "as the suite's config says"."""

    executor: str | None = None
    model: str | None = None
    trials: int | None = None
    parallel: bool | None = None
    workers: int | None = None
    task_globs: list[str] = attrs.field(factory=list)
    tag_globs: list[str] = attrs.field(factory=list)
    task_ids: list[str] | None = None  # exact ids (the optimizer's splits)
    context_dir: Path | None = None
    skill_directories: tuple[str, ...] | None = None  # overrides suite and task lists
    keep_workspaces: bool = False
    skip_graders: bool = False
    fail_fast: bool | None = None
    judge_model: str | None = None  # --judge-model; else config.judge_model
    update_snapshots: bool = False
    backend: str = "local"
    #: settings of the backend (``ray``: ``address``, ``workers``); see :class:`~waza_core.run.backend.BackendJob`
    backend_options: dict = attrs.field(factory=dict)
    #: keep every finished task for the returned document; False when the caller streams
    #: them from ``on_task_done`` (the document then has the summary but no tasks)
    keep_tasks: bool = True
    #: called on the driver as each task finishes: (finished count, task count, task entry)
    on_task_done: Callable[[int, int, TaskResult], None] | None = None
    #: called with each warning of the run (a hook that failed without error_on_fail)
    on_warning: Callable[[str], None] | None = None
    #: ``--max-spend``: a :class:`waza_core.run.budget.Budget` shared by every suite run of
    #: one ``waza run`` (models, A/B passes); None = no cap
    budget: Any = None
    #: a :class:`waza_core.run.prices.PriceTable`: a run whose executor reported tokens or AI
    #: credits but no cost gets its cost from it; None = no pricing
    prices: Any = None


class RunUnit(NamedTuple):
    """One run to do: a plain, picklable value; all a backend ships besides the suite.

    (A named tuple: a 100,000-task plan makes 100,000 of them, and a tuple is built
    several times faster than a frozen attrs instance.)"""

    task_id: str
    trial: int  # 1-based; the run's ``run_number``
    model: str
    #: attempt policy: a ``failed`` run is tried again up to this many times in all
    max_attempts: int = 1


@attrs.frozen
class RunPlan:
    """The decisions of one suite run, before anything is built."""

    tasks: tuple[TaskSpec, ...]
    trials: int
    model: str
    executor_name: str
    parallel: bool
    workers: int
    fail_fast: bool
    max_attempts: int

    def units(self) -> Iterator[RunUnit]:
        """Every run, task by task then trial by trial (the order of a sequential run),
        made as they are asked for."""
        model, attempts, trials = self.model, self.max_attempts, range(1, self.trials + 1)
        return (RunUnit(t.id, trial, model, attempts) for t in self.tasks for trial in trials)


def make_plan(suite: Suite, registry, options: RunOptions) -> RunPlan:
    """Select the tasks and settle trials, model, executor and concurrency."""
    cfg = suite.config
    tasks = select_tasks(suite, options)
    trials = options.trials or cfg.trials_per_task
    if trials < 1:
        raise WazaError("--trials must be at least 1")
    executor_name = options.executor or cfg.executor
    if registry.get("executor", executor_name) is None:

        where = "--executor" if options.executor else f"{display_path(suite.file)}: config.executor"
        raise WazaError(f"{where}: {registry.unknown('executor', executor_name)}")
    check_required_skills(suite, options.skill_directories)
    workers = cfg.workers if options.workers is None else options.workers
    return RunPlan(
        tasks=tuple(tasks),
        trials=trials,
        model=options.model if options.model is not None else cfg.model,
        executor_name=executor_name,
        parallel=cfg.parallel if options.parallel is None else options.parallel,
        workers=workers if workers > 0 else (os.cpu_count() or 4),
        fail_fast=cfg.fail_fast if options.fail_fast is None else options.fail_fast,
        max_attempts=cfg.max_attempts,
    )


def check_required_skills(suite: Suite, override: tuple[str, ...] | None) -> None:
    """``config.required_skills``: each must be a folder with a SKILL.md in a skill directory."""
    need = suite.config.required_skills
    if not need:
        return
    dirs = override if override is not None else suite.config.skill_directories
    if not dirs:
        raise WazaError(f"config.required_skills is set ({', '.join(need)}) but config.skill_directories is empty")
    missing = [n for n in need if not any((Path(d) / n / "SKILL.md").is_file() or
                                          (Path(d).name == n and (Path(d) / "SKILL.md").is_file()) for d in dirs)]
    if missing:
        raise WazaError(f"required skill(s) not found in config.skill_directories ({', '.join(dirs)}): "
                        f"{', '.join(missing)}")


def select_tasks(suite: Suite, options: RunOptions) -> list[TaskSpec]:
    tasks = list(suite.tasks)
    if options.task_ids is not None:
        wanted = set(options.task_ids)
        tasks = [t for t in tasks if t.id in wanted]
    if options.task_globs:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, g) or fnmatch.fnmatchcase(t.name, g)
                                         for g in options.task_globs)]
    if options.tag_globs:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(tag, g) for tag in t.tags for g in options.tag_globs)]
    if not tasks:
        filters = [f"--task {g}" for g in options.task_globs] + [f"--tags {g}" for g in options.tag_globs]
        raise WazaError("no task to run" + (f": nothing matches {' '.join(filters)}" if filters else ""))
    return tasks
