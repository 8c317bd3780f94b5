"""SuiteRecipe and prepare_suite: build a PreparedSuite and attach the features' preparers.

:class:`~waza_core.run.prepared.PreparedSuite` knows nothing of the features that
extend a run (hooks, inputs, mocks, checkpoints); :func:`prepare_suite` builds it and
then attaches their run preparers (:mod:`waza_core.run.preparers`), so the features
can import the prepared suite without the prepared suite importing them. A
:class:`SuiteRecipe` is how another process (a Ray worker) builds the same prepared
suite from plain values.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from waza_core.errors import WazaError
from waza_core.model import Suite, TaskSpec
from waza_core.plugins import get_registry
from waza_core.run.plan import RunOptions, RunPlan, make_plan
from waza_core.run.prepared import PreparedSuite, UnitSettings
from waza_core.run.preparers import run_preparers
from waza_core.suite.load import load_suite


def settings_for(plan: RunPlan, options: RunOptions) -> UnitSettings:
    """The :class:`UnitSettings` of a run of ``plan`` with ``options``."""
    return UnitSettings(
        executor=plan.executor_name, model=plan.model,
        context_dir=str(options.context_dir) if options.context_dir is not None else None,
        skill_directories=options.skill_directories, keep_workspaces=options.keep_workspaces,
        skip_graders=options.skip_graders, judge_model=options.judge_model,
        update_snapshots=options.update_snapshots, prices=options.prices,
    )


def check_before_running(suite: Suite, registry, options: RunOptions | None = None) -> PreparedSuite:
    """Everything a run of ``suite`` checks before its first run (tasks, executor, skills,
    graders, input files, the features' preparers), without the run loop: ``waza validate``.
    :class:`~waza_core.run.engine.Engine` does the same first; importing it (the run loop,
    the aggregator, the backends) was ~40% of a warm ``waza validate`` (cProfile)."""
    options = options or RunOptions()
    plan = make_plan(suite, registry, options)
    return prepare_suite(suite, registry, settings_for(plan, options), list(plan.tasks))


def prepare_suite(suite: Suite, registry, settings: UnitSettings, tasks: list[TaskSpec]) -> PreparedSuite:
    """The prepared suite of ``tasks``, with the run preparers of the features it uses."""
    prepared = PreparedSuite(suite, registry, settings, tasks)
    prepared.preparers = run_preparers(prepared)
    return prepared


@attrs.frozen
class SuiteRecipe:
    """How to rebuild a :class:`PreparedSuite` in another process: plain, picklable values."""

    suite_file: str
    plugins: tuple[str, ...]
    settings: UnitSettings
    task_ids: tuple[str, ...]

    def prepare(self) -> PreparedSuite:
        registry = get_registry(list(self.plugins))
        suite = load_suite(Path(self.suite_file), registry)
        by_id = {t.id: t for t in suite.tasks}
        missing = [i for i in self.task_ids if i not in by_id]
        if missing:
            raise WazaError(f"{self.suite_file}: the suite changed since the run started; "
                            f"task(s) {', '.join(missing)} are gone")
        return prepare_suite(suite, registry, self.settings, [by_id[i] for i in self.task_ids])
