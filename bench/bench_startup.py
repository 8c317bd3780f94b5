"""Start-up of the commands a user types first: wall and CPU time of whole processes.

    python bench/bench_startup.py [--repeat 11]

Runs, as new processes and each ``--repeat`` times (after one warm-up run that writes the
bytecode and the suite cache): ``python -c pass`` (the floor), ``waza --help``,
``waza run --help``, ``waza validate`` of a small suite (examples/quickstart) and ``waza run``
of it (mock executor, results into a temporary folder), and prints
the median and the best wall and CPU time of each. ``PYTHONDONTWRITEBYTECODE`` is removed
from the children's environment: with it every start compiles waza's modules again.

On a shared, loaded machine read the CPU column (wall time there is mostly waiting for a
core); the target of issue 24 is under 100 ms of wall on a quiet machine.

Figures (2-core machine at load average ~11, 11 runs; instructions by callgrind):
``waza validate`` of examples/quickstart: CPU median 580 ms before the start-up work of
issue 24's second round (1,117 M instructions), 343 ms after (715 M); ``python -c pass``
40 M instructions.
Session 7 (lazy built-in plugins, ``waza run`` without typer), load ~2, 11 runs: validate CPU
median 209 -> 194 ms (716 M -> 652 M instructions; 634 M with the faster hook lookup), run
252 -> 225 ms (897 M -> 760 M; 742 M); at
load 1.4: ``python -c pass`` 13 ms, ``--help`` 24 ms, validate 195 ms wall, run 245 ms wall.
Session 12 (attrs' methods compiled once, the collector's last pass spared, the suite cache's
seal; docs/architecture.md), load ~1, 15 runs, two rounds: validate CPU median 149 / 149 ms ->
104 / 103 ms (best 96-101 ms; 577 M -> 450 M instructions before the seal), run 173 / 201 ->
118 / 124 ms (698 M -> 544 M).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from common import REPO, table, timed_usage, waza_argv


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    waza = waza_argv()
    suite = REPO / "examples" / "quickstart" / "eval.yaml"
    commands = [("python -c pass", [sys.executable, "-c", "pass"]),
                ("waza --help", [*waza, "--help"]),
                ("waza run --help", [*waza, "run", "--help"]),
                ("waza validate (quickstart)", [*waza, "validate", str(suite)])]
    out = Path(tempfile.mkdtemp(prefix="waza-bench-startup-")) / "results.json"
    commands.append(("waza run (quickstart, mock)", [*waza, "run", str(suite), "-o", str(out), "-q"]))
    rows = []
    for label, argv in commands:
        timed_usage(argv, env=env)  # warm-up: bytecode, suite cache
        runs = [timed_usage(argv, env=env) for _ in range(args.repeat)]
        walls, cpus = [r[0] * 1000 for r in runs], [r[1] * 1000 for r in runs]
        rows.append((label, f"{statistics.median(walls):.0f} ms", f"{min(walls):.0f} ms",
                     f"{statistics.median(cpus):.0f} ms", f"{min(cpus):.0f} ms", runs[-1][3]))
    print(f"{args.repeat} runs each; load average {os.getloadavg()[0]:.2f}")
    print(table(rows, ("command", "wall median", "wall best", "CPU median", "CPU best", "exit")))
    shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
