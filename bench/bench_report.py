"""Cost of the HTML report of a large results file, and of opening it in a browser.

    python bench/bench_report.py [--tasks 4000] [--trials 5] [--repeat 3] [--no-browser]

Generates a results file of tasks x trials runs (default 20,000), then prints the
median time to write its HTML report in-process (the reporter alone), of the whole
``waza report RESULTS --html`` command (a new process: start, JSON read, write), the
report's size, and, when Chromium and Playwright are installed, the time until the
page shows its first table page and the time a filter takes. Target on the 2-core
development machine: the report of 20,000 runs written in under 2 s; the page usable
(paged table) within a few seconds, a filter well under a second.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, median_of, table, waza_argv

sys.path.insert(0, str(REPO))

from tests.ci.big_results import big_results  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=4000)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    from waza_core.plugins import get_registry
    from waza_core.results.reporting import ResultsView

    runs = args.tasks * args.trials
    doc = big_results(args.tasks, args.trials)
    work = Path(tempfile.mkdtemp(prefix="waza-bench-report-"))
    src = work / "results.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    reporter = get_registry([]).get("reporter", "html")({})
    times = []
    for _ in range(args.repeat):
        buf = io.BytesIO()
        t0 = time.perf_counter()
        reporter.write(ResultsView(doc), buf)
        times.append(time.perf_counter() - t0)
    in_process = statistics.median(times)
    out = work / "report.html"
    wall, rss, code = median_of(args.repeat, waza_argv() + ["report", str(src), "--html", str(out)])
    rows = [("HTML reporter, in process", f"{in_process:.2f} s", "", f"{in_process / 2:.2f} of the 2 s target"),
            ("waza report --html (new process)", f"{wall:.2f} s", f"{rss:.0f} MiB",
             f"{wall / 2:.2f} of the 2 s target; exit {code}")]
    print(f"results: {runs} runs ({args.tasks} tasks x {args.trials} trials), "
          f"{src.stat().st_size / 1e6:.1f} MB JSON; report {out.stat().st_size / 1e6:.1f} MB")
    if not args.no_browser:
        rows += browser_rows(out, args.tasks)
    print(table(rows, ("what", "time", "peak memory", "note")))


def browser_rows(page_file: Path, tasks: int) -> list[tuple]:
    try:
        from tests.ci.browser import open_report
    except ImportError as exc:
        return [("browser", "skipped", "", str(exc))]
    import os

    if not os.path.exists("/usr/bin/chromium"):
        return [("browser", "skipped", "", "no /usr/bin/chromium")]
    t0 = time.perf_counter()
    with open_report(page_file) as opened:
        page = opened.page
        page.wait_for_selector("#task-rows tr")
        shown = time.perf_counter() - t0
        rows_in_dom = page.locator("#task-rows tr").count()
        t1 = time.perf_counter()
        page.fill("#filter", "task-00042")
        page.locator("#shown", has_text="1 of").wait_for()
        filtered = time.perf_counter() - t1
        errors = len(opened.errors)
    return [("browser: open until the table shows", f"{shown:.2f} s", "",
             f"{rows_in_dom} rows in the DOM for {tasks} tasks; {errors} console errors"),
            ("browser: filter by id (120 ms debounce)", f"{filtered:.2f} s", "", "")]


if __name__ == "__main__":
    main()
