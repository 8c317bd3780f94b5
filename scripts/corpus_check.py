#!/usr/bin/env python3
"""Check waza for Python against a folder of public waza (Go) suites and results files.

    python scripts/corpus_check.py CORPUS [--run] [--cli] [--only SUBSTRING] [-v]

For every ``eval*.yaml`` under ``CORPUS/suites`` it runs ``waza validate`` (exit 0
expected) and, with ``--run``, ``waza run --executor mock`` into a temporary folder:
exit 0 or 1, a results file that validates against ``waza schema results``, and no
run in ``error``. Every ``*.json`` under ``CORPUS/results`` is read with the results
reader and, with ``--cli``, goes through the commands that take a results file:
``waza compare F F`` (exit 0), ``waza gate --baseline F --current F`` (exit 0, or 2 when a
golden task failed), and ``waza grade`` with a small probe suite whose task ids are
those of the file (exit 0; the regraded ``-o`` file must validate against
``waza schema results``). It prints one line per file and a summary of failure
reasons, with paths, names and quoted values blanked so alike failures group.

The corpus is not part of this repository (public suites, other licences); point the
script at a local copy. Nothing here writes into the corpus.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: eval.yaml, eval.yml, eval-1.4.yaml, eval.semantic.yaml; not evaluate-x.yaml (a task)
EVAL_NAME = re.compile(r"^eval([.-][^/]*)?\.ya?ml$")


def waza(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, WAZA_NO_CACHE="1")
    return subprocess.run([sys.executable, "-m", "waza_core", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def reason_of(stderr: str) -> str:
    """A failure line with names, paths and positions blanked, to group alike failures."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and "problem(s) found" not in ln
             and ": warning: " not in ln]
    line = lines[0] if lines else "(no message)"
    line = re.sub(r"^waza: error: ", "", line)
    line = re.sub(r"^\S+?:\d+:\d+: ", "", line)
    line = re.sub(r"\(looked for [^)]*\)", "(looked for X)", line)
    line = re.sub(r"(?<![\w.])/[^\s:)]+", "PATH", line)  # absolute paths
    line = re.sub(r"'[^']*'", "X", line)
    line = re.sub(r"\{[^}]*(\}|\.\.\.$)", "{...}", line)  # a YAML mapping shown in a message
    return re.sub(r'"[^"]*"', "X", line)[:160]


def schema_problem(doc) -> str | None:
    """The first problem of ``doc`` against ``waza schema results``, or None."""
    from waza_core.suite.schema import plain_validator

    for err in plain_validator("results").iter_errors(doc):
        return f"{'/'.join(map(str, err.absolute_path))}: {err.message}"[:160]
    return None


def read_problem(path: Path) -> str | None:
    """Whether ``waza grade`` could read this results file (None when it can)."""
    from waza_core.errors import WazaError
    from waza_core.results.codec import read_results

    warnings: list[str] = []
    try:
        doc = read_results(path, warnings)
        for task in doc.tasks:
            for run in task.runs:
                run.evidence()
        if warnings:
            return f"read with {len(warnings)} warning(s), first: {warnings[0]}"[:160]
    except WazaError as exc:
        return str(exc)[:160]
    except Exception as exc:  # a reader crash is exactly what this check looks for
        return f"{type(exc).__name__}: {exc}"[:160]
    return None


#: A probe suite for ``waza grade``: one text grader any non-empty output passes.
PROBE_EVAL = """\
name: corpus-regrade-probe
skill: probe
version: "1.0"
config:
  trials_per_task: 1
  timeout_seconds: 60
  executor: mock
  model: mock
graders:
  - type: text
    name: any-output
    config:
      regex_match: ["."]
metrics:
  - name: accuracy
    weight: 1.0
    threshold: 0.5
tasks:
  - "tasks/*.yaml"
"""


