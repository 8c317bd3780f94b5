"""Grading cost per run, for each registered grader type, printed as one table.

Each row of ``CASES`` builds one grader the way the engine does (registry, GraderSpec,
start) on a representative run, then times ``grade()`` on that same run ``--repeat``
times; the table shows the median and the 90th percentile per run. A registered type
with no row is listed as "no case", so a new grader shows up as a gap until someone adds
a row: one ``Case(...)`` line in ``CASES`` (see the existing ones).

The code grader is also compared with its floor: spawning the same evaluator once per
run with plain ``subprocess.run`` (what any per-run design pays), and shown with
``WAZA_CODE_WARM=1`` (evaluators kept across runs).

Run:  python bench/bench_graders.py [--repeat 30] [--only code,text]
Target: the code grader (python, one evaluator per run) <= 1.3x the raw spawn.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import table  # noqa: E402

OUTPUT = ("The deployment finished. Created app.py, tests/test_app.py and README.md. "
          "All 12 tests pass; coverage is 94%. ") * 80  # ~10 KB, a typical agent answer
TRANSCRIPT = [{"type": "assistant.message", "content": f"step {i}: ran a tool"} for i in range(50)]
TOOL_CALLS = [{"name": "bash", "arguments": {"command": f"pytest -k t{i}"}} for i in range(20)]
SKILL_MD = ("---\nname: deploy-helper\ndescription: 'Deploys Python web apps. USE FOR: \"deploy my app\", "
            "\"ship to production\". DO NOT USE FOR: local builds.'\n---\n"
            + "Build, test and deploy Python web applications to the cloud with zero downtime.\n" * 30)


class Case:
    """One benchmark row: a grader type, its config, and the run it grades.

    ``config`` may be a function of the scratch folder (for files a grader reads);
    ``prepare(folder)`` fills the run's workspace; ``env`` is set while the row runs.
    """

    def __init__(self, gtype: str, label: str, config, output: str = OUTPUT, prompt: str = "deploy my app",
                 prepare: Callable[[Path], None] | None = None, env: dict | None = None) -> None:
        self.gtype, self.label, self.config, self.output, self.prompt = gtype, label, config, output, prompt
        self.prepare, self.env = prepare, env or {}


def _workspace(folder: Path) -> None:
    ws = folder / "ws"
    for i in range(20):
        (ws / "src").mkdir(parents=True, exist_ok=True)
        (ws / "src" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n" * 50)
    (ws / "README.md").write_text("# App\nDeploy with `make deploy`.\n")
    snaps = folder / "snapshots"
    snaps.mkdir(exist_ok=True)
    for i in range(3):
        shutil.copy(ws / "src" / f"mod{i}.py", snaps / f"mod{i}.py")
    (folder / "schema.json").write_text(json.dumps(SCHEMA))
    (folder / "SKILL.md").write_text(SKILL_MD)


SCHEMA = {"type": "object", "required": ["status", "files"],
          "properties": {"status": {"enum": ["ok", "failed"]},
                         "files": {"type": "array", "items": {"type": "object", "required": ["path"]}}}}
JSON_OUTPUT = json.dumps({"status": "ok", "files": [{"path": f"src/mod{i}.py", "lines": 100} for i in range(50)]})
ASSERTIONS = ["len(output) > 100", "'tests pass' in output", "len(errors) == 0",
              "any(t['name'] == 'bash' for t in tool_calls)", "duration_ms < 60000"]
JS_ASSERTIONS = ["output.length > 100", "output.includes('tests pass')", "errors.length === 0",
                 "tool_calls.some(t => t.name === 'bash')", "duration_ms < 60000"]

CASES: list[Case] = [
    Case("text", "6 checks, 10 KB output", {"contains": ["deployment", "tests pass"], "not_contains": ["error"],
                                             "regex_match": ["(?i)coverage is \\d+%", "\\pL+\\.py"],
                                             "regex_not_match": ["Traceback"]}),
    Case("file", "7 paths + 2 content files", lambda d: {
        "must_exist": ["README.md"] + [f"src/mod{i}.py" for i in range(4)], "must_not_exist": ["build", "dist"],
        "content_patterns": [{"path": "src/mod1.py", "must_match": ["def f1"], "must_not_match": ["TODO"]},
                             {"path": "README.md", "must_match": ["(?m)^# \\w+"]}]}),
    Case("diff", "3 snapshots + fragments", lambda d: {
        "context_dir": str(d / "snapshots"),
        "expected_files": [{"path": f"src/mod{i}.py", "snapshot": f"mod{i}.py", "contains": [f"+def f{i}", "-TODO"]}
                           for i in range(3)]}),
    Case("json_schema", "5 KB output, schema_file", lambda d: {"schema_file": str(d / "schema.json")},
         output=JSON_OUTPUT),
    Case("trigger", "SKILL.md of 2.5 KB", lambda d: {"skill_path": str(d / "SKILL.md"), "mode": "positive"}),
    Case("code", "python, 5 assertions, evaluator per run", {"assertions": ASSERTIONS}),
    Case("code", "python, 5 assertions, WAZA_CODE_WARM=1", {"assertions": ASSERTIONS}, env={"WAZA_CODE_WARM": "1"}),
    Case("code", "javascript, 5 assertions, evaluator per run",
         {"language": "javascript", "assertions": JS_ASSERTIONS}),
    Case("code", "javascript, 5 assertions, WAZA_CODE_WARM=1",
         {"language": "javascript", "assertions": JS_ASSERTIONS}, env={"WAZA_CODE_WARM": "1"}),
    Case("program", "python3 -S script",
         {"command": sys.executable, "args": ["-S", "-c", "import sys; sys.stdin.read()"]}),
    Case("prompt", "cli judge (python3 -S), verdict lines", {"prompt": "Did the deployment succeed?", "judge": {
        "executor": "cli", "options": {"command": [sys.executable, "-S", "-c",
                                                   "print('{{\"waza_grade\": \"pass\"}}')"]}}}),  # {{ }}: braces
    Case("behavior", "4 rules, 20 calls", {"max_tool_calls": 50, "required_tools": ["bash"],
                                           "forbidden_tools": ["rm"], "max_duration_ms": 60000}),
    Case("action_sequence", "in order, 5 of 20 calls", {"matching_mode": "in_order_match",
                                                         "expected_actions": ["bash"] * 5}),
    Case("skill_invocation", "any order, 2 skills", {"required_skills": ["deploy-helper", "tester"],
                                                     "mode": "any_order", "allow_extra": False}),
    Case("tool_constraint", "expect/reject/allow_only + args, 20 calls", {
        "expect_tools": [{"tool": "^bash$", "command_pattern": "pytest -k t1\\d"}],
        "reject_tools": [{"tool": "bash", "command_pattern": "rm\\s+-rf"}],
        "allow_only": [{"tool": "bash", "args": {"command": {"regex": "^pytest"}}}]}),
    Case("tool_calls", "required/max + 2 expectations, 20 calls", {
        "required_tools": ["bash"], "max_calls": 30,
        "expect": [{"tool": "bash", "args": {"command": {"regex": "t19$"}}},
                   {"tool": "bash", "args": {"command": {"contains": "-k t7"}}}]}),
]


def measure(case: Case, registry, folder: Path, repeat: int) -> list[float]:
    from waza_core.grading.base import GraderSetup, GradingContext
    from waza_core.model import GraderSpec, RunEvidence, Suite, SuiteConfig, TaskSpec

    saved = {k: os.environ.get(k) for k in case.env}
    os.environ.update(case.env)
    try:
        config = case.config(folder) if callable(case.config) else case.config
        suite = Suite(name="bench", skill="bench", file=folder / "eval.yaml", config=SuiteConfig(), tasks=())
        grader = registry.get("grader", case.gtype)(GraderSpec(case.gtype, "g", config=config), suite)
        from waza_core.grading.build import executor_factory

        grader.start(GraderSetup(new_executor=executor_factory(suite, registry)))  # a judge's executor
        task = TaskSpec(id="t", name="t", prompt=case.prompt, file=folder / "t.yaml")
        evidence = RunEvidence(output=case.output, transcript=TRANSCRIPT, tool_calls=TOOL_CALLS, duration_ms=1200)
        ctx = GradingContext(task=task, evidence=evidence, workspace_dir=str(folder / "ws"), suite=suite)
        grader.grade(ctx)  # warm-up (imports, first evaluator)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            grader.grade(ctx)
            times.append(time.perf_counter() - t0)
        grader.close()
        return times
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def interleaved(language: str, assertions: list[str], registry, folder: Path, repeat: int) -> tuple[list, list]:
    """(raw spawn times, grader times), measured alternately so both see the same machine load.

    The raw side is the floor of a per-run design: start the same evaluator with plain
    ``subprocess.run``, send one run, read the verdicts."""
    from waza_core.grading.base import GraderSetup, GradingContext
    from waza_core.model import GraderSpec, RunEvidence, TaskSpec
    from waza_graders import code

    os.environ.pop("WAZA_CODE_WARM", None)
    argv = code._evaluator(language, 5.0)
    request = json.dumps({"output": OUTPUT, "outcome": {}, "transcript": TRANSCRIPT, "tool_calls": TOOL_CALLS,
                          "duration_ms": 1200, "assertions": assertions, "debug": False}).encode() + b"\n"
    grader = registry.get("grader", "code")(GraderSpec("code", "g", config={"language": language,
                                                                          "assertions": assertions}))
    grader.start(GraderSetup())
    ctx = GradingContext(task=TaskSpec(id="t", name="t", prompt="p", file=folder / "t.yaml"), workspace_dir=None,
                         evidence=RunEvidence(output=OUTPUT, transcript=TRANSCRIPT, tool_calls=TOOL_CALLS,
                                              duration_ms=1200))
    raw, ours = [], []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, input=request, capture_output=True, check=True)
        t1 = time.perf_counter()
        grader.grade(ctx)
        t2 = time.perf_counter()
        assert proc.stdout.count(b"\n") == len(assertions) + 1
        if i:  # the first pair warms caches
            raw.append(t1 - t0)
            ours.append(t2 - t1)
    return raw, ours


def ms(values: list[float], q: float = 0.5) -> str:
    values = sorted(values)
    v = statistics.median(values) if q == 0.5 else values[min(len(values) - 1, int(q * len(values)))]
    return f"{v * 1000:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--only", default="", help="comma-separated grader types")
    args = ap.parse_args()
    os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    from waza_core.plugins import build_plugin_manager

    registry = build_plugin_manager()[1]
    only = {t for t in args.only.split(",") if t}
    rows, results = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-graders-") as tmp:
        folder = Path(tmp)
        _workspace(folder)
        for case in CASES:
            if only and case.gtype not in only:
                continue
            if registry.get("grader", case.gtype) is None:
                rows.append((case.gtype, case.label, "not registered", "", ""))
                continue
            try:
                times = measure(case, registry, folder, args.repeat)
            except Exception as exc:  # e.g. node missing: say so and go on
                rows.append((case.gtype, case.label, f"skipped: {exc}", "", ""))
                continue
            results[(case.gtype, case.label)] = times
            rows.append((case.gtype, case.label, ms(times), ms(times, 0.9), f"{1 / statistics.median(times):.0f}"))
        covered = {c.gtype for c in CASES}
        for name in registry.names("grader"):
            if name not in covered and (not only or name in only):
                rows.append((name, "no case: add a Case row in bench/bench_graders.py", "", "", ""))
    print(f"grading cost per run (median of {args.repeat}; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(table(rows, ("type", "case", "median ms", "p90 ms", "runs/s")))
    if not only or "code" in only:
        print()
        compare = []
        with tempfile.TemporaryDirectory(prefix="bench-graders-") as tmp:
            for language, assertions in (("python", ASSERTIONS), ("javascript", JS_ASSERTIONS)):
                try:
                    raw, cold = interleaved(language, assertions, registry, Path(tmp), args.repeat)
                except Exception as exc:  # e.g. node missing
                    compare.append((language, f"skipped: {exc}", "", "", ""))
                    continue
                warm = results.get(("code", f"{language}, 5 assertions, WAZA_CODE_WARM=1"))
                ratio = statistics.median(cold) / statistics.median(raw)
                compare.append((language, ms(raw), ms(cold), f"{ratio:.2f}", ms(warm) if warm else "-"))
        print("code grader vs its floor (the same evaluator spawned per run with subprocess.run, measured "
              "alternately); target ratio <= 1.3")
        print(table(compare, ("language", "raw spawn ms", "grader ms", "ratio", "warm grader ms")))


if __name__ == "__main__":
    main()
