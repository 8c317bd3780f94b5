"""Helpers for the benchmarks: timing child processes with their peak memory."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def waza_argv() -> list[str]:
    exe = Path(sys.executable).parent / "waza"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "waza_core"]


def timed(argv: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB, exit code) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def timed_usage(argv: list[str], cwd: Path | None = None, env: dict | None = None,
                memory_cap: int | None = None) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MiB, exit code) of one child process;
    ``memory_cap``: its address space limit in bytes (RLIMIT_AS), as a hostile-input check sets it."""
    import resource

    def cap() -> None:
        if memory_cap:
            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=cap if memory_cap else None)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def median_of(n: int, argv: list[str], **kw) -> tuple[float, float, int]:
    runs = [timed(argv, **kw) for _ in range(n)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def table(rows: list[tuple], headers: tuple) -> str:
    cells = [headers] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(cells[0]), line(tuple("-" * w for w in widths))] + [line(r) for r in cells[1:]])
