"""``PreparedSuite.wait_idle`` wakes when the last attempt ends, although ``attempt_ended``
touches the condition only while someone waits."""

from __future__ import annotations

import threading
import time

from tests.conftest import BASIC_EVAL
from waza_core.plugins import get_registry
from waza_core.run.prepared import PreparedSuite, UnitSettings
from waza_core.suite.load import load_suite

TASK = "id: a\ninputs: {prompt: p}\ngraders:\n  - {type: text, name: t, config: {contains: [p]}}\n"


def _prepared(make_suite) -> PreparedSuite:
    registry = get_registry()
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK}), registry)
    return PreparedSuite(suite, registry, UnitSettings(executor="mock"), list(suite.tasks))


def test_a_waiter_wakes_when_the_last_attempt_ends(make_suite):
    prepared = _prepared(make_suite)
    for _ in range(3):  # idle after each attempt with nobody waiting: nothing to notify
        prepared.attempt_started()
        prepared.attempt_ended()
    assert prepared.wait_idle(0.01)  # idle already
    prepared.attempt_started()
    prepared.attempt_started()
    woke: list[tuple[bool, float]] = []

    def wait() -> None:
        t0 = time.monotonic()
        woke.append((prepared.wait_idle(30), time.monotonic() - t0))

    waiter = threading.Thread(target=wait)
    waiter.start()
    deadline = time.monotonic() + 10
    while prepared._idle_waiters == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    prepared.attempt_ended()
    time.sleep(0.05)
    assert not woke  # one attempt still runs
    prepared.attempt_ended()
    waiter.join(10)
    assert woke and woke[0][0] and woke[0][1] < 10
    assert prepared._idle_waiters == 0


def test_a_waiter_times_out_while_an_attempt_runs(make_suite):
    prepared = _prepared(make_suite)
    prepared.attempt_started()
    assert not prepared.wait_idle(0.05)
    assert prepared._idle_waiters == 0
    prepared.attempt_ended()
