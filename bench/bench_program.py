"""What waza adds to program graders: a 200-task suite vs 200 raw spawns of the same grader.

Each task of a generated suite is graded by one small program grader (a Python
script that reads stdin and the grading context file). The baseline spawns that
same program the same number of times with the same stdin and a context file
written once in advance, with plain ``subprocess.run``: the cost any harness must
pay. waza's side is the whole run loop (engine build, fresh workspace per run, mock
executor, context directory, grading, stats, results document) measured in-process.
The interpreter start and suite loading, paid once per command, are shown apart.

Run:  python bench/bench_program.py [--tasks 200] [--repeat 5] [--grader python|sh] [--tmpdir DIR]
Target: ratio (waza / raw) <= 1.25, sequential and with --workers 2, for the python
grader. The sh grader (a ~1 ms spawn) shows the fixed per-task cost instead: a fresh
workspace and a fresh private context directory are a few directory operations,
whose price is the disk's (use --tmpdir /dev/shm to see it without the disk).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GRADER_PY = """\
import json, os, sys
out = sys.stdin.read()
with open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8") as f:
    ctx = json.load(f)
if ctx["output"] != out or "Mock response" not in out:
    print("unexpected output", file=sys.stderr)
    sys.exit(1)
print("ok")
"""
GRADER_SH = 'read -r first; test -s "$WAZA_GRADING_CONTEXT" && echo ok'


def make_suite(root: Path, tasks: int, kind: str) -> tuple[Path, list[str]]:
    (root / "tasks").mkdir(parents=True)
    if kind == "python":
        script = root / "grader.py"
        script.write_text(GRADER_PY)
        argv = [sys.executable, "-S", str(script)]
    else:
        argv = ["/bin/sh", "-c", GRADER_SH]
    (root / "eval.yaml").write_text(
        "name: bench-program\nskill: bench\nconfig:\n  executor: mock\n"
        "graders:\n  - type: program\n    name: small\n    config:\n"
        f"      command: {json.dumps(argv[0])}\n      args: {json.dumps(argv[1:])}\n"
        'tasks: ["tasks/*.yaml"]\n')
    for i in range(tasks):
        (root / "tasks" / f"t{i:04d}.yaml").write_text(f"id: t{i:04d}\ninputs: {{prompt: explain item {i}}}\n")
    return root / "eval.yaml", argv


def raw_spawns(argv: list[str], jobs: list[tuple[bytes, dict]], workers: int) -> float:
    def one(job: tuple[bytes, dict]) -> None:
        proc = subprocess.run(argv, input=job[0], capture_output=True, env=job[1])
        if proc.returncode != 0:
            raise SystemExit(f"raw grader failed: {proc.stderr.decode()}")

    t0 = time.perf_counter()
    if workers <= 1:
        for job in jobs:
            one(job)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, jobs))
    return time.perf_counter() - t0


def waza_engine(suite, registry, workers: int):
    """(seconds, the results document) of one in-process run of ``suite``."""
    from waza_core.results.codec import task_to_json
    from waza_core.run.engine import Engine, RunOptions

    t0 = time.perf_counter()
    outcome = Engine(suite, registry, RunOptions(parallel=workers > 1, workers=workers)).run()
    elapsed = time.perf_counter() - t0
    if outcome.summary.succeeded != outcome.summary.total_tests:
        bad = task_to_json(next(t for t in outcome.tasks if t.status != "passed"))
        raise SystemExit(f"waza run did not pass: {json.dumps(bad['runs'][0]['validations'])[:500]}")
    return elapsed, outcome


def raw_jobs(outcome, ctx_dir: Path) -> list[tuple[bytes, dict]]:
    """The same stdin as waza gave, and a context file per task written beforehand (not timed)."""
    jobs = []
    for task in outcome.tasks:
        evidence = task.runs[0].evidence()
        path = ctx_dir / f"{task.test_id}.json"
        path.write_text(json.dumps(evidence.context_json(), ensure_ascii=False), encoding="utf-8")
        env = dict(os.environ, WAZA_WORKSPACE_DIR=str(ctx_dir), WAZA_GRADING_CONTEXT=str(path))
        jobs.append((evidence.output.encode("utf-8"), env))
    return jobs


def cli_wall(eval_file: Path, workers: int) -> float:
    cmd = [sys.executable, "-m", "waza_core", "run", str(eval_file), "-q"]
    if workers > 1:
        cmd += ["--parallel", "--workers", str(workers)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"waza run failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5, help="measurements per figure (median is reported)")
    ap.add_argument("--grader", choices=("python", "sh"), default="python",
                    help="python: a script reading stdin and the context file; sh: /bin/sh one-liner")
    ap.add_argument("--tmpdir", help="TMPDIR for both sides (workspaces, context directories and files); "
                                     "a tmpfs such as /dev/shm shows the cost of the disk")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args()
    if args.tmpdir:
        os.environ["TMPDIR"] = os.path.abspath(args.tmpdir)
        tempfile.tempdir = None  # forget a cached choice

    os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    from waza_core.plugins import get_registry
    from waza_core.suite.load import load_suite

    root = Path(tempfile.mkdtemp(prefix="waza-bench-"))
    try:
        eval_file, argv = make_suite(root / "suite", args.tasks, args.grader)
        registry = get_registry()
        t0 = time.perf_counter()
        suite = load_suite(eval_file, registry)
        load_s = time.perf_counter() - t0
        _, outcome = waza_engine(suite, registry, 1)  # warm-up, and the inputs for the raw side
        ctx_dir = root / "ctx"
        ctx_dir.mkdir()
        jobs = raw_jobs(outcome, ctx_dir)
        raw_spawns(argv, jobs[:10], 1)  # warm-up

        figures = {"tasks": args.tasks, "grader": args.grader, "repeat": args.repeat,
                   "tmpdir": tempfile.gettempdir(),
                   "suite_load_s": round(load_s, 4), "modes": {}}
        print(f"waza program-grader overhead: {args.tasks} tasks, grader {args.grader}, "
              f"median of {args.repeat}, {os.cpu_count()} CPU(s), TMPDIR {tempfile.gettempdir()}")
        print(f"  suite load (once per command, not in the ratio): {load_s * 1000:.0f} ms")
        for workers in (1, 2):
            raw, waza = [], []
            for _ in range(args.repeat):  # interleaved, so drift hits both sides alike
                raw.append(raw_spawns(argv, jobs, workers))
                waza.append(waza_engine(suite, registry, workers)[0])
            r, w = statistics.median(raw), statistics.median(waza)
            cli = statistics.median(cli_wall(eval_file, workers) for _ in range(max(1, args.repeat // 2)))
            label = "sequential" if workers == 1 else f"--workers {workers}"
            figures["modes"][label] = {"raw_s": round(r, 4), "waza_s": round(w, 4), "ratio": round(w / r, 3),
                                       "per_task_overhead_ms": round((w - r) / args.tasks * 1000, 3),
                                       "cli_wall_s": round(cli, 4), "cli_ratio": round(cli / r, 3)}
            verdict = "OK" if w / r <= 1.25 else "OVER TARGET"
            print(f"  {label:<12} raw {r:7.3f} s   waza {w:7.3f} s   ratio {w / r:5.3f}  "
                  f"({(w - r) / args.tasks * 1000:+.2f} ms/task)  {verdict}   "
                  f"[whole `waza run` command: {cli:.3f} s, ratio {cli / r:.3f}]")
        if args.json:
            print(json.dumps(figures, indent=2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
