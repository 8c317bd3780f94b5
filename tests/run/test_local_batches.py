"""A sequential run hands fast runs to the engine a few at a time (run/local.py): the same
results, and each run is still seen before the next starts whenever that matters."""

from __future__ import annotations

import os

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.plugins import build_plugin_manager
from waza_core.results.codec import results_to_json
from waza_core.run import local
from waza_core.run.engine import Engine, RunOptions
from waza_core.suite.load import load_suite

GRADED = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: ['for: ok']}}\n"


@pytest.fixture
def reg():
    return build_plugin_manager(["tests.fixture_plugins.test_graders"])[1]


@pytest.fixture
def started(monkeypatch):
    """How many runs had started each time the engine was handed one."""
    calls = []
    real = local.run_unit

    def counting(*args):
        calls.append(args[1].task_id)
        return real(*args)

    monkeypatch.setattr(local, "run_unit", counting)
    return calls


@pytest.fixture
def loaded_machine_limits(monkeypatch):
    """Limits of the batching that a busy machine does not cross by chance: a mock run counts as
    fast below 0.2 s (not 2 ms), and a batch may last 60 s (not 20 ms). On a loaded CI machine a
    run now and then took over 2 ms and ended a batch the test expected whole."""
    monkeypatch.setattr(local, "FAST_RUN_SECONDS", 0.2)
    monkeypatch.setattr(local, "BATCH_SECONDS", 60.0)


def _tasks(n: int, extra: str = "", failing: int | None = None) -> dict[str, str]:
    return {f"tasks/t{i:03d}.yaml": f"id: t{i:03d}\ninputs: {{prompt: {'no' if i == failing else 'ok'}}}\n{extra}"
            for i in range(n)}


def _run(path, reg, started, observe=False, **opts):
    """The results, and how many runs had started each time the engine took one (seen by
    the aggregator: a run observer, as ``--journal`` adds, turns batching off)."""
    engine = Engine(load_suite(path, reg), reg, RunOptions(**opts))
    seen = []
    if observe:
        engine.run_observers.append(lambda done: None)
    real_add = engine.aggregator.add

    def add(done):
        seen.append(len(started))
        return real_add(done)

    engine.aggregator.add = add
    return results_to_json(engine.run()), seen


def _without_times(doc: dict) -> dict:
    for key in ("eval_id", "timestamp"):
        doc.pop(key)
    doc["summary"].pop("duration_ms")
    for task in doc["tasks"]:
        for run in task["runs"]:
            run["duration_ms"] = 0
            for v in run["validations"].values():
                v["duration_ms"] = 0
        task["stats"]["avg_duration_ms"] = 0
    return doc


def test_fast_runs_come_in_batches_with_the_same_results(make_suite, reg, started, monkeypatch,
                                                         loaded_machine_limits):
    path = make_suite(GRADED, _tasks(80, failing=7))
    batched, seen = _run(path, reg, started)
    n = local.BATCH_RUNS
    assert seen[:n] == list(range(1, n + 1))  # one by one until BATCH_RUNS fast runs in a row
    assert seen[n:2 * n] == [2 * n] * n and seen[2 * n:] == [80] * (80 - 2 * n)  # then in batches
    monkeypatch.setattr(local, "BATCH_RUNS", 10 ** 6)  # never fast enough for long enough: one by one
    started.clear()
    one_by_one, seen = _run(path, reg, started)
    assert seen == list(range(1, 81))
    assert _without_times(batched) == _without_times(one_by_one)


def test_a_slow_run_ends_the_batching_until_fast_runs_come_again(make_suite, reg, started,
                                                                  loaded_machine_limits):
    slow = f"graders:\n  - {{type: sleep, name: s, config: {{seconds: {local.FAST_RUN_SECONDS * 5}}}}}\n"
    tasks = _tasks(45)
    tasks["tasks/t035.yaml"] += slow
    _, seen = _run(make_suite(GRADED, tasks), reg, started)
    n = local.BATCH_RUNS
    assert seen[:n] == list(range(1, n + 1))
    assert seen[n:36] == [36] * (36 - n)  # the runs held in the batch waited for the slow one, once
    assert seen[36:] == list(range(37, 46))  # then one by one again


def test_a_run_observer_such_as_the_journal_sees_each_run_before_the_next(make_suite, reg, started):
    _, seen = _run(make_suite(GRADED, _tasks(70)), reg, started, observe=True)
    assert seen == list(range(1, 71))


def test_a_slow_run_is_handed_over_before_the_next_starts(make_suite, reg, started):
    slow = f"graders:\n  - {{type: sleep, name: s, config: {{seconds: {local.BATCH_SECONDS * 1.5}}}}}\n"
    _, seen = _run(make_suite(BASIC_EVAL, _tasks(4, slow)), reg, started)
    assert seen == [1, 2, 3, 4]


@pytest.mark.parametrize("why", ["fail_fast", "after_task"])
def test_fail_fast_and_after_task_hooks_see_each_run_before_the_next(make_suite, reg, started, why):
    ev = GRADED
    opts = {}
    if why == "fail_fast":
        opts["fail_fast"] = True
    else:
        ev += "hooks:\n  after_task: [{command: 'true'}]\n"
    outcome, seen = _run(make_suite(ev, _tasks(40, failing=30)), reg, started, **opts)
    assert seen == list(range(1, len(seen) + 1))
    assert len(seen) == (31 if why == "fail_fast" else 40)


def test_an_interrupt_while_runs_are_gathered_keeps_the_runs_that_finished(make_suite, reg, monkeypatch):
    real = local.run_unit
    calls = []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 40:  # in the second batch
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(local, "run_unit", interrupted)
    doc = results_to_json(Engine(load_suite(make_suite(GRADED, _tasks(80)), reg), reg, RunOptions()).run())
    assert doc["incomplete"] is True
    assert [t["test_id"] for t in doc["tasks"]] == [f"t{i:03d}" for i in range(39)]
    assert len(calls) == 40  # nothing ran after the interrupt


def test_an_interrupt_while_the_engine_takes_a_batch_keeps_the_rest_of_it(make_suite, reg, started):
    engine = Engine(load_suite(make_suite(GRADED, _tasks(80)), reg), reg, RunOptions())
    real_add = engine.aggregator.add

    def add(done):
        entry = real_add(done)
        if engine.aggregator.done == 40:  # the progress line of a task, say, in the second batch
            raise KeyboardInterrupt
        return entry

    engine.aggregator.add = add
    doc = results_to_json(engine.run())
    assert doc["incomplete"] is True and len(started) == 64  # two batches ran: 32 one by one, then 32
    assert [t["test_id"] for t in doc["tasks"]] == [f"t{i:03d}" for i in range(64)]


def test_workspaces_start_their_thread_and_imports_with_the_first_one_taken(tmp_path, monkeypatch):
    """A run whose tasks need no workspace starts no removing thread (run/workspaces.py)."""
    import threading

    from waza_core.run.workspaces import Workspaces

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    before = threading.active_count()
    unused = Workspaces()
    assert unused.janitor is None and threading.active_count() == before
    unused.close()
    used = Workspaces()
    ws = used.take()
    assert used.janitor is not None and used.janitor.is_alive()
    used.remove(ws)
    used.close()
    assert used.janitor is None and not os.path.exists(ws)
    assert threading.active_count() == before
