"""Readers of a large valid results file: wall time and peak memory of each command.

    python bench/bench_large_results.py [--tasks 100000] [--trials 5] [--go]

Writes two results files of tasks x trials runs (default 500,000 runs, about 38 MB each:
short runs with one grader verdict, as a large CI suite writes them; ``--go`` leaves out
``waza_version``, so the files read as waza (Go) files, through the tolerant decoder),
then runs each reader once as a new process and prints its wall time, peak RSS and exit
code: ``waza gate``, ``waza compare`` (table), ``waza report --markdown``.

Before results/stream.py (one task at a time), compare and report --markdown of such a
file took over 2 GiB and minutes; the bound asked for is 2 GB per command.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

from common import table, timed, waza_argv


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--go", action="store_true", help="files without waza_version (waza (Go) files)")
    args = parser.parse_args()
    waza = waza_argv()
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.json", Path(tmp) / "b.json"
        write_results(a, args.tasks, args.trials, 1, not args.go)
        write_results(b, args.tasks, args.trials, 2, not args.go)
        size = os.path.getsize(a) / 2**20
        print(f"{args.tasks * args.trials:,} runs per file, {size:.1f} MiB each"
              f"{' (waza (Go) files)' if args.go else ''}; load average {os.getloadavg()[0]:.2f}")
        rows = []
        for label, argv in [("gate", [*waza, "gate", "--baseline", str(a), "--current", str(b)]),
                            ("compare", [*waza, "compare", str(a), str(b)]),
                            ("report --markdown", [*waza, "report", str(a), "--markdown", str(Path(tmp) / "m.md")])]:
            wall, rss, code = timed(argv)
            rows.append((label, f"{wall:.1f} s", f"{rss:.0f} MiB", code))
        print(table(rows, ("command", "wall", "peak RSS", "exit")))


if __name__ == "__main__":
    main()
