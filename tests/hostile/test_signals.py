"""Item 2: SIGTERM (docker stop, CI cancel, ``timeout``) acts like Ctrl-C, and Ctrl-C
works in a parallel run while a grader is busy: runs stop, every child group is
killed, workspaces and grading context folders are removed, the results are written
with ``"incomplete": true``, and the exit code is 128 + the signal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import REPO
from tests.hostile.conftest import no_traceback
from tests.proc_helpers import wait_dead


def default_signals() -> None:
    """The child starts with default dispositions even when pytest runs as a background job."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_waza(args, tmp_path) -> subprocess.Popen:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir(exist_ok=True)
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(REPO), TMPDIR=str(private_tmp))
    return subprocess.Popen([sys.executable, "-m", "waza_core", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)


def slow_suite(make_suite, tmp_path, grader: str, parallel: bool, tasks: int = 4) -> str:
    ev = (f"name: slow\nskill: demo\nconfig:\n  executor: mock\n  timeout_seconds: 300\n"
          f"  parallel: {str(parallel).lower()}\n  workers: 2\ntasks: ['tasks/*.yaml']\n")
    files = {}
    for i in range(tasks):
        if grader == "program":
            prog = tmp_path / f"prog{i}.py"
            prog.write_text(textwrap.dedent(f"""
                import os, sys, time
                sys.stdin.read()
                open({str(tmp_path / f'pid{i}')!r}, "w").write(str(os.getpid()))
                time.sleep(120)
            """))
            entry = (f"{{type: program, name: slow, config: {{command: {json.dumps(sys.executable)}, "
                     f"args: [{json.dumps(str(prog))}], timeout: 300}}}}")
        else:
            entry = f"{{type: {grader}, name: slow}}"
        files[f"tasks/t{i}.yaml"] = f"id: t{i}\ninputs: {{prompt: p}}\ngraders:\n  - {entry}\n"
    files["tasks/a0.yaml"] = "id: a0\ninputs: {prompt: p}\nallow_ungraded: true\n"  # finishes first, in order
    return str(make_suite(ev, files))


def wait_for(predicate, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def wait_for_line(proc, marker: bytes, seconds: float = 60) -> None:
    """Read stderr until ``marker`` shows (what was read is kept for the checks)."""
    buf, end = b"", time.monotonic() + seconds
    while marker not in buf:
        assert time.monotonic() < end, buf
        buf += os.read(proc.stderr.fileno(), 4096)


def finish(proc, timeout: float = 60):
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=timeout)
    proc.stdout_data, proc.stderr_data = out, err
    return time.monotonic() - t0


def check_stopped(proc, out_file, tmp_path, code: int) -> dict:
    assert "Traceback" not in proc.stderr_data.decode(), proc.stderr_data.decode()
    assert proc.returncode == code, proc.stderr_data.decode()
    doc = json.loads(out_file.read_bytes())
    assert doc["incomplete"] is True
    from waza_core.suite.schema import plain_validator

    assert not list(plain_validator("results").iter_errors(doc))
    left = sorted(p.name for p in (tmp_path / "tmp").iterdir())
    assert left == [], left  # no workspace, no grading context folder
    return doc


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_stops_program_graders_and_writes_incomplete_results(make_suite, tmp_path, parallel, sig, code):
    out = tmp_path / "r.json"
    proc = start_waza(["run", slow_suite(make_suite, tmp_path, "program", parallel), "-o", str(out)], tmp_path)
    wait_for(lambda: (tmp_path / "pid0").exists() and (tmp_path / "pid0").read_text())
    grader_pid = int((tmp_path / "pid0").read_text())
    proc.send_signal(sig)
    assert finish(proc) < 30
    check_stopped(proc, out, tmp_path, code)
    assert wait_dead(grader_pid, 5)


#: waza, with a thread of its own that sends the signal to itself (a thread-directed signal):
#: the kernel may hand a signal sent to the process to any thread that does not block it
#: (argv[1]: a file a grader writes when it runs, or ``thread:NAME``, a thread that exists
#: once grading started on a helper)
IN_ANOTHER_THREAD = """
import os, signal, sys, threading, time
def started():
    if sys.argv[1].startswith("thread:"):
        return any(t.name == sys.argv[1][7:] for t in threading.enumerate())
    return os.path.exists(sys.argv[1]) and open(sys.argv[1]).read()
def poke():
    while not started():
        time.sleep(0.02)
    time.sleep(0.3)
    signal.pthread_kill(threading.get_ident(), int(sys.argv[2]))
threading.Thread(target=poke, daemon=True).start()
from waza_core.cli import main
main(sys.argv[3:])
"""


@pytest.mark.parametrize("grader, parallel", [("program", False), ("program", True), ("block", False)])
def test_a_signal_that_lands_in_another_thread_stops_the_run(make_suite, tmp_path, grader, parallel):
    """Python runs a signal's handler in the main thread only, when it next runs Python code:
    a signal the kernel gave another thread waited until the main thread's wait ended (a
    program grader's 120 s; a grader on a helper thread, up to its 300 s limit). The main
    thread's waits on the run path are bounded now."""
    out = tmp_path / "r.json"
    suite = slow_suite(make_suite, tmp_path, grader, parallel)
    started = str(tmp_path / "pid0") if grader == "program" else "thread:waza-grader"
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(REPO), TMPDIR=str(tmp_path / "tmp"))
    extra = ["-p", "tests.hostile.plugins"] if grader == "block" else []
    proc = subprocess.Popen([sys.executable, "-c", IN_ANOTHER_THREAD, started, str(int(signal.SIGINT)),
                             "run", suite, "-o", str(out), *extra], env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_signals)
    if grader == "program":
        wait_for(lambda: (tmp_path / "pid0").exists() and (tmp_path / "pid0").read_text())
        grader_pid = int((tmp_path / "pid0").read_text())
    assert finish(proc) < 30
    check_stopped(proc, out, tmp_path, 130)
    if grader == "program":
        assert wait_dead(grader_pid, 5)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_busy_python_grader_does_not_block_a_parallel_stop(make_suite, tmp_path, sig, code):
    out = tmp_path / "r.json"
    proc = start_waza(["run", slow_suite(make_suite, tmp_path, "spin", True), "-o", str(out), "-v",
                       "-p", "tests.hostile.plugins"], tmp_path)
    wait_for_line(proc, b"[1/")  # task a0 finished: the spinning graders are busy now
    time.sleep(0.5)
    assert proc.poll() is None
    proc.send_signal(sig)
    assert finish(proc) < 30
    check_stopped(proc, out, tmp_path, code)


