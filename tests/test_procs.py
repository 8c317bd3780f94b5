"""waza_core.procs: real children, real signals, real pipes."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from tests import proc_helpers
from tests.proc_helpers import wait_dead
from waza_core import procs
from waza_core.procs import CancelEvent, ProcessStartError, run

PY = sys.executable

pytestmark = pytest.mark.skipif(os.name != "posix", reason="procs is POSIX only")


exit_watch = proc_helpers.exit_watch  # autouse: every test runs with pidfd and with the waiter thread


def script(tmp_path: Path, body: str, name: str = "child.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def kill_if_alive(pid: int) -> None:
    """The sweep of escapees (Linux) usually killed it already."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").exists() else 0


def grandchild_leader(tmp_path: Path, pid_file: Path, says: str) -> Path:
    """A child that starts a sleeping grandchild, writes its pid to ``pid_file``, prints ``says`` and sleeps."""
    return script(tmp_path, f"""
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(p.pid))
        print({says!r}, flush=True)
        time.sleep(60)
    """)


# -- ordinary runs --------------------------------------------------------------


def test_captures_stdout_stderr_and_exit_code(tmp_path):
    child = script(tmp_path, """
        import sys
        sys.stdout.write("out")
        sys.stderr.write("err")
        sys.exit(3)
    """)
    result = run([PY, child])
    assert (result.returncode, result.stdout, result.stderr) == (3, b"out", b"err")
    assert not result.killed and not result.stdout_truncated and not result.stderr_truncated
    assert result.argv == (PY, str(child))
    assert result.duration_ms >= 0


def test_cwd_env_and_stdin(tmp_path):
    child = script(tmp_path, """
        import os, sys
        data = sys.stdin.read()
        print(os.getcwd(), os.environ.get("WAZA_X"), "PATH" in os.environ, data)
    """)
    work = tmp_path / "work"
    work.mkdir()
    result = run([PY, child], cwd=work, env={"WAZA_X": "1"}, input=b"hello")
    assert result.stdout.decode().split() == [str(work.resolve()), "1", "False", "hello"]


