"""Process helpers shared by the tests that check children and grandchildren are gone.

``exit_watch`` is an autouse fixture for a test module of :mod:`waza_core.procs`: the module opts in
by binding it (``exit_watch = proc_helpers.exit_watch``), and each of its tests then runs twice.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as dead)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(params=["pidfd", "waiter-thread"], autouse=True)
def exit_watch(request, monkeypatch):
    """Run every test with both exit notifications (pidfd on Linux, thread elsewhere)."""
    from waza_core import procs

    if request.param == "pidfd" and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd on this platform")
    monkeypatch.setattr(procs, "_USE_PIDFD", request.param == "pidfd")
    return request.param
