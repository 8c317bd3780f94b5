"""Item 5: closed or full standard streams never cost the results file nor print a
traceback; exit 2 only when the output that was asked for cannot be written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.hostile.conftest import FULL_DEV, make_device, no_traceback, valid_results


def waza_with(args, *, close=(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120):
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1")

    def closing():
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "waza_core", *args], stdout=stdout, stderr=stderr,
                          preexec_fn=closing if close else None, env=env, cwd=REPO, timeout=timeout)


@pytest.mark.parametrize("closed", [(1,), (2,), (1, 2)])
def test_run_with_closed_streams_still_writes_the_results(small_suite, tmp_path, closed):
    out = tmp_path / "r.json"
    stdout = subprocess.DEVNULL if 1 in closed else subprocess.PIPE
    stderr = subprocess.DEVNULL if 2 in closed else subprocess.PIPE
    proc = waza_with(["run", str(small_suite), "-o", str(out)], close=closed, stdout=stdout, stderr=stderr)
    assert proc.returncode == 1  # task b fails: the console's state does not change the verdict
    assert len(valid_results(out.read_bytes())["tasks"]) == 2
    if 2 not in closed:
        no_traceback(proc)
        assert proc.stderr.decode().count("\n") < 10


def test_run_with_stdout_on_a_full_device(small_suite, tmp_path):
    full = make_device(tmp_path / "full", FULL_DEV)
    out = tmp_path / "r.json"
    with open(full, "wb") as sink:
        proc = waza_with(["run", str(small_suite), "-o", str(out)], stdout=sink)
    no_traceback(proc)
    assert "Exception ignored" not in proc.stderr.decode()
    assert proc.returncode == 1
    assert len(valid_results(out.read_bytes())["tasks"]) == 2


def test_run_with_stdout_on_a_pipe_nobody_reads(small_suite, tmp_path):
    out = tmp_path / "r.json"
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `waza run ... | head -c0`
    try:
        proc = waza_with(["run", str(small_suite), "-o", str(out)], stdout=write_end)
    finally:
        os.close(write_end)
    no_traceback(proc)
    assert "Exception ignored" not in proc.stderr.decode()
    assert proc.returncode == 1
    assert len(valid_results(out.read_bytes())["tasks"]) == 2


@pytest.fixture
def saved_runs(small_suite, tmp_path):
    results = tmp_path / "saved.json"
    assert waza_with(["run", str(small_suite), "--skip-graders", "-o", str(results)]).returncode == 0
    return results


def test_grade_on_a_full_stdout_writes_o_then_exits_2(small_suite, saved_runs, tmp_path):
    full = make_device(tmp_path / "full", FULL_DEV)
    out = tmp_path / "graded.json"
    with open(full, "wb") as sink:
        proc = waza_with(["grade", str(small_suite), "--results", str(saved_runs), "-o", str(out)], stdout=sink)
    no_traceback(proc)
    assert proc.returncode == 2
    assert "cannot write the output to stdout" in proc.stderr.decode()
    assert len(valid_results(out.read_bytes())["tasks"]) == 2


@pytest.mark.parametrize("closed", [(1,), (2,)])
def test_grade_with_a_closed_stream(small_suite, saved_runs, tmp_path, closed):
    out = tmp_path / "graded.json"
    stdout = subprocess.DEVNULL if 1 in closed else subprocess.PIPE
    stderr = subprocess.DEVNULL if 2 in closed else subprocess.PIPE
    proc = waza_with(["grade", str(small_suite), "--results", str(saved_runs), "-o", str(out)],
                     close=closed, stdout=stdout, stderr=stderr)
    assert len(valid_results(out.read_bytes())["tasks"]) == 2
    if 1 in closed:
        no_traceback(proc)
        assert proc.returncode == 2  # its JSON summary (stdout) is lost
    else:
        assert proc.returncode == 0


def test_o_to_a_closed_stdout_is_refused(small_suite, tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    proc = waza_with(["run", str(small_suite), "-o", str(link)], close=(1,), stdout=subprocess.DEVNULL)
    no_traceback(proc)
    assert proc.returncode == 2 and "closed when waza started" in proc.stderr.decode()


def test_validate_and_version_survive_a_full_stdout(small_suite, tmp_path):
    full = make_device(tmp_path / "full", FULL_DEV)
    for args in (["validate", str(small_suite)], ["--version"], ["--help"]):
        with open(full, "wb") as sink:
            proc = waza_with(args, stdout=sink)
        no_traceback(proc)
        assert "Exception ignored" not in proc.stderr.decode(), args


def test_a_reporter_on_stdout_with_stderr_closed_keeps_the_results(small_suite, tmp_path):
    """Python has no sys.stderr when descriptor 2 is closed at start; moving the console off
    stdout for a reporter once failed there, silently (nowhere to print the traceback),
    with exit 1 and neither results file nor report."""
    out = tmp_path / "r.json"
    proc = waza_with(["run", str(small_suite), "-o", str(out), "--reporter", "junit"], close=(2,),
                     stderr=subprocess.DEVNULL)
    assert proc.returncode == 1  # task b fails
    assert len(valid_results(out.read_bytes())["tasks"]) == 2
    assert proc.stdout.startswith(b"<?xml") and b"<testsuites" in proc.stdout