def cli_problem(path: Path) -> str | None:
    """Whether ``waza compare``, ``gate`` and ``grade`` take this results file (None when they do)."""
    res = waza("compare", str(path), str(path))
    if res.returncode != 0:
        return f"compare exit {res.returncode}: {reason_of(res.stderr)}"
    res = waza("gate", "--baseline", str(path), "--current", str(path))
    if res.returncode not in (0, 2):  # 2: a golden task failed in the file itself
        return f"gate exit {res.returncode}: {reason_of(res.stderr + res.stdout)}"
    doc = json.loads(path.read_text(encoding="utf-8"))
    tasks = [t for t in doc.get("tasks") or [] if t.get("runs")]
    if not tasks:
        return None  # nothing to regrade; waza (Go) grade also refuses a file with no runs
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp)
        (suite / "tasks").mkdir()
        (suite / "eval.yaml").write_text(PROBE_EVAL, encoding="utf-8")
        for i, task in enumerate(tasks):
            (suite / "tasks" / f"t{i}.yaml").write_text(
                f"id: {json.dumps(task.get('test_id'))}\nname: t{i}\ninputs:\n  prompt: probe\n",
                encoding="utf-8")
        out = suite / "regraded.json"
        res = waza("grade", str(suite / "eval.yaml"), "-r", str(path), "-q", "-o", str(out))
        if res.returncode != 0:
            return f"grade exit {res.returncode}: {reason_of(res.stderr)}"
        problem = schema_problem(json.loads(out.read_text(encoding="utf-8")))
        if problem:
            return f"grade -o: {problem}"
    return None


def check_suite(eval_file: Path, run: bool, verbose: bool) -> tuple[str, str]:
    res = waza("validate", str(eval_file))
    if res.returncode != 0:
        return "validate", reason_of(res.stderr + res.stdout)
    if not run:
        return "ok", ""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        res = waza("run", str(eval_file), "--executor", "mock", "-q", "-o", str(out))
        if res.returncode not in (0, 1):
            return "run", reason_of(res.stderr)
        outs = sorted(Path(tmp).glob("*.json"))
        if not outs:
            return "run", "no results file written"
        for f in outs:
            doc = json.loads(f.read_text())
            problem = schema_problem(doc)
            if problem:
                return "schema", problem
            errors = [r.get("error_msg", "") for t in doc.get("tasks", []) for r in t.get("runs", [])
                      if r.get("status") == "error"]
            if errors:
                return "error-run", re.sub(r"'[^']*'", "X", errors[0])[:160]
    return "ok", ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--run", action="store_true", help="also run each suite under the mock executor")
    ap.add_argument("--cli", action="store_true",
                    help="also put each results file through waza compare, gate and grade")
    ap.add_argument("--only", default="", help="only files whose path contains this")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    evals = sorted(p for p in (args.corpus / "suites").rglob("eval*.y*ml")
                   if EVAL_NAME.match(p.name) and "tasks" not in p.parts and args.only in str(p))
    verdicts: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    for f in evals:
        verdict, reason = check_suite(f, args.run, args.verbose)
        verdicts[verdict] += 1
        if reason:
            reasons[f"{verdict}: {reason}"] += 1
        print(f"{verdict:10} {f.relative_to(args.corpus)}" + (f"\n           {reason}" if reason else ""))
    for f in sorted((args.corpus / "results").glob("*.json")):
        if args.only not in str(f):
            continue
        problem = read_problem(f) or (cli_problem(f) if args.cli else None)
        verdict = "ok" if problem is None else "results"
        verdicts[verdict] += 1
        print(f"{verdict:10} {f.relative_to(args.corpus)}" + (f"\n           {problem}" if problem else ""))
        if problem:
            reasons[f"results: {re.sub(chr(39) + '[^' + chr(39) + ']*' + chr(39), 'X', problem)}"] += 1
    print("\nverdicts:", dict(verdicts))
    for reason, n in reasons.most_common():
        print(f"{n:5}  {reason}")
    return 0 if set(verdicts) <= {"ok"} else 1


if __name__ == "__main__":
    sys.exit(main())
