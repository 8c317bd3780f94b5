"""--max-spend in front of the Ray backend (the scheduling logic against the stand-in for Ray
of test_ray_backend_logic.py): a run is dispatched only while spent + in flight x worst case
fits the cap, runs come back in any order, and the rest are skipped for budget."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from tests.run.test_ray_backend_logic import FakeRay, Ref, backend_on, units
from waza_core.results.model import RunResult
from waza_core.run.budget import Budget, BudgetBackend


class CostlyRay(FakeRay):
    """Each run reports a cost; dispatched runs finish in a shuffled order, a few at a time."""

    def __init__(self, costs, rnd, **kw):
        super().__init__(**kw)
        self.costs, self.rnd, self.dispatched = costs, rnd, 0

    def remote_class(self):
        base = super().remote_class()
        ray = self

        class ActorClass:
            def remote(self):
                actor = base.remote()

                def run(unit):
                    ray.dispatched += 1
                    return Ref(RunResult(run_number=unit.trial, attempts=1, status="passed",
                                         usage={"cost_usd": ray.costs[unit.task_id]}))

                actor.run = SimpleNamespace(remote=run)
                return actor

        return ActorClass()

    def wait(self, refs, num_returns=1, timeout=None, fetch_local=True):
        refs = list(refs)
        self.rnd.shuffle(refs)
        return refs[:num_returns], refs[num_returns:]


class WatchedBudget(Budget):
    """A budget that checks its own invariant at every start."""

    def try_start(self) -> bool:
        ok = super().try_start()
        if ok:
            assert self.spent + self.in_flight * self.worst_case() <= self.max_spend + 1e-9
        return ok


@pytest.mark.parametrize("seed", range(20))
def test_ray_runs_never_pass_the_cap(seed):
    rnd = random.Random(seed)
    n = rnd.randint(5, 40)
    costs = {f"t{i}": round(rnd.uniform(0.05, 0.25), 3) for i in range(n)}
    cap = round(rnd.uniform(0.3, 4.0), 2)
    fake = CostlyRay(costs, rnd, cpus=rnd.choice([2, 4, 8]))
    inner = backend_on(fake, [])
    inner._start = lambda: None  # no cluster: the stand-in answers
    budget = WatchedBudget(cap, 0.25)
    b = BudgetBackend(inner, budget)
    b.submit(units(n))
    done = list(b.results())
    assert sorted(d.unit.task_id for d in done) == sorted(costs)  # every unit once: run or skipped
    ran = [d for d in done if d.run.status == "passed"]
    spent = sum(costs[d.unit.task_id] for d in ran)
    assert spent <= cap + 1e-9 and fake.dispatched == len(ran)
    assert budget.known_spent == pytest.approx(spent)
    skipped = [d for d in done if d.run.extra.get("skipped_for_budget")]
    assert len(skipped) == n - len(ran) == budget.skipped
    if cap >= 0.25 * n:
        assert not skipped  # enough money for everything: nothing held back
