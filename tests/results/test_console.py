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
