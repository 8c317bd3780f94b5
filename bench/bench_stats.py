"""Which statistics come from numpy/scipy, and which stay closed-form formulas?

    python bench/bench_stats.py [--repeat 7]

For the standard deviation, the Wilson interval and the bootstrap interval of one task,
prints the cost of the plain-Python way (``PY_*`` below, the formulas waza_core used
before) and of the library way, the import cost of each library (CPU time of a fresh
interpreter importing it, median, minus a bare one: wall time moves with machine load,
CPU time much less), the projected cost for suites of 100 and 2000 tasks, and the
largest difference between the numbers. docs/dependencies.md records the outcome:
numpy for the bootstrap (imported only when a task has 2+ runs), the two formulas kept.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import table  # noqa: E402

from waza_core.results import stats  # noqa: E402

B = stats.BOOTSTRAP_SAMPLES


def PY_std(xs):  # noqa: N802 - the plain-Python reference
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def PY_bootstrap(xs):  # noqa: N802
    rng = random.Random(stats.BOOTSTRAP_SEED)
    n = len(xs)
    means = sorted(sum(rng.choices(xs, k=n)) / n for _ in range(B))
    return means[int(0.025 * B)], means[min(int(0.975 * B), B - 1)]


def NP_std(xs):  # noqa: N802
    import numpy as np

    return float(np.std(xs))


def SCIPY_wilson(k, n):  # noqa: N802
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def import_cpu_ms(module: str, repeat: int) -> float:
    def cpu(code: str) -> float:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        return (usage.ru_utime + usage.ru_stime) * 1000
    base = statistics.median(cpu("pass") for _ in range(repeat))
    return max(0.0, statistics.median(cpu(f"import {module}") for _ in range(repeat)) - base)


def cpu_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append((time.process_time() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; all times are CPU ms\n")
    rows = [(m, f"{import_cpu_ms(m, args.repeat):.0f} ms") for m in ("math, random", "numpy", "scipy.stats")]
    print(table(rows, ("import", "cost")))
    print()
    NP_std([1.0])
    SCIPY_wilson(1, 2)  # imports paid above, not here
    rnd = random.Random(7)
    rows, diffs = [], []
    for trials in (1, 3, 10):
        xs = [rnd.random() for _ in range(trials)]
        k = sum(x > 0.5 for x in xs)
        cases = [("std dev", lambda xs=xs: PY_std(xs), lambda xs=xs: NP_std(xs)),
                 ("wilson", lambda k=k, n=trials: stats.wilson(k, n), lambda k=k, n=trials: SCIPY_wilson(k, n))]
        if trials >= 2:
            cases.append(("bootstrap", lambda xs=xs: PY_bootstrap(xs), lambda xs=xs: stats.bootstrap(xs)))
        for name, py, lib in cases:
            a, b = cpu_ms(py, args.repeat), cpu_ms(lib, args.repeat)
            rows.append((f"{name}, {trials} trial(s)", f"{a:.3f} ms", f"{b:.3f} ms",
                         f"{a * 2000:.0f} ms", f"{b * 2000:.0f} ms"))
        diffs.append((f"std dev, {trials}", abs(PY_std(xs) - NP_std(xs))))
        w, sw = stats.wilson(k, trials), SCIPY_wilson(k, trials)
        diffs.append((f"wilson, {trials}", max(abs(w["lower"] - sw[0]), abs(w["upper"] - sw[1]))))
        if trials >= 2:
            lo, hi = PY_bootstrap(xs)
            b = stats.bootstrap(xs)
            diffs.append((f"bootstrap, {trials} (another random stream)", max(abs(b["lower"] - lo),
                                                                              abs(b["upper"] - hi))))
    print(table(rows, ("one task", "plain Python", "library", "Python x 2000 tasks", "library x 2000 tasks")))
    print()
    print(table([(k, f"{v:.3g}") for k, v in diffs], ("number, trials", "largest difference")))


if __name__ == "__main__":
    main()
