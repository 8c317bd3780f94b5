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
from waza_core.run.prepared import PreparedSuite, UnitSettings
from waza_core.run.preparers import run_preparers
from waza_core.suite.load import load_suite


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
