"""What a person sees: a progress bar on a terminal, plain lines in a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.conftest import BASIC_EVAL, REPO


def test_progress_bar_on_a_terminal_and_summary_on_stdout(make_suite, tmp_path):
    tasks = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: p}}\n" for i in range(3)}
    path = make_suite(BASIC_EVAL, tasks)
    master, slave = pty.openpty()
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", COLUMNS="100", TERM="xterm")
    proc = subprocess.Popen([sys.executable, "-m", "waza_core", "run", str(path)], stdout=subprocess.PIPE,
                            stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    out, _ = proc.communicate(timeout=60)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "tasks" in err and "3/3" in err  # rich's bar with an M/N column
    assert "[1/3]" not in err  # no plain lines on a terminal
    assert "RESULTS  basic" in out.decode()


def test_plain_lines_in_a_pipe(make_suite):
    tasks = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: p}}\n" for i in range(3)}
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", str(make_suite(BASIC_EVAL, tasks))],
                          capture_output=True, text=True, env=dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1"))
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("✓")]
    assert lines == ["✓ [1/3] t0 (passed score 0.00)", "✓ [2/3] t1 (passed score 0.00)",
                     "✓ [3/3] t2 (passed score 0.00)"]


def test_held_progress_keeps_its_order_and_goes_out_in_batches(monkeypatch):
    """Stream.hold: the first piece at once, then at most every HOLD_SECONDS (or HOLD_LINES
    pieces), and before anything written after it; release() writes the rest."""
    import io

    from waza_core.results import console

    class Counting(io.StringIO):
        writes = 0

        def write(self, text):
            Counting.writes += 1
            return super().write(text)

    now = [100.0]
    timers: list = []
    monkeypatch.setattr(console, "_monotonic", lambda: now[0])
    monkeypatch.setattr(console, "_start_timer", lambda delay, call: timers.append((delay, call)))
    out = Counting()
    stream = console.Stream("stderr", out)
    stream.hold("a\n")
    assert out.getvalue() == "a\n" and timers == []  # the first line is not held
    stream.hold("b\n")
    stream.hold("c\n")
    assert out.getvalue() == "a\n" and Counting.writes == 1
    assert [round(d, 6) for d, _ in timers] == [console.HOLD_SECONDS]  # one timer, for the first line held
    stream.write("warning\n")  # what is written next comes after the held lines
    assert out.getvalue() == "a\nb\nc\nwarning\n" and Counting.writes == 2
    stream.hold("d\n")
    now[0] += console.HOLD_SECONDS
    stream.hold("e\n")  # due: written with everything held before it, in one write
    assert out.getvalue().endswith("warning\nd\ne\n") and Counting.writes == 3
    for i in range(console.HOLD_LINES):
        stream.hold(f"{i}\n")
    assert out.getvalue().endswith(f"{console.HOLD_LINES - 1}\n") and Counting.writes == 4
    stream.hold("last\n")
    assert stream.release() and out.getvalue().endswith("last\n")
    assert stream.release() and Counting.writes == 5  # nothing held: nothing written
    stream.hold("late\n")  # nothing comes after it: the timer's call writes it
    delay, call = timers[-1]
    assert not out.getvalue().endswith("late\n") and call() and out.getvalue().endswith("late\n")


def test_a_held_line_goes_out_when_due_even_if_no_task_follows():
    """The last line held before a long task is written by a timer, not at the next task."""
    import io
    import time as real_time

    from waza_core.results import console

    out = io.StringIO()
    stream = console.Stream("stderr", out)
    stream.hold("first\n")
    stream.hold("second\n")  # within HOLD_SECONDS: held
    assert out.getvalue() == "first\n"
    deadline = real_time.monotonic() + 10
    while out.getvalue() != "first\nsecond\n" and real_time.monotonic() < deadline:
        real_time.sleep(0.02)
    assert out.getvalue() == "first\nsecond\n"


def test_a_write_from_another_thread_waits_for_the_write_in_progress():
    """Stream writes exclude each other: a warning another thread writes while progress
    lines are going out comes after them, whole (without the lock it lands inside)."""
    import threading

    from waza_core.results import console

    others: list[threading.Thread] = []

    class Raw:
        text = ""

        def write(self, text):
            if not others:  # during the first write, another thread writes a warning
                other = threading.Thread(target=stream.write, args=("warning\n",))
                other.start()
                other.join(0.3)
                others.append(other)
                assert other.is_alive(), "the other write got in while this one was in progress"
            Raw.text += text

        def flush(self):
            pass

    stream = console.Stream("stderr", Raw())
    stream.hold("p0\n")  # the first progress line goes out at once
    others[0].join(10)
    assert stream.ok() and Raw.text == "p0\nwarning\n"


def test_writes_from_other_threads_neither_repeat_nor_drop_held_lines():
    """Warnings of hooks and preparers come from the run's threads while the main thread
    holds progress lines: every line is written exactly once."""
    import io
    import threading

    from waza_core.results import console

    out = io.StringIO()
    stream = console.Stream("stderr", out)
    stop = threading.Event()

    def warn():
        i = 0
        while not stop.is_set():
            stream.write(f"w{i}\n")
            i += 1

    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can: the race shows
    thread = threading.Thread(target=warn)
    thread.start()
    try:
        for i in range(20000):
            stream.hold(f"p{i}\n")
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    stream.release()
    progress = [line for line in out.getvalue().splitlines() if line.startswith("p")]
    assert progress == [f"p{i}" for i in range(20000)]


def test_progress_lines_in_a_pipe_all_arrive_before_the_summary(make_suite):
    """Held progress lines are released when the run ends: every task's line is there, in
    order, before the summary on the same stream."""
    tasks = {f"tasks/t{i:03d}.yaml": f"id: t{i:03d}\ninputs: {{prompt: p}}\n" for i in range(300)}
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", str(make_suite(BASIC_EVAL, tasks)),
                           "-o", "-"], capture_output=True, text=True,
                          env=dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1"))
    lines = proc.stderr.splitlines()
    marks = [ln for ln in lines if ln.startswith("✓")]
    assert marks == [f"✓ [{i + 1}/300] t{i:03d} (passed score 0.00)" for i in range(300)]
    assert lines.index(marks[-1]) < next(i for i, ln in enumerate(lines) if ln.startswith("RESULTS"))


def test_escape_passes_printable_text_unchanged_and_every_escaped_character_is_unprintable():
    """escape() returns a printable string as it is: that is only right because every
    character its patterns replace is one str.isprintable() refuses."""
    from waza_core.results.console import _CONTROL, escape

    assert escape("task-0001 ünïcode ✓") == "task-0001 ünïcode ✓"
    assert escape("a\u202eb") == "a\\u202eb" and escape("a\nb", newlines=True) == "a\nb"
    for code in range(0x110000):
        ch = chr(code)
        if _CONTROL.match(ch):
            assert not ch.isprintable(), hex(code)