def test_without_input_stdin_is_devnull(tmp_path):
    result = run([PY, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout=10)
    assert result.stdout.strip() == b"''"


def test_signal_exit_is_negative_returncode():
    result = run([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
    assert result.returncode == -signal.SIGTERM
    assert not result.killed


# -- timeouts and process groups ------------------------------------------------------


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    child = grandchild_leader(tmp_path, pid_file, says="started")
    start = time.monotonic()
    result = run([PY, child], timeout=1.0)
    elapsed = time.monotonic() - start
    assert result.timed_out and result.killed
    assert result.returncode == -signal.SIGKILL
    assert result.stdout == b"started\n"
    assert elapsed < 5
    assert wait_dead(int(pid_file.read_text())), "grandchild survived the timeout"


def test_background_grandchild_is_killed_when_the_leader_exits(tmp_path):
    pid_file = tmp_path / "bg.pid"
    start = time.monotonic()
    result = run(["/bin/sh", "-c", f"sleep 60 & echo $! > {pid_file}; echo done"], timeout=30)
    assert time.monotonic() - start < 5
    assert result.returncode == 0 and result.stdout == b"done\n"
    assert not result.timed_out
    assert wait_dead(int(pid_file.read_text()))


def test_escaped_grandchild_holding_the_pipes_cannot_hang_the_reader(tmp_path):
    pid_file = tmp_path / "escapee.pid"
    child = script(tmp_path, f"""
        import subprocess, sys
        # a new session: out of reach of the group kill, but holding stdout/stderr
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(p.pid))
        print("leader done", flush=True)
    """)
    try:
        start = time.monotonic()
        result = run([PY, child], timeout=30)
        elapsed = time.monotonic() - start
        assert result.returncode == 0 and result.stdout == b"leader done\n"
        assert elapsed < procs.DRAIN_SECONDS + 3
        assert not result.timed_out
    finally:
        kill_if_alive(int(pid_file.read_text()))


def test_a_cancel_after_the_leader_finished_does_not_make_it_cancelled(tmp_path, monkeypatch):
    monkeypatch.setattr(procs, "DRAIN_SECONDS", 5.0)
    pid_file = tmp_path / "escapee.pid"
    child = script(tmp_path, f"""
        import subprocess, sys
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(p.pid))
        print("leader done", flush=True)
    """)
    cancel = CancelEvent()

    def cancel_while_draining():
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.01)
        time.sleep(0.3)  # the leader has exited; the escapee still holds the pipes
        cancel.set()

    threading.Thread(target=cancel_while_draining, daemon=True).start()
    try:
        start = time.monotonic()
        result = run([PY, child], timeout=30, cancel=cancel)
        assert result.returncode == 0 and result.stdout == b"leader done\n"
        assert not result.cancelled and not result.killed
        assert time.monotonic() - start < 4  # the cancel also ended the wait for the pipes
    finally:
        kill_if_alive(int(pid_file.read_text()))


def test_no_timeout_means_no_limit(tmp_path):
    result = run([PY, "-c", "import time; time.sleep(0.3); print('ok')"], timeout=None)
    assert result.stdout == b"ok\n" and not result.timed_out


# -- bounded output -----------------------------------------------------------------


def test_100_mib_flood_is_bounded_and_fully_drained():
    flood = ("import sys\nb = b'x' * (1 << 20)\nfor _ in range(100): sys.stdout.buffer.write(b)\n"
             "sys.stderr.write('e' * 5000)\n")
    cap = 64 * 1024
    tracemalloc.start()
    try:
        result = run([PY, "-c", flood], max_stdout=cap, max_stderr=100, timeout=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.returncode == 0, "the child must not block on a full pipe"
    assert len(result.stdout) == cap and result.stdout_truncated
    assert result.stderr == b"e" * 100 and result.stderr_truncated
    assert not result.overflowed
    assert peak < 8 * 1024 * 1024, f"peak Python memory {peak} bytes for a 100 MiB flood"


def test_kill_on_overflow_stops_an_endless_writer():
    start = time.monotonic()
    result = run(["yes"], max_stdout=1000, kill_on_overflow=True, timeout=30)
    assert time.monotonic() - start < 5
    assert result.overflowed and result.killed and not result.timed_out
    assert len(result.stdout) == 1000 and result.stdout_truncated


def test_exact_cap_is_not_truncated():
    result = run([PY, "-c", "import sys; sys.stdout.write('a' * 100)"], max_stdout=100)
    assert result.stdout == b"a" * 100 and not result.stdout_truncated


# -- stdin ------------------------------------------------------------------------------


def test_large_stdin_round_trip_without_deadlock():
    data = os.urandom(1024) * (20 * 1024)  # 20 MiB
    result = run(["cat"], input=data, max_stdout=len(data), timeout=60)
    assert result.returncode == 0
    assert result.stdout == data and not result.stdout_truncated


def test_child_that_writes_a_lot_before_reading_stdin():
    # Writes 8 MiB first, then reads 8 MiB: deadlocks unless both directions run at once.
    child = "import sys\nsys.stdout.write('y' * (8 << 20)); sys.stdout.flush()\nprint(len(sys.stdin.buffer.read()))\n"
    result = run([PY, "-c", child], input=b"z" * (8 << 20), max_stdout=16 << 20, timeout=60)
    assert result.returncode == 0
    assert result.stdout == b"y" * (8 << 20) + b"%d\n" % (8 << 20)


def test_child_ignoring_stdin_is_not_an_error():
    result = run(["true"], input=b"x" * (10 << 20), timeout=30)
    assert result.returncode == 0 and not result.killed


# -- start failures ----------------------------------------------------------------------


def test_missing_binary_names_argv0():
    with pytest.raises(ProcessStartError) as info:
        run(["waza-no-such-agent-binary", "--x"])
    assert info.value.argv0 == "waza-no-such-agent-binary"
    assert "waza-no-such-agent-binary" in str(info.value) and "not found" in str(info.value)


def test_missing_path_and_not_executable(tmp_path):
    with pytest.raises(ProcessStartError, match="no such file"):
        run([str(tmp_path / "nope")])
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\necho hi\n")
    plain.chmod(0o644)
    with pytest.raises(ProcessStartError, match="permission denied") as info:
        run([str(plain)])
    assert info.value.argv0 == str(plain)


def test_missing_interpreter_is_explained(tmp_path):
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/no/such/interpreter\n")
    bad.chmod(0o755)
    with pytest.raises(ProcessStartError, match="interpreter"):
        run([str(bad)])


def test_bad_working_directory(tmp_path):
    with pytest.raises(ProcessStartError, match="working directory"):
        run(["true"], cwd=tmp_path / "missing")


def test_empty_argv_is_a_programming_error():
    with pytest.raises(ValueError):
        run([])


# -- cancellation ----------------------------------------------------------------------------


def test_cancel_event_kills_running_children_at_once(tmp_path):
    cancel = CancelEvent()
    results = []

    def worker():
        results.append(run([PY, "-c", "import time; time.sleep(60)"], cancel=cancel, timeout=60))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    start = time.monotonic()
    cancel.set()
    for t in threads:
        t.join(10)
    assert time.monotonic() - start < 2
    assert len(results) == 3
    assert all(r.cancelled and r.returncode == -signal.SIGKILL for r in results)


def test_plain_threading_event_is_polled():
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    result = run([PY, "-c", "import time; time.sleep(60)"], cancel=cancel)
    assert result.cancelled and time.monotonic() - start < 3


def test_already_cancelled_event_kills_immediately():
    cancel = CancelEvent()
    cancel.set()
    result = run(["sleep", "30"], cancel=cancel)
    assert result.cancelled


def test_interrupt_inside_the_loop_kills_the_group(tmp_path, monkeypatch):
    pid_file = tmp_path / "grandchild.pid"
    child = grandchild_leader(tmp_path, pid_file, says="x")

    def interrupted(self, fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(procs._Supervisor, "_read", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run([PY, child], timeout=60)
    assert wait_dead(int(pid_file.read_text()))


# -- hygiene ------------------------------------------------------------------------------------


def test_no_file_descriptor_leaks(tmp_path):
    run(["true"])  # warm-up (lazy imports may open files)
    before = open_fds()
    for _ in range(20):
        run(["true"], input=b"x")
        run([PY, "-c", "import time; time.sleep(5)"], timeout=0.05)
        with pytest.raises(ProcessStartError):
            run(["waza-no-such-binary"])
    assert open_fds() == before


def test_concurrent_runs_keep_their_own_output():
    results: dict[int, bytes] = {}

    def worker(i):
        results[i] = run([PY, "-c", f"import sys; sys.stdout.write('{i}' * 100000)"]).stdout

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(results[i] == str(i).encode() * 100000 for i in range(8))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sweep of escapees is Linux only")
def test_a_child_being_started_is_not_taken_for_another_childs_escapee(tmp_path):
    """Between fork and exec a new child holds every descriptor of waza, the pipes of the
    other children included. A sweep after another child ended took such a child for that
    child's escapee and killed it (graders ended by SIGKILL within milliseconds of their
    start when runs overlapped). The fork below stands for a child that has not reached
    exec yet, made deterministic: it holds the running child's pipes while that child ends."""
    go = tmp_path / "go"
    done: list = []
    worker = threading.Thread(target=lambda: done.append(
        run(["sh", "-c", f"while [ ! -e '{go}' ]; do sleep 0.01; done"], timeout=30)))
    worker.start()
    deadline = time.monotonic() + 10
    while not procs._leaders and time.monotonic() < deadline:
        time.sleep(0.01)
    assert procs._leaders, "the child did not start"
    pid = os.fork()
    if pid == 0:  # the child "being started": holds waza's descriptors, never execs
        time.sleep(2)
        os._exit(7)
    try:
        go.touch()
        worker.join(30)
        assert done and done[0].returncode == 0
        _, status = os.waitpid(pid, 0)
    finally:
        kill_if_alive(pid)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 7, "the sweep killed a child being started"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sweep of escapees is Linux only")
@pytest.mark.parametrize("started", [True, False], ids=["a-start", "not-a-start"])
def test_a_sweep_judges_a_child_only_when_the_starts_it_saw_are_over(started):
    """A child being started lets go of waza's descriptors one by one before ``exec``: a sweep
    that saw another child's pipe in it, then found it no longer holding the birthmark, killed it
    (a resumed run's grader ended by SIGKILL 9 ms after its start, under load). The fork below
    has closed every descriptor, as such a child has on its way to ``exec``, while a start is
    under way; the sweep's match says yes to it. It must wait for that start: the child then
    turns out to be the start's (a leader: kept) or not (an escapee: killed)."""
    procs.enable_subreaper()
    token = object()
    with procs._state_lock:
        procs._starting.add(token)
    pid = os.fork()
    if pid == 0:  # past the close of waza's descriptors, not yet at exec
        os.closerange(3, 65536)
        time.sleep(1.5)
        os._exit(7)
    found: list = []
    sweeper = threading.Thread(target=lambda: found.append(procs._sweep(lambda p, info: p == pid)))
    try:
        sweeper.start()
        time.sleep(0.3)  # the sweep sees the child while the start is under way
        assert sweeper.is_alive(), "the sweep judged the child while a start was under way"
        with procs._state_lock:
            procs._starting.discard(token)
            if started:
                procs._leaders.add(pid)
        sweeper.join(10)
        if started:  # kept: it ends as it meant to
            _, status = os.waitpid(pid, 0)
            assert found == [0] and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 7
        else:  # killed and reaped by the sweep
            assert found == [1] and not os.path.exists(f"/proc/{pid}")
    finally:
        with procs._state_lock:
            procs._starting.discard(token)
            procs._leaders.discard(pid)
        kill_if_alive(pid)
