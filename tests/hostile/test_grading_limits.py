"""Item 3: every grader gets a time limit; a grader past it is a grader error (the run
becomes ``error``) and the run goes on, whatever the grader is stuck in."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import REPO
from tests.hostile.conftest import no_traceback

PLUGINS = ["-p", "tests.hostile.plugins"]
ENV = {"PYTHONPATH": str(REPO)}


def suite_with(make_suite, grader: str, timeout: int = 1, parallel: bool = False) -> str:
    ev = (f"name: limits\nskill: demo\nconfig:\n  executor: mock\n  timeout_seconds: {timeout}\n"
          f"  parallel: {str(parallel).lower()}\n  workers: 2\ntasks: ['tasks/*.yaml']\n")
    tasks = {f"tasks/t{i}.yaml": (f"id: t{i}\ninputs: {{prompt: p}}\ngraders:\n"
                                  f"  - {{type: {grader}, name: slow}}\n  - {{type: quick, name: after}}\n")
             for i in range(2)}
    return str(make_suite(ev, tasks))


@pytest.mark.parametrize("grader", ["spin", "spin_bounded", "block"])
@pytest.mark.parametrize("parallel", [False, True])
def test_a_stuck_grader_is_a_timeout_error_and_the_run_goes_on(waza, make_suite, tmp_path, grader, parallel):
    out = tmp_path / "r.json"
    t0 = time.monotonic()
    proc = waza("run", suite_with(make_suite, grader, parallel=parallel), "-o", str(out), *PLUGINS,
                env=ENV, timeout=120)
    elapsed = time.monotonic() - t0
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(out.read_bytes())
    for task in doc["tasks"]:
        [run] = task["runs"]
        assert run["status"] == "error"
        slow = run["validations"]["slow"]
        assert slow["error"]["kind"] == "timeout" and "limit of 1 s" in slow["error"]["message"]
        assert run["validations"]["after"]["passed"] is True  # the next grader still ran
    assert elapsed < 60


def test_the_grader_limit_comes_from_the_grader_first(tmp_path):
    from waza_core.grading.base import Grader, GradingContext
    from waza_core.grading.grade import grading_limit
    from waza_core.model import GraderSpec, RunEvidence, TaskSpec

    class Own(Grader):
        time_limit = 7.0

    task = TaskSpec(id="t", name="t", prompt="p", file=tmp_path / "t.yaml", timeout_seconds=42)
    ctx = GradingContext(task=task, evidence=RunEvidence(output=""), workspace_dir=None)
    spec = GraderSpec(type="x", name="x")
    assert grading_limit(Own(spec), ctx) == 7.0
    assert grading_limit(Grader(spec), ctx) == 42.0


def test_the_program_grader_limit_is_a_backstop_to_its_own_timeout(tmp_path):
    from waza_core.model import GraderSpec
    from waza_graders.program import ProgramGrader

    g = ProgramGrader(GraderSpec(type="program", name="p", config={"command": "true", "timeout": 5}))
    assert g.bounded and g.time_limit > g.timeout


def test_no_thread_keeps_spinning_after_a_timeout():
    """The watchdog stops a pure-Python loop in the thread it runs in, and on a helper
    thread that the run abandoned: afterwards the process is idle."""
    from waza_core.grading import deadline

    kind, _ = deadline.in_thread(lambda: [None for _ in iter(int, 1)], 0.3)
    assert kind == "timeout"
    kind, _ = deadline.on_helper(lambda: [None for _ in iter(int, 1)], 0.3)
    assert kind == "timeout"
    time.sleep(deadline.REPEAT_SECONDS + 0.5)  # the abandoned loop got its exception by now
    cpu = time.process_time()
    time.sleep(1.0)
    assert time.process_time() - cpu < 0.5


def test_ctypes_is_imported_only_when_a_grader_must_be_stopped(make_suite, tmp_path):
    """The watchdog raises in a stuck grader's thread with ctypes; a run whose graders all
    end in time never imports it (a fresh process each: the in-process tests share one)."""
    import subprocess
    import sys

    probe = ("import runpy, sys\n"
             "sys.argv = ['waza', 'run', sys.argv[1], '-q', '-p', 'tests.hostile.plugins']\n"
             "try:\n    runpy.run_module('waza_core', run_name='__main__')\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "print(code, 'ctypes' in sys.modules)\n")
    seen = {}
    for grader in ("quick", "spin_bounded"):
        suite = suite_with(make_suite, grader)
        proc = subprocess.run([sys.executable, "-c", probe, suite], capture_output=True, timeout=120,
                              env={**__import__("os").environ, **ENV}, cwd=tmp_path)
        seen[grader] = proc.stdout.decode().split()[-2:]
    assert seen == {"quick": ["0", "False"], "spin_bounded": ["1", "True"]}


@pytest.mark.parametrize("bounded", [True, False])
def test_a_stop_of_the_run_is_not_raised_in_a_grader_that_stops_by_itself(tmp_path, bounded):
    """A grader that watches ``ctx.cancel`` (``stops_on_cancel``) finishes its own clean-up
    after a stop; any other grader gets ``GradingCancelled`` at whatever line it is on."""
    import threading

    from waza_core import CancelEvent
    from waza_core.grading import deadline
    from waza_core.grading.base import Grader, GradingContext
    from waza_core.grading.grade import grade_one
    from waza_core.model import GraderSpec, RunEvidence, TaskSpec

    steps: list[str] = []
    inside = threading.Event()

    class Holder(Grader):
        def grade(self, ctx):
            inside.set()
            ctx.cancel.wait(30)
            steps.append("saw the stop")
            time.sleep(0.3)  # releasing what it holds
            steps.append("cleaned up")
            return self.result(0.0, False, "stopped")

    Holder.bounded = bounded
    task = TaskSpec(id="t", name="t", prompt="p", file=tmp_path / "t.yaml", timeout_seconds=60)
    for stops_by_itself in (True, False):
        Holder.stops_on_cancel = stops_by_itself
        steps.clear(), inside.clear()
        cancel = CancelEvent()
        cancel._subscribe(lambda c=cancel: deadline.cancel_all(c))  # what a suite run's cancel event does
        ctx = GradingContext(task=task, evidence=RunEvidence(output=""), workspace_dir=None, cancel=cancel)
        got = []
        worker = threading.Thread(target=lambda: got.append(grade_one(Holder(GraderSpec(type="h", name="h")), ctx)))
        worker.start()
        assert inside.wait(10)
        cancel.set()
        worker.join(30)
        [res] = got
        if stops_by_itself:
            assert steps == ["saw the stop", "cleaned up"] and res.feedback == "stopped", (steps, res)
        else:
            assert "cleaned up" not in steps and res.error["kind"] == "cancelled", (steps, res)


@pytest.fixture
def ctrl_c_raises(monkeypatch):
    """Ctrl-C raises KeyboardInterrupt in this (the main) thread, whatever the runner set."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_in_a_sequential_run_tells_a_helper_grader_that_stops_by_itself(tmp_path, ctrl_c_raises):
    """In a sequential run the main thread waits for a grader on a helper thread, and Ctrl-C
    lands in that wait; the run's event is set only after it left grade_one, unlinked from the
    grader's own event by then. A grader that stops by itself is told all the same."""
    import _thread
    import threading

    from waza_core import CancelEvent
    from waza_core.grading import deadline
    from waza_core.grading.base import Grader, GradingContext
    from waza_core.grading.grade import grade_one
    from waza_core.model import GraderSpec, RunEvidence, TaskSpec

    told = threading.Event()
    inside = threading.Event()

    class Holder(Grader):
        bounded = False
        stops_on_cancel = True

        def grade(self, ctx):
            inside.set()
            if ctx.cancel.wait(30):
                told.set()
            return self.result(0.0, False, "stopped")

    cancel = CancelEvent()
    cancel._subscribe(lambda: deadline.cancel_all(cancel))
    task = TaskSpec(id="t", name="t", prompt="p", file=tmp_path / "t.yaml", timeout_seconds=60)
    ctx = GradingContext(task=task, evidence=RunEvidence(output=""), workspace_dir=None, cancel=cancel)
    threading.Thread(target=lambda: (inside.wait(10), time.sleep(0.1), _thread.interrupt_main())).start()
    with pytest.raises(KeyboardInterrupt):
        grade_one(Holder(GraderSpec(type="h", name="h")), ctx)
    assert told.wait(5)