def test_a_second_signal_does_not_lose_the_results(make_suite, tmp_path):
    out = tmp_path / "r.json"
    proc = start_waza(["run", slow_suite(make_suite, tmp_path, "program", True), "-o", str(out)], tmp_path)
    wait_for(lambda: (tmp_path / "pid0").exists() and (tmp_path / "pid0").read_text())
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    finish(proc)
    check_stopped(proc, out, tmp_path, 143)


def test_signals_the_parent_ignores_stay_ignored(make_suite, tmp_path):
    """nohup: SIGHUP is ignored by the parent, so the run goes on to the end."""
    suite = make_suite("name: n\nskill: d\nconfig: {executor: mock}\ntasks: ['tasks/*.yaml']\n",
                       {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    code = ("import signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
            "sys.argv = ['waza', 'run', sys.argv[1]]; "
            "from waza_core import signals; signals.install(); "
            "print(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN)")
    proc = subprocess.run([sys.executable, "-c", code, str(suite)], capture_output=True, cwd=REPO)
    assert proc.stdout.strip() == b"True"
    no_traceback(proc)


@pytest.mark.parametrize("parallel", [False, True])
def test_a_signal_during_the_trigger_tests_stops_the_run_at_once(make_suite, tmp_path, parallel):
    """The trigger prompts run on a pool after the tasks; a signal there used to wait until
    every prompt in flight reached its time limit (the pool was waited for before the
    executor was shut down). Now the run stops within a few seconds, its results written."""
    ev = (f"name: trig\nskill: demo\nconfig:\n  executor: blocking\n  timeout_seconds: 120\n"
          f"  parallel: {str(parallel).lower()}\n  workers: 2\ntasks: ['tasks/*.yaml']\n")
    suite = make_suite(ev, {"tasks/t0.yaml": "id: t0\ninputs: {prompt: p}\nallow_ungraded: true\n"},
                       {"trigger_tests.yaml": "skill: demo\nshould_trigger_prompts: [{prompt: a}, {prompt: b}]\n"
                                              "should_not_trigger_prompts: [{prompt: c}]\n"})
    marker, out = tmp_path / "blocked", tmp_path / "out.json"
    os.environ["WAZA_TEST_BLOCKED"] = str(marker)
    try:
        proc = start_waza(["run", str(suite), "-p", "tests.hostile.blocking_executor", "-o", str(out)], tmp_path)
    finally:
        del os.environ["WAZA_TEST_BLOCKED"]
    wait_for(lambda: marker.exists() and marker.read_text())
    proc.send_signal(signal.SIGTERM)
    took = finish(proc, timeout=60)
    assert took < 15, took  # the prompts' limit is 120 s
    assert "Traceback" not in proc.stderr_data.decode(), proc.stderr_data.decode()
    assert proc.returncode == 143, proc.stderr_data.decode()
    assert json.loads(out.read_bytes())["incomplete"] is True
