"""The first run of a suite (cold) against the next ones (warm), with and without the suite cache.

    python bench/bench_cold.py [--sizes 2000,20000,100000] [--repeat 3] [--output new|same]
                               [--load-helpers N]

The suite is bench/bench_scale.py's (mock executor, one ``contains`` check per task). Each
line is a whole ``waza run`` process, timed from spawn to exit, CPU (user + system) and
peak RSS from ``os.wait4``:

* **cold**: a fresh HOME and an empty cache folder for every run (as a CI machine starts):
  every task file is read, parsed and checked, and the suite cache is written;
* **warm**: the same suite again with the cache the cold run left (every task from the
  suite cache);
* **no cache**: ``WAZA_NO_CACHE=1``: every task file parsed and checked on every run, nothing
  written (what a cold run costs without writing the cache).

``--output new`` (the default) gives every run a results file that does not exist yet, as a
CI machine's first run has; ``--output same`` writes one file over and over (what the figures
before session 9 measured: an existing target makes ``waza run``'s output collision check
resolve every task file, a new one does not, see docs/architecture.md).

``--load-helpers N`` sets ``WAZA_LOAD_HELPERS`` for every run (``0``: cold and no-cache runs
on one CPU; unset: as many helpers as waza starts by itself, docs/large-suites.md). The CPU
column counts the helpers too (``os.wait4`` adds the children a process waited for).

Each line prints the median over ``--repeat`` runs and its ratio to the previous release's
figure (:data:`PREVIOUS`, per task: issue 15's closing figures, docs/architecture.md) where
there is one. Targets (issue 24): cold 20,000 tasks at most 150 us per task and 200 MB;
warm 100,000 tasks at most 40 us per task and 150 MB.

On a shared machine wall time follows the load of the others; CPU time is steadier, and
callgrind's instruction counts (docs/architecture.md) steadier still.

Last figures (issue 24, 2-core machine shared by eight sessions, load average 5.6 to 8, so wall
time is several times what a quiet machine gives: warm 20,000 tasks took 62 us there before):

    suite        run       wall/task  CPU/task  peak RSS
    2000 tasks   cold      5699 us    690 us    50 MiB
    2000 tasks   warm      1123 us    440 us    45 MiB
    2000 tasks   no cache  1652 us    534 us    52 MiB
    20000 tasks  cold       961 us    324 us    95 MiB
    20000 tasks  warm       769 us    203 us    82 MiB
    20000 tasks  no cache  1295 us    308 us   106 MiB

Cold over warm (CPU, 20,000 tasks): 1.6, against 496 / 62 = 8 before the fast loading path.
The load alone (callgrind, instructions per task): 2,430,000 before, 508,000 now.

Second round of issue 24 (the warm path: 651,000 -> 510,000 instructions per task of a whole
warm run, docs/architecture.md), load average 9.5 to 11, so again only CPU time means much:

    suite          run   wall/task  CPU/task  peak RSS
    20000 tasks    cold  2395 us    303 us     96 MiB
    20000 tasks    warm  1204 us    189 us     83 MiB
    100000 tasks   warm   819 us    147 us    245 MiB   (issue 24's first round, load ~8: 217 us CPU, 246 MiB)

Neither target was shown on this machine: the memory of a warm 100,000-task run (245 MiB, the
suite's specs, about 1.6 KB per task) is above 150 MB, and the times need a quiet machine.

Session 12, a quiet 2-core machine (load about 1-2), median of 3: cold 20,000 tasks 100 us of
wall per task (136 us of CPU with the helper), 91 MiB; with ``--load-helpers 0`` 127 us, 92 MiB;
the session's first tree 102 us. The cold target (150 us, 200 MB) is met here, with or without a
second CPU. Warm 100,000 tasks (whole processes, interleaved, median of 3): 7.04 s -> 6.63 s (70
-> 66 us per task), peak 223 -> 213 MiB: the warm target (40 us, 150 MB) is **not** met.

Session 19 (the snapshot of plain tasks, frozen builders, the stat helper; load average 1.2 to
1.5), median of 3, ``--sizes 20000,100000``:

    suite         run       wall/task  CPU/task  peak RSS
    20000 tasks   cold       76 us     109 us     73 MiB
    20000 tasks   warm       35 us      36 us     50 MiB
    20000 tasks   no cache   78 us     108 us     78 MiB
    100000 tasks  cold       70 us     102 us    219 MiB
    100000 tasks  warm       32 us      34 us    134 MiB
    100000 tasks  no cache   77 us     108 us    233 MiB

Both targets are met (cold 20,000 tasks 150 us and 200 MB, warm 100,000 tasks 40 us and 150 MB).
A slower hour of this host adds a fifth to a quarter to each wall time (docs/architecture.md,
"Session 19").
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from bench_scale import make_suite, measure
from common import table, waza_argv

#: (mode, tasks) -> wall us per task of the previous release (docs/architecture.md, issue 15/24)
PREVIOUS = {("cold", 20_000): 496.0, ("warm", 2_000): 126.0, ("warm", 20_000): 62.0, ("warm", 100_000): 53.0}
TARGETS = {("cold", 20_000): (150.0, 200.0), ("warm", 100_000): (40.0, 150.0)}


def _env(tmp: Path, mode: str, run: int, helpers: str | None = None) -> dict:
    # the cache and the key that seals it (XDG_STATE_HOME) under the run's HOME, as a user's are
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WAZA_NO_CACHE", "WAZA_CACHE_DIR",
                                                            "XDG_CACHE_HOME", "XDG_STATE_HOME", "WAZA_LOAD_HELPERS")}
    if helpers is not None:
        env["WAZA_LOAD_HELPERS"] = helpers
    home = tmp / f"home-{mode}-{run}"
    if mode == "cold":  # a new HOME, no cache: ~/.cache/waza does not exist yet
        shutil.rmtree(home, ignore_errors=True)
    home.mkdir(exist_ok=True)
    env["HOME"] = str(home)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")  # compiled modules cached, as an install has them
    if mode == "no cache":
        env["WAZA_NO_CACHE"] = "1"
    return env


def _run_argv(waza: list[str], suite: Path, out: Path, new: bool, runs: itertools.count) -> list[str]:
    """``waza run SUITE -q -o FILE``: a file no run wrote before when ``new``, else ``out`` itself."""
    if not new:
        return waza + ["run", str(suite), "-q", "-o", str(out.with_suffix(".json"))]
    k = next(runs)
    out.with_name(f"{out.name}-{k - 1}.json").unlink(missing_ok=True)  # the last run's, measured already
    target = out.with_name(f"{out.name}-{k}.json")
    return waza + ["run", str(suite), "-q", "-o", str(target)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,20000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="cold,warm,no cache")
    ap.add_argument("--output", choices=("new", "same"), default="new",
                    help="a results file that does not exist yet for every run (new), or one file written over (same)")
    ap.add_argument("--load-helpers", default=None, help="WAZA_LOAD_HELPERS for every run (default: unset)")
    args = ap.parse_args()
    waza = waza_argv()
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for n in [int(s) for s in args.sizes.split(",")]:
            suite = make_suite(tmp / f"s{n}", n)
            run_argv = functools.partial(_run_argv, waza, suite, tmp / f"out{n}", args.output == "new",
                                         itertools.count())
            measure(run_argv(), _env(tmp, "no cache", 0, args.load_helpers))  # compiles the modules once
            for mode in args.modes.split(","):
                runs = []
                for r in range(args.repeat):
                    env = _env(tmp, mode, 0 if mode == "warm" else r, args.load_helpers)
                    if mode == "warm" and r == 0:
                        measure(run_argv(), env)  # writes the cache the warm runs read
                    wall, cpu, rss, code = measure(run_argv(), env)
                    assert code == 0, f"waza run exited {code}"
                    runs.append((wall, cpu, rss))
                wall = statistics.median(r[0] for r in runs) / n * 1e6
                cpu = statistics.median(r[1] for r in runs) / n * 1e6
                rss = max(r[2] for r in runs)
                prev = PREVIOUS.get((mode, n))
                target = TARGETS.get((mode, n))
                rows.append((f"{n} tasks", mode, f"{wall:.0f} us", f"{cpu:.0f} us", f"{rss:.0f} MiB",
                             f"{wall / prev:.2f}" if prev else "-",
                             f"<= {target[0]:.0f} us, <= {target[1]:.0f} MB" if target else ""))
            shutil.rmtree(tmp / f"s{n}")
    print(table(rows, ("suite", "run", "wall/task", "CPU/task", "peak RSS", "wall / previous", "target")))
    helpers = "unset" if args.load_helpers is None else args.load_helpers
    print(f"results file: {args.output}; WAZA_LOAD_HELPERS {helpers}; load average after: {os.getloadavg()[0]:.2f} "
          "(2 cores; wall time grows with it, CPU less)")


if __name__ == "__main__":
    main()
