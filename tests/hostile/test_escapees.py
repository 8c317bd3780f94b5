"""Item 10: a grader's descendant that leaves the process group (``setsid``, a daemon's
double fork) does not survive the grader, nor waza (Linux: child subreaper)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time

import pytest

from tests.conftest import BASIC_EVAL
from tests.hostile.conftest import no_traceback
from tests.proc_helpers import wait_dead
from waza_core import procs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux only")


def escaping_program(tmp_path, pid_file, *, double_fork=False, clear_env=False, then="exit") -> str:
    """A program whose grandchild calls setsid() and sleeps, its stdio on /dev/null."""
    body = f"""
        import os, subprocess, sys, time
        null = open(os.devnull, "r+b")
        env = {{}} if {clear_env} else None
        code = "import time; time.sleep(300)"
        if {double_fork}:
            code = ("import os, subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
                    "'import time; time.sleep(300)'], start_new_session=True, stdin=-3, stdout=-3, stderr=-3); "
                    "print(p.pid, flush=True)")
            out = subprocess.run([sys.executable, "-c", code], stdin=null, stdout=subprocess.PIPE, stderr=null,
                                 start_new_session=True, env=env).stdout
            pid = int(out.split()[-1])
        else:
            pid = subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                                   stdin=null, stdout=null, stderr=null, env=env).pid
        open({str(pid_file)!r}, "w").write(str(pid))
        if {then!r} == "sleep":
            time.sleep(300)
        print("graded")
    """
    path = tmp_path / "grader.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def escapee(pid_file) -> int:
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text():
            return int(pid_file.read_text())
        time.sleep(0.01)
    raise AssertionError("the program did not start its grandchild")


@pytest.mark.parametrize("double_fork", [False, True])
def test_an_escaped_grandchild_dies_with_its_program(tmp_path, double_fork):
    pid_file = tmp_path / "pid"
    result = procs.run([sys.executable, escaping_program(tmp_path, pid_file, double_fork=double_fork)],
                       timeout=60)
    assert result.returncode == 0 and b"graded" in result.stdout
    pid = escapee(pid_file)
    assert wait_dead(pid, 5), f"escapee {pid} survived"
    assert not os.path.exists(f"/proc/{pid}")  # killed and reaped: no zombie left either


def test_an_escaped_grandchild_dies_when_its_program_times_out(tmp_path):
    pid_file = tmp_path / "pid"
    result = procs.run([sys.executable, escaping_program(tmp_path, pid_file, then="sleep")], timeout=2)
    assert result.timed_out
    assert wait_dead(escapee(pid_file), 5)


def test_the_cli_leaves_no_process_behind(waza, make_suite, tmp_path):
    """Through `waza run`: a program grader whose grandchild escapes; even one that also
    cleared its environment is gone once waza exits."""
    pids = []
    tasks = {}
    for i, clear in enumerate((False, True)):
        pid_file = tmp_path / f"pid{i}"
        pids.append(pid_file)
        prog = escaping_program(tmp_path / f"p{i}", pid_file, double_fork=True, clear_env=clear) \
            if (tmp_path / f"p{i}").mkdir() is None else ""
        tasks[f"tasks/t{i}.yaml"] = (f"id: t{i}\ninputs: {{prompt: p}}\ngraders:\n"
                                     f"  - {{type: program, name: g, config: {{command: {json.dumps(sys.executable)}, "
                                     f"args: [{json.dumps(prog)}]}}}}\n")
    proc = waza("run", str(make_suite(BASIC_EVAL, tasks)))
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    for pid_file in pids:
        assert wait_dead(escapee(pid_file), 5)


def test_the_children_waza_started_itself_are_never_swept(tmp_path):
    """A sweep only takes what escaped a run's child, never another child of waza."""
    import subprocess

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        procs.run([sys.executable, "-c", "print('x')"], timeout=30)
        procs.kill_leftovers()
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
