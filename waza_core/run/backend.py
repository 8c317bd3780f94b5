"""The backend interface: where and when run units run.

The driver (:class:`waza_core.run.engine.Engine`) hands a backend the units of a
plan and reads the results back as they finish; the backend decides the
concurrency and the place. Two calls carry the whole protocol:

- :meth:`Backend.submit` takes run units (plain :class:`~waza_core.run.plan.RunUnit`
  values);
- :meth:`Backend.results` yields a :class:`CompletedRun` per unit as it finishes, in
  finishing order, until every submitted unit is done or cancelled.

and two more stop it: :meth:`Backend.cancel` (fail-fast: runs not started are
dropped, runs in flight finish and are still yielded) and :meth:`Backend.interrupt`
(Ctrl-C: stop everything now, in-flight runs are killed). :meth:`Backend.close` is
always called last.

A backend gets a :class:`BackendJob`: the driver's own
:class:`~waza_core.run.prepared.PreparedSuite` (for runs in this process) and its
:class:`~waza_core.run.recipe.SuiteRecipe` (for runs elsewhere: a remote worker
rebuilds the prepared suite from it once, then calls
:func:`waza_core.run.unit.run_unit` for each unit it gets, with its own ``worker``
name). Retries of ``failed`` runs (``max_attempts``) happen inside the unit; a backend
that loses a unit with its machine submits it again, and yields it once.

Backends are picked by name with :func:`waza_core.run.backends.make_backend` (``--backend``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, NamedTuple

import attrs

from waza_core.results.model import RunResult
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite
from waza_core.run.recipe import SuiteRecipe


@attrs.frozen
class BackendJob:
    """What a backend needs to run the units of one suite run."""

    prepared: PreparedSuite
    #: None when the suite was not loaded from a file with a known plugin list (an
    #: optimizer candidate, a test): only in-process backends can run it
    recipe: SuiteRecipe | None
    parallel: bool
    workers: int  # the cap on concurrent runs
    #: backend-specific settings (``ray``: ``address``, ``workers`` as given on the command line)
    options: Mapping[str, Any] = attrs.field(factory=dict)
    #: the driver does not need each run before the next one starts (no fail-fast, no
    #: ``after_task`` hook, no spending cap, no run observer, no result cache: see
    #: ``Engine._run``): a backend may hand fast runs over a few at a time, and give those it
    #: still holds at an interrupt through :meth:`Backend.take_finished` (``run/local.py``)
    batch_finished: bool = False


class CompletedRun(NamedTuple):
    """A finished unit and its run, as a backend yields them."""

    unit: RunUnit
    run: RunResult


class Backend:
    """Base class of backends. Subclasses set ``name`` and implement the five calls."""

    name: ClassVar[str] = ""
    #: runs happen in this process, on the driver's PreparedSuite (the driver starts it);
    #: False: elsewhere (each worker builds and starts its own)
    local_runs: ClassVar[bool] = True

    def __init__(self, job: BackendJob) -> None:
        self.job = job

    def submit(self, units: Iterable[RunUnit]) -> None:  # pragma: no cover - interface
        """Take units to run (an iterable: a backend may take them as it needs them)."""
        raise NotImplementedError

    def results(self) -> Iterator[CompletedRun]:  # pragma: no cover - interface
        raise NotImplementedError

    def cancel(self) -> int:  # pragma: no cover - interface
        """Drop the units not started yet; return how many units were still outstanding
        (not yet yielded), started or not."""
        raise NotImplementedError

    def interrupt(self) -> None:  # pragma: no cover - interface
        """Stop now: drop what has not started and kill what runs."""
        raise NotImplementedError

    def take_finished(self) -> list[CompletedRun]:
        """The runs that finished but were not yielded yet (a backend that hands runs over in
        batches, whose reader stopped in the middle of one at an interrupt); they are the
        caller's now. None by default: a backend that yields each run as it ends holds none."""
        return []

    def close(self) -> None:
        """Release threads, processes and connections; called once, last, always."""
