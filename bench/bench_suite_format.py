"""Costs of today's suite format: tasks_from rows, prompt templates, warnings, migrate.

Figures, in-process (median of --repeat):

* a ``tasks_from`` CSV of --rows rows with ``range: [1, 10]``: load time and peak
  Python memory, against the same file read whole by ``csv.reader`` (the floor any
  loader pays if it reads everything). Target: the ranged load costs < 1% of the full
  read: reading stops after the range.
* the same CSV without a range: tasks loaded per second, and per row against a bare
  ``csv.DictReader`` pass (ratio).  Target: ratio <= 10 (a TaskSpec per row, a
  template per prompt; measured 7.8 on a busy 2-core machine, 25.7 before the
  one-regex fast path of plain-field templates).
* ``template.render`` of a three-variable prompt: microseconds per render.
* a 1.x eval with 50 unknown keys (50 warnings, positions looked up) against the same
  eval without them: load time ratio. Target: <= 4 (the YAML is composed once for all
  positions; it was 33 when each warning parsed the file again).
* ``waza migrate`` planning of an eval.yaml with 2,000 comment lines: milliseconds.

Run:  python bench/bench_suite_format.py [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import table  # noqa: E402

EVAL = "name: bench\nskill: s\ninputs: {tone: kind}\ntasks_from: rows.csv\n"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    os.environ["WAZA_NO_CACHE"] = "1"
    os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    from waza_core.plugins import build_plugin_manager
    from waza_core.suite import migrate, template
    from waza_core.suite.load import load_suite

    registry = build_plugin_manager()[1]
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "rows.csv"
        with open(data, "w", newline="") as fh:
            fh.write("id,prompt,name\n")
            fh.writelines(f"r{i},\"Write a {{{{.Vars.tone}}}} note to {{{{.Vars.name}}}}\",n{i}\n"
                          for i in range(args.rows))
        size_mb = data.stat().st_size / 1e6

        def full_read():
            with open(data, newline="") as fh:
                for _ in csv.reader(fh):
                    pass

        (root / "eval.yaml").write_text(EVAL + "range: [1, 10]\n")
        ranged = best(lambda: load_suite(root / "eval.yaml", registry), args.repeat)
        ranged_mem = peak(lambda: load_suite(root / "eval.yaml", registry))
        floor = best(full_read, args.repeat)
        rows.append((f"tasks_from, {args.rows:,} rows ({size_mb:.0f} MB), range [1, 10]",
                     f"{ranged * 1000:.1f} ms", f"{ranged_mem / 1e6:.1f} MB peak",
                     f"{ranged / floor * 100:.2f}% of a full csv read ({floor * 1000:.0f} ms)"))

        small = max(1, min(args.rows, 100_000))
        (root / "eval.yaml").write_text(EVAL + f"range: [1, {small}]\n")
        whole = best(lambda: load_suite(root / "eval.yaml", registry), 1)

        def dict_read():
            with open(data, newline="") as fh:
                for i, _ in enumerate(csv.DictReader(fh)):
                    if i + 1 >= small:
                        break

        bare = best(dict_read, args.repeat)
        rows.append((f"tasks_from, {small:,} rows loaded as tasks", f"{whole * 1000:.0f} ms",
                     f"{small / whole:,.0f} tasks/s", f"ratio {whole / bare:.1f} vs csv.DictReader"))

        ctx = template.Context(vars={"tone": "kind", "name": "Ann", "x": "1"}, task_name="row-1")
        text = "Write a {{.Vars.tone}} note to {{.Vars.name}} ({{.TaskName}})"
        n = 50_000
        per = best(lambda: [template.render(text, ctx) for _ in range(n)], args.repeat) / n
        rows.append(("template.render, 3 actions", f"{per * 1e6:.1f} µs", "", ""))

        suite = root / "w"
        (suite / "tasks").mkdir(parents=True)
        (suite / "tasks" / "t.yaml").write_text("id: t\ninputs: {prompt: hi}\n")
        clean = "name: w\nskill: s\ntasks: [tasks/*.yaml]\n"
        noisy = clean + "".join(f"unknown_{i}: {i}\n" for i in range(50))
        (suite / "eval.yaml").write_text(clean)
        t_clean = best(lambda: load_suite(suite / "eval.yaml", registry), args.repeat)
        (suite / "eval.yaml").write_text(noisy)
        t_noisy = best(lambda: load_suite(suite / "eval.yaml", registry), args.repeat)
        rows.append(("1.x eval with 50 unknown keys (warnings)", f"{t_noisy * 1000:.1f} ms",
                     f"clean {t_clean * 1000:.1f} ms", f"ratio {t_noisy / t_clean:.2f}"))

        big = suite / "eval.yaml"
        big.write_text("".join(f"# comment line {i}\n" for i in range(2000)) + clean + "config: {max_workers: 2}\n")
        t_mig = best(lambda: migrate.plan(big), args.repeat)
        rows.append(("waza migrate plan, 2,000 comment lines", f"{t_mig * 1000:.1f} ms", "", ""))
    print(table(rows, ("case", "time", "", "")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
