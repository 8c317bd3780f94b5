"""The ray backend's scheduling and fault logic against a stand-in for Ray (no cluster):
pool size, retries of lost runs up to max_attempts, each run yielded once, errors.
test_ray_cluster.py runs the same code on a real cluster."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from waza_core.errors import WazaError
from waza_core.results.model import RunResult
from waza_core.run.backend import BackendJob
from waza_core.run.plan import RunUnit
from waza_core.run.ray_backend import RayBackend


class RayError(Exception):
    pass


class RayTaskError(RayError):
    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


class ActorDiedError(RayError):
    pass


class Ref:
    def __init__(self, value=None, exc=None):
        self.value, self.exc = value, exc


class FakeActor:
    def __init__(self, ray, node):
        self.ray, self.node, self.dead = ray, node, False
        self.setup = SimpleNamespace(remote=lambda spec, box: Ref((node, ray.setup_problem)))
        self.run = SimpleNamespace(remote=self._run)
        self.close = SimpleNamespace(remote=lambda: Ref(None))
        self.interrupt = SimpleNamespace(remote=lambda: Ref(None))

    def _run(self, unit):
        self.ray.calls.append((unit.task_id, id(self)))
        if self.dead or self.ray.lose(unit, self.node):
            self.dead = True
            return Ref(exc=ActorDiedError("The actor died unexpectedly before finishing this task."))
        if unit.task_id == "boom":
            return Ref(exc=RayTaskError(WazaError("cannot fill the workspace")))
        return Ref(RunResult(run_number=unit.trial, attempts=1, status="passed", worker=self.node))


class FakeRay:
    """Every call is ready at once; ``lose(unit, node)`` says which calls die with their actor."""

    exceptions = SimpleNamespace(RayError=RayError, RayTaskError=RayTaskError)

    def __init__(self, cpus=4, lose=lambda unit, node: False, setup_problem=None):
        self.cpus, self.lose, self.setup_problem = cpus, lose, setup_problem
        self.actors: list[FakeActor] = []
        self.calls: list[tuple[str, int]] = []
        self.killed = 0

    def cluster_resources(self):
        return {"CPU": float(self.cpus)}

    def nodes(self):
        return [{"NodeID": f"node-{i}", "Alive": True} for i in range(2)]

    def wait(self, refs, num_returns=1, timeout=None, fetch_local=True):
        return list(refs)[:num_returns], list(refs)[num_returns:]

    def get(self, ref):
        if ref.exc is not None:
            raise ref.exc
        return ref.value

    def kill(self, actor, no_restart=True):
        self.killed += 1

    def remote_class(self):
        ray = self

        class ActorClass:
            def remote(self):
                actor = FakeActor(ray, f"node-{len(ray.actors) % 2}")
                ray.actors.append(actor)
                return actor

        return ActorClass()


def backend_on(fake: FakeRay, units, workers=None) -> RayBackend:
    job = BackendJob(prepared=SimpleNamespace(cancel=threading.Event()), recipe=object(), parallel=True,
                     workers=4, options={"address": "127.0.0.1:1", "workers": workers})
    b = RayBackend(job)
    b.ray, b.actor_class, b.log = fake, fake.remote_class(), SimpleNamespace(warning=lambda *a, **k: None)
    b.submit(units)
    return b


def units(n, max_attempts=1):
    return [RunUnit(f"t{i}", 1, "m", max_attempts) for i in range(n)]


def test_pool_follows_the_cpus_capped_by_workers_and_the_work_left():
    fake = FakeRay(cpus=8)
    done = list(backend_on(fake, units(10), workers=3)._loop())
    assert len(done) == 10 and len(fake.actors) == 3
    fake = FakeRay(cpus=8)
    list(backend_on(fake, units(5))._loop())
    assert len(fake.actors) == 5  # no more actors than runs
    fake = FakeRay(cpus=2)
    list(backend_on(fake, units(5), workers=0)._loop())
    assert len(fake.actors) == 2  # --workers 0: the cluster's CPUs


def test_a_lost_run_runs_again_elsewhere_and_is_yielded_once():
    lost = {"t3"}

    def lose(unit, node):
        if unit.task_id in lost:
            lost.discard(unit.task_id)  # lost once, with node-0's actor
            return True
        return False

    fake = FakeRay(cpus=2, lose=lose)
    done = list(backend_on(fake, units(6))._loop())
    assert sorted(d.unit.task_id for d in done) == [f"t{i}" for i in range(6)]  # each once
    assert all(d.run.status == "passed" for d in done)
    tries = [actor for task, actor in fake.calls if task == "t3"]
    assert len(tries) == 2 and tries[0] != tries[1]  # run again, by another actor
    assert fake.killed >= 1 and len(fake.actors) == 3  # the lost actor was replaced


def test_a_run_lost_more_than_max_attempts_times_is_an_error_run():
    fake = FakeRay(cpus=2, lose=lambda unit, node: unit.task_id == "t1")
    done = {d.unit.task_id: d.run for d in backend_on(fake, units(3, max_attempts=2))._loop()}
    assert sorted(done) == ["t0", "t1", "t2"]
    assert done["t1"].status == "error" and done["t1"].attempts == 3
    assert "lost with its Ray worker 3 times" in done["t1"].error_msg
    assert "config.max_attempts: 2" in done["t1"].error_msg
    assert len([c for c in fake.calls if c[0] == "t1"]) == 3  # the first try and max_attempts retries


def test_a_run_that_raises_stops_the_suite_run_with_its_own_error():
    fake = FakeRay(cpus=1)
    b = backend_on(fake, [RunUnit("boom", 1, "m")])
    with pytest.raises(WazaError, match="cannot fill the workspace"):
        list(b._loop())


def test_a_worker_that_cannot_set_up_is_exit_2_with_its_reason():
    fake = FakeRay(cpus=1, setup_problem="ModuleNotFoundError: No module named 'my_plugin'")
    with pytest.raises(WazaError, match="node-0 cannot run this suite: ModuleNotFoundError"):
        list(backend_on(fake, units(2))._loop())


def test_fail_fast_cancel_drops_what_has_not_started():
    fake = FakeRay(cpus=1)
    b = backend_on(fake, units(5))
    stream = b._loop()
    first = next(stream)
    assert b.cancel() == 4  # outstanding: one in flight or queued, the rest queued
    rest = list(stream)
    assert first.unit.task_id == "t0" and len(rest) <= 1


def test_no_recipe_no_ray():
    job = BackendJob(prepared=SimpleNamespace(cancel=threading.Event()), recipe=None, parallel=True, workers=1)
    with pytest.raises(WazaError, match="needs a suite loaded from its file"):
        RayBackend(job)


def test_an_interrupt_takes_no_held_runs_from_a_backend_that_yields_each_as_it_ends():
    """The engine asks the backend for the runs it finished and still holds when Ctrl-C lands
    (a batched local run, run/local.py); a Ray run yields each run as it comes back: none."""
    b = backend_on(FakeRay(cpus=2), units(3))
    assert b.take_finished() == []
