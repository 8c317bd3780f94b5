"""Readers of a large valid results file: wall time and peak memory of each command.

    python bench/bench_large_results.py [--tasks 100000] [--trials 5] [--go] [--suite-tasks 1000]

Writes two results files of tasks x trials runs (default 500,000 runs, about 38 MB each:
short runs with one grader verdict, as a large CI suite writes them; ``--go`` leaves out
``waza_version``, so the files read as waza (Go) files, through the tolerant decoder),
then runs each reader once as a new process, under a 2 GB address-space limit (RLIMIT_AS,
as the hostile-input checks run them), and prints its wall time, CPU time, peak RSS and exit
code: ``waza gate``, ``waza compare`` (table), ``waza report --markdown`` and ``waza grade
-o`` with a suite of ``--suite-tasks`` tasks (their runs are graded again by a text grader;
the other tasks are carried into the ``-o`` file).

Before results/stream.py (one task at a time), compare and report --markdown of such a
file took over 2 GiB and minutes; the bound asked for is 2 GB per command.

Figures (500,000 runs, 52.9 MiB files, 2-core machine shared at load average ~9: wall is 3-5 x
CPU, so read CPU): gate 29.3 s wall / 6.8 s CPU / 868 MiB; compare 67.7 s / 17.0 s / 495 MiB
(the significance test's normal limit beyond 2,000 tasks; before it, over 12 minutes);
report --markdown 15.0 s / 3.7 s / 88 MiB; grade -o with a 1,000-task suite 126.5 s / 23.7 s /
133 MiB (before run/regrade_stream.py: 1,931 MiB and 38.7 s CPU, out of memory under 2 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

from common import table, timed_usage, waza_argv


def write_results(path: Path, tasks: int, trials: int, seed: int, ours: bool) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        head = {"schemaVersion": "1.5", "eval_name": "large", "skill": "bench"}
        if ours:
            head["waza_version"] = "0.1.0"
        fh.write(json.dumps(head)[:-1] + ',"tasks":[')
        for t in range(tasks):
            runs = []
            for i in range(trials):
                ok = rng.random() < 0.8
                runs.append({"run_number": i + 1, "status": "passed" if ok else "failed",
                             "duration_ms": rng.randint(1, 999),
                             "validations": {"g": {"score": 1.0 if ok else 0.0, "passed": ok}}})
            status = "passed" if all(r["status"] == "passed" for r in runs) else "failed"
            fh.write(("," if t else "") + json.dumps({"test_id": f"t{t:06d}", "status": status, "runs": runs},
                                                     separators=(",", ":")))
        fh.write("]}\n")


def write_suite(root: Path, tasks: int) -> Path:
    """A suite of the file's first ``tasks`` task ids, one text grader."""
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text("name: large\nskill: bench\nconfig: {executor: mock}\n"
                                    "graders: [{type: text, name: g, config: {contains: [x]}}]\n"
                                    "tasks: ['tasks/*.yaml']\n")
    for t in range(tasks):
        (root / "tasks" / f"t{t:06d}.yaml").write_text(f"id: t{t:06d}\ninputs: {{prompt: p}}\n")
    return root / "eval.yaml"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--go", action="store_true", help="files without waza_version (waza (Go) files)")
    parser.add_argument("--suite-tasks", type=int, default=1000, help="tasks of the suite `waza grade` uses")
    parser.add_argument("--cap-gb", type=float, default=2.0, help="address-space limit of each command (0: none)")
    args = parser.parse_args()
    waza = waza_argv()
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.json", Path(tmp) / "b.json"
        write_results(a, args.tasks, args.trials, 1, not args.go)
        write_results(b, args.tasks, args.trials, 2, not args.go)
        size = os.path.getsize(a) / 2**20
        print(f"{args.tasks * args.trials:,} runs per file, {size:.1f} MiB each"
              f"{' (waza (Go) files)' if args.go else ''}; load average {os.getloadavg()[0]:.2f}")
        suite = write_suite(Path(tmp) / "suite", min(args.suite_tasks, args.tasks))
        cap = int(args.cap_gb * 2**30) or None
        print(f"each command limited to {args.cap_gb:g} GB of address space" if cap else "no memory limit")
        rows = []
        for label, argv in [("gate", [*waza, "gate", "--baseline", str(a), "--current", str(b)]),
                            ("compare", [*waza, "compare", str(a), str(b)]),
                            ("report --markdown", [*waza, "report", str(a), "--markdown", str(Path(tmp) / "m.md")]),
                            (f"grade -o ({min(args.suite_tasks, args.tasks):,} suite tasks)",
                             [*waza, "grade", str(suite), "-r", str(a), "-o", str(Path(tmp) / "g.json")])]:
            wall, cpu, rss, code = timed_usage(argv, memory_cap=cap)
            rows.append((label, f"{wall:.1f} s", f"{cpu:.1f} s", f"{rss:.0f} MiB", code))
            print(table(rows[-1:], ("command", "wall", "CPU", "peak RSS", "exit")), flush=True)
        print(table(rows, ("command", "wall", "CPU", "peak RSS", "exit")))


if __name__ == "__main__":
    main()
