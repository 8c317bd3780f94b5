"""Cost of the HTML report of a large results file, and of opening it in a browser.

    python bench/bench_report.py [--tasks 4000] [--trials 5] [--repeat 5] [--no-browser]

Generates a results file of tasks x trials runs (default 20,000, with outputs,
transcripts and tool events), then prints medians of:

- the whole ``waza report RESULTS --html OUT`` command, a new process from start to
  exit: wall time, CPU time (user + system: what the command costs whatever else the
  machine is doing) and peak memory; the same for an empty results file (start-up
  alone) and for the same runs written as waza (Go) writes them (no ``waza_version``:
  the tolerant decoder runs too);
- inside the process: reading the file, its light outline, the index, the page;
- when Chromium and Playwright are installed: the time from navigation start until the
  first page of task rows is on screen (the page's ``waza:first-rows`` mark), until the
  whole page has loaded, to open a task (its runs parsed and shown) and to filter.

Target on the 2-core development machine: the whole command well under 2 s for 20,000
runs, the first rows on screen well under a second. Wall times depend on how busy the
machine is (the load average is printed); CPU times much less.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, table, waza_argv

sys.path.insert(0, str(REPO))

from tests.reporters.big_results import big_results  # noqa: E402


def child_env() -> dict[str, str]:
    """The environment of the timed commands: bytecode may be cached, as in any installation."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(argv: list[str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MiB, exit code) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def command_row(label: str, argv: list[str], repeat: int) -> tuple:
    timed(argv)  # warm-up: bytecode written, file in the page cache
    runs = [timed(argv) for _ in range(repeat)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return (label, f"{wall:.2f} s", f"{cpu:.2f} s", f"{max(r[2] for r in runs):.0f} MiB",
            f"exit {runs[-1][3]}; wall {wall / 2:.2f} of the 2 s target")


def in_process_rows(src: Path, go_src: Path, doc: dict, repeat: int) -> list[tuple]:
    from waza_core.plugins import get_registry
    from waza_core.results.io import read_bytes
    from waza_core.results.load import open_results
    from waza_core.results.outline import outline
    from waza_core.results.reporting import ResultsView

    reporter = get_registry([]).get("reporter", "html")({})
    steps = {"read the file": lambda: read_bytes(src),
             "outline (validate all, decode the summary fields)": lambda: outline(read_bytes(src), str(src)),
             "open + write the whole page": lambda: reporter.write(open_results(src), io.BytesIO()),
             "the same, waza (Go) file": lambda: reporter.write(open_results(go_src), io.BytesIO()),
             "page of a live run (waza run --reporter html)": lambda: reporter.write(ResultsView(doc), io.BytesIO())}
    rows = []
    for label, step in steps.items():
        cpu = []
        for _ in range(repeat):
            c0 = time.process_time()
            step()
            cpu.append(time.process_time() - c0)
        rows.append((f"  in process: {label}", "", f"{statistics.median(cpu):.2f} s", "", ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=4000)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    runs = args.tasks * args.trials
    load_before = os.getloadavg()[0]
    doc = big_results(args.tasks, args.trials)
    work = Path(tempfile.mkdtemp(prefix="waza-bench-report-"))
    src = work / "results.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    go_src = work / "results-go.json"
    go_src.write_text(json.dumps({k: v for k, v in doc.items() if k != "waza_version"}), encoding="utf-8")
    empty = work / "empty.json"
    empty.write_text('{"tasks": []}', encoding="utf-8")
    out = work / "report.html"
    waza = waza_argv()
    rows = [
        command_row(f"waza report --html, {runs} runs", waza + ["report", str(src), "--html", str(out)],
                    args.repeat),
        command_row("  the same, an empty results file (start-up alone)",
                    waza + ["report", str(empty), "--html", str(work / "empty.html")], args.repeat),
        command_row("  the same runs as waza (Go) writes them",
                    waza + ["report", str(go_src), "--html", str(work / "go.html")], args.repeat),
    ]
    rows += in_process_rows(src, go_src, doc, args.repeat)
    print(f"results: {runs} runs ({args.tasks} tasks x {args.trials} trials), "
          f"{src.stat().st_size / 1e6:.1f} MB JSON; report {out.stat().st_size / 1e6:.1f} MB; "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(table(rows, ("what", "wall", "CPU", "peak memory", "note")))
    if not args.no_browser:
        print()
        print(table(browser_rows(out, args.tasks, args.repeat), ("in headless Chromium", "median", "note")))


def browser_rows(page_file: Path, tasks: int, repeat: int) -> list[tuple]:
    try:
        from tests.reporters.browser import open_report, page_timings
    except ImportError as exc:
        return [("browser", "skipped", str(exc))]
    if not os.path.exists("/usr/bin/chromium"):
        return [("browser", "skipped", "no /usr/bin/chromium")]
    first, loaded, opened_task, filtered = [], [], [], []
    with open_report(page_file, timeout_ms=120000) as opened:
        page = opened.page
        for i in range(repeat):
            if i:
                page.reload(wait_until="load")
            timings = page_timings(page)
            first.append(timings["first_rows_ms"])
            loaded.append(timings["load_ms"])
            t0 = time.perf_counter()
            page.locator("#task-rows tr.task-row").nth(i % 10).click()
            page.locator("#detail .run").first.wait_for()
            opened_task.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            page.fill("#filter", f"task-{i:05d}")
            page.locator("#shown", has_text="1 of").wait_for()
            filtered.append((time.perf_counter() - t0) * 1000)
            if not i:
                page.fill("#filter", "")
                page.locator("#shown", has_text=f"{tasks} of").wait_for()
                rows_in_dom = page.locator("#task-rows tr").count()
        errors = len(opened.errors)
    med = statistics.median
    return [("first task rows on screen (from navigation start)", f"{med(first):.0f} ms",
             f"{tasks} tasks, {rows_in_dom} rows in the DOM; {errors} console errors"),
            ("whole page loaded (every task's JSON parsed as HTML)", f"{med(loaded):.0f} ms", ""),
            ("open a task (parse its runs, show 5 trials)", f"{med(opened_task):.0f} ms", "click to runs shown"),
            ("filter by id", f"{med(filtered):.0f} ms", "of which 120 ms is the typing debounce")]


if __name__ == "__main__":
    main()
