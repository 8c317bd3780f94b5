"""``--max-spend``: a hard cap on what a suite run may spend, enforced before each run starts.

waza (Go) reports budgets but lets runs in flight overshoot them (microsoft/waza#584:
"asynchronous overshoot is not prevented"). Here a run is only *started* when

    spent so far + (runs in flight + 1) x worst-case cost of one run <= cap

so the total can never pass the cap, whatever the number of workers or the backend: the
check sits in front of the backend (:class:`BudgetBackend`), which hands the backend a unit
only when it passes. Units that never pass are recorded as runs with status ``n/a`` and
``skipped_for_budget: true``, the document is marked ``incomplete`` and carries a ``spend``
account, and ``waza run`` exits 1.

The numbers:

* the cost of a finished run is ``usage.cost_usd`` as the executor reported it (the ``cli``
  agent reads it from the agent's own report, ``usage_path`` or ``total_cost_usd`` of its
  event stream); a run served from the result cache cost nothing;
* the worst case of one run is ``--max-run-cost`` when given (a promise about the agent, e.g.
  its own ``--max-budget-usd``), else the most any finished run has cost so far; before any
  run has finished with a known cost, only one run is in flight at a time;
* a finished run whose cost is unknown is counted at the worst case when there is one; with no
  worst case at all nothing else starts (the cap could not be checked), and the account says so;
* runs a ``--resume`` takes from the journal count as spent, as if they had just finished.

Without ``--max-run-cost`` the guarantee rests on no run costing more than the dearest one
seen; with it, on no run costing more than it (a run that does is flagged ``over_max_run_cost``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import attrs

from waza_core.results.model import RunResult
from waza_core.run.backend import CompletedRun

_EPS = 1e-9  # float sums of cents must not refuse a run that fits exactly


def run_cost(run: RunResult) -> float | None:
    """What one finished run cost (USD), as its executor reported it; None when unknown."""
    if run.extra.get("cached") is True:
        return 0.0
    usage = run.usage if isinstance(run.usage, dict) else None
    if usage is None and isinstance(run.session_digest.usage, dict):
        usage = run.session_digest.usage
    value = (usage or {}).get("cost_usd")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


@attrs.define
class Budget:
    """The account of one suite run; safe to use from several threads."""

    max_spend: float
    max_run_cost: float | None = None
    spent: float = 0.0  # known costs, plus the worst case for each unknown one
    known_spent: float = 0.0
    in_flight: int = 0
    largest_seen: float | None = None
    unknown_cost_runs: int = 0
    skipped: int = 0
    over_run_cost: int = 0
    stopped_reason: str | None = None
    lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def worst_case(self) -> float | None:
        return self.max_run_cost if self.max_run_cost is not None else self.largest_seen

    def try_start(self) -> bool:
        """Reserve room for one more run; False when it could pass the cap."""
        with self.lock:
            if self.stopped_reason is not None:
                return False
            worst = self.worst_case()
            if worst is None:  # nothing known yet: one run at a time, while money is left
                ok = self.in_flight == 0 and self.spent < self.max_spend - _EPS
            else:
                ok = self.spent + (self.in_flight + 1) * worst <= self.max_spend + _EPS
            if ok:
                self.in_flight += 1
            return ok

    def finish(self, run: RunResult) -> None:
        """Account one finished run (started through :meth:`try_start`)."""
        cost = run_cost(run)
        with self.lock:
            self.in_flight -= 1
            if cost is None:
                self.unknown_cost_runs += 1
                worst = self.worst_case()
                if worst is None:
                    self.stopped_reason = ("a run's cost is unknown (its executor reported no cost_usd) and no "
                                           "worst case is known: the cap could not be checked")
                else:
                    self.spent += worst
                return
            self.spent += cost
            self.known_spent += cost
            if self.largest_seen is None or cost > self.largest_seen:
                self.largest_seen = cost
            if self.max_run_cost is not None and cost > self.max_run_cost + _EPS:
                self.over_run_cost += 1
                run.extra["over_max_run_cost"] = True

    def record_prior(self, run: RunResult) -> None:
        """Count a run finished by an earlier session of this suite run (``--resume``): its money
        was spent too, so it counts against the cap like a run finished now."""
        if run.extra.get("skipped_for_budget"):
            return
        with self.lock:
            self.in_flight += 1
        self.finish(run)

    def account(self) -> dict[str, Any]:
        """The ``spend`` entry of the results document."""
        return {
            "max_spend": self.max_spend,
            "max_run_cost": self.max_run_cost,
            "worst_case_source": "max_run_cost" if self.max_run_cost is not None else "largest_seen",
            "spent_usd": round(self.known_spent, 10),
            "charged_usd": round(self.spent, 10),
            "unknown_cost_runs": self.unknown_cost_runs,
            "runs_skipped": self.skipped,
            "runs_over_max_run_cost": self.over_run_cost,
            "stopped": self.skipped > 0,
            "reason": self.stopped_reason,
        }

    def skipped_run(self, trial: int) -> RunResult:
        self.skipped += 1
        why = self.stopped_reason or (f"--max-spend {self.max_spend:g} reached: spent {self.spent:.6g}, a run "
                                      f"could cost up to {self.worst_case() or 0:.6g}")
        return RunResult(run_number=trial, attempts=0, status="n/a", error_msg=f"skipped for budget: {why}",
                         extra={"skipped_for_budget": True})


class BudgetBackend:
    """A backend in front of another that starts a unit only when the budget allows it."""

    def __init__(self, inner: Any, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.todo: Iterator = iter(())
        self.submitted = 0

    def submit(self, units: Any) -> None:
        self.todo = itertools.chain(self.todo, units)

    def _admit(self) -> None:
        batch = []
        while True:
            unit = next(self.todo, None)
            if unit is None:
                break
            if not self.budget.try_start():
                self.todo = itertools.chain([unit], self.todo)
                break
            batch.append(unit)
        if batch:
            self.submitted += len(batch)
            self.inner.submit(batch)

    def results(self) -> Iterator:
        self._admit()
        if self.submitted:
            for done in self.inner.results():
                self.budget.finish(done.run)
                yield done
                self._admit()
        for unit in self.todo:  # what never fitted in the budget
            yield CompletedRun(unit, self.budget.skipped_run(unit.trial))
        self.todo = iter(())

    def cancel(self) -> int:
        dropped = sum(1 for _ in self.todo)
        self.todo = iter(())
        return dropped + (self.inner.cancel() if self.submitted else 0)

    def interrupt(self) -> None:
        self.todo = iter(())
        self.inner.interrupt()

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:  # local_runs and other backend attributes
        return getattr(self.inner, name)
