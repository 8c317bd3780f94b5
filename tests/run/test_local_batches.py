"""A sequential run hands fast runs to the engine a few at a time (run/local.py): the same
results, and each run is still seen before the next starts whenever that matters."""

from __future__ import annotations

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


def _tasks(n: int, extra: str = "", failing: int | None = None) -> dict[str, str]:
    return {f"tasks/t{i:03d}.yaml": f"id: t{i:03d}\ninputs: {{prompt: {'no' if i == failing else 'ok'}}}\n{extra}"
            for i in range(n)}


def _run(path, reg, started, **opts):
    engine = Engine(load_suite(path, reg), reg, RunOptions(**opts))
    seen = []
    engine.run_observers.append(lambda done: seen.append(len(started)))
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


def test_fast_runs_come_in_batches_with_the_same_results(make_suite, reg, started, monkeypatch):
    path = make_suite(GRADED, _tasks(80, failing=7))
    batched, seen = _run(path, reg, started)
    assert seen[:3] == [local.BATCH_RUNS] * 3  # the first batch was run before any was handed over
    assert len(seen) == 80 and seen[-1] == 80
    monkeypatch.setattr(local, "BATCH_RUNS", 1)
    started.clear()
    one_by_one, seen = _run(path, reg, started)
    assert seen == list(range(1, 81))
    assert _without_times(batched) == _without_times(one_by_one)


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


def test_an_interrupt_mid_batch_keeps_the_runs_that_finished(make_suite, reg, monkeypatch):
    real = local.run_unit
    calls = []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 10:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(local, "run_unit", interrupted)
    doc = results_to_json(Engine(load_suite(make_suite(GRADED, _tasks(50)), reg), reg, RunOptions()).run())
    assert doc["incomplete"] is True
    assert [t["test_id"] for t in doc["tasks"]] == [f"t{i:03d}" for i in range(9)]
    assert len(calls) == 10  # nothing ran after the interrupt
