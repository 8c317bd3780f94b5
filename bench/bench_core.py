"""End-to-end cost of ``waza run`` on generated suites (mock executor, text graders).

    python bench/bench_core.py [--repeat 5]

Prints wall time (median, cold start included: a new process each time), per-task
overhead, peak memory, and the wall time of ``waza --version``. Each size is measured
twice: as a user sees it on the second and later runs (the suite cache of checked files
is warm, see waza_core/suite/cache.py) and with the cache off (``WAZA_NO_CACHE=1``),
which is what every first run of a changed suite costs. Targets on the 2-core
development machine: 2000 tasks under 1.0 s, ``--version`` under 100 ms, peak memory
under 150 MB.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from common import median_of, table, waza_argv

EVAL = """name: bench-{n}
skill: bench
config: {{executor: mock, trials_per_task: 1, timeout_seconds: 30}}
graders:
  - type: text
    name: mentions_mock
    config: {{contains: ["mock response"]}}
tasks: ["tasks/*.yaml"]
"""

TASK = """id: task-{i:05d}
name: Task {i}
tags: [bench, group-{g}]
inputs:
  prompt: "Explain item {i} in two sentences."
graders:
  - type: text
    name: checks
    config:
      contains: ["item {i}"]
      regex_match: ["(?i)explain"]
"""


def make_suite(root: Path, n: int) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text(EVAL.format(n=n))
    for i in range(n):
        (root / "tasks" / f"t{i:05d}.yaml").write_text(TASK.format(i=i, g=i % 7))
    return root / "eval.yaml"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default="100,2000")
    args = ap.parse_args()
    waza = waza_argv()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = None
        for n in [int(s) for s in args.sizes.split(",")]:
            suite = make_suite(Path(tmp) / f"s{n}", n)
            out = Path(tmp) / f"out{n}.json"
            wall, rss, code = median_of(args.repeat, waza + ["run", str(suite), "-q", "-o", str(out)])
            assert code == 0, f"waza run exited {code}"
            base = base or wall
            target = " (target < 1.0 s)" if n == 2000 else ""
            rows.append((f"waza run, {n} tasks", f"{wall * 1000:.0f} ms{target}", f"{wall / n * 1e6:.0f} us",
                         f"{rss:.0f} MiB", f"{wall / base:.2f}x"))
            nocache = dict(os.environ, WAZA_NO_CACHE="1")
            wall2, rss2, _ = median_of(args.repeat, waza + ["run", str(suite), "-q", "-o", str(out)], env=nocache)
            rows.append(("  same, suite cache off", f"{wall2 * 1000:.0f} ms", f"{wall2 / n * 1e6:.0f} us",
                         f"{rss2:.0f} MiB", f"{wall2 / base:.2f}x"))
        wall, rss, _ = median_of(args.repeat * 2, waza + ["--version"])
        rows.append(("waza --version", f"{wall * 1000:.0f} ms (target < 100 ms)", "-", f"{rss:.0f} MiB", "-"))
        wall, rss, _ = median_of(args.repeat * 2, waza + ["--help"])
        rows.append(("waza --help", f"{wall * 1000:.0f} ms (target < 100 ms)", "-", f"{rss:.0f} MiB", "-"))
    print(table(rows, ("what", "median wall", "per task", "peak RSS", "vs first")))


if __name__ == "__main__":
    main()
