"""``waza audit SUITE``: run every task once against a do-nothing agent.

The ``null`` executor (:mod:`waza_adapters.null`) answers with nothing: empty output, no
tool call, no skill use, the workspace exactly as prepared. A task that passes against it
passed without any agent work (a vacuous task), and so did every grader that passed (a
vacuous grader). Exit 1 when a task is vacuous, 0 otherwise, 2 on bad input.

No paid call is ever made: the do-nothing agent is offline, prompt graders judged by the
run's executor are "not judged" under it and reported as not audited, and a suite whose
prompt grader names a paid judge executor (``config.judge.executor``) is refused (exit 2)
before anything runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors

NULL_EXECUTOR = "null"


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)


@user_errors
def audit(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Run every task once against a do-nothing agent; report what passes anyway.

    Exit 1 when a task passes with no agent, 0 otherwise, 2 on bad input.
    """
    from waza_core.errors import ExitCode, WazaError

    if fmt not in ("text", "json"):
        raise WazaError(f"--format {fmt!r}: expected text or json")
    suite = _load(eval_file, plugin)
    with tempfile.TemporaryDirectory(prefix="waza-audit-") as tmp:
        out = Path(tmp) / "results.json"
        argv = [sys.executable, "-m", "waza_core", "run", str(suite.file), "--executor", NULL_EXECUTOR,
                "--trials", "1", "-o", str(out), "-q"]
        for p in plugin:
            argv += ["-p", p]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if not out.exists():
            sys.stderr.write(proc.stderr)
            raise typer.Exit(ExitCode.USAGE if proc.returncode == 2 else proc.returncode or 1)
        doc = json.loads(out.read_text("utf-8"))
    report = audit_report(doc, _prompt_graders(suite))
    if fmt == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(report))
    raise typer.Exit(1 if report["vacuous_tasks"] else 0)


def _load(eval_file: Path, plugins: list[str]):
    """The suite, or exit 2 with its problems; refuses a paid judge executor."""
    from waza_core.errors import ExitCode, SuiteError
    from waza_core.plugins import get_registry
    from waza_core.suite.load import load_suite

    registry = get_registry(plugins)
    try:
        suite = load_suite(eval_file, registry)
    except SuiteError as exc:
        for line in exc.problems:
            sys.stderr.write(line + "\n")
        sys.stderr.write(f"waza: {len(exc.problems)} problem(s) found\n")
        raise typer.Exit(ExitCode.USAGE) from None
    for where, spec in _all_graders(suite):
        judge = (spec.config.get("judge") or {}).get("executor") if spec.type == "prompt" else None
        if judge and judge not in (NULL_EXECUTOR, "mock"):
            cls = registry.get("executor", judge) if judge in registry.names("executor") else None
            if cls is None or getattr(cls, "paid", True):
                sys.stderr.write(f"waza: error: {where}: prompt grader {spec.name!r} names the judge executor "
                                 f"{judge!r}, which may make paid calls; waza audit never does: remove "
                                 "config.judge.executor for the audit or audit a copy without it\n")
                raise typer.Exit(ExitCode.USAGE)
    return suite


def _all_graders(suite):
    for g in suite.graders:
        yield str(suite.file), g
    for t in suite.tasks:
        for g in t.graders:
            yield str(t.file), g
        for cp in t.checkpoints:
            for g in cp.graders:
                yield str(t.file), g


def _prompt_graders(suite) -> set[str]:
    return {g.name for _, g in _all_graders(suite) if g.type == "prompt"}


def audit_report(doc: dict, prompt_graders: set[str]) -> dict:
    """``{"vacuous_tasks", "vacuous_graders", "not_audited", "tasks_audited", "executor"}``
    from a results document of a run under the do-nothing agent."""
    vacuous_tasks, vacuous_graders, not_audited = [], [], []
    for task in doc.get("tasks", []):
        tid = task.get("test_id")
        if task.get("status") == "passed":
            vacuous_tasks.append(tid)
        runs = task.get("runs") or []
        for name, val in ((runs[0].get("validations") or {}).items() if runs else ()):
            if name in prompt_graders:
                not_audited.append({"task_id": tid, "grader": name,
                                    "reason": "prompt grader: its judge is never called in an audit"})
            elif isinstance(val, dict) and val.get("passed") is True:
                vacuous_graders.append({"task_id": tid, "grader": name})
    return {"vacuous_tasks": vacuous_tasks, "vacuous_graders": vacuous_graders, "not_audited": not_audited,
            "tasks_audited": len(doc.get("tasks", [])), "executor": NULL_EXECUTOR}


def render_text(report: dict) -> str:
    lines = [f"waza audit: {report['tasks_audited']} task(s) run once against a do-nothing agent "
             "(empty answer, no tool call, no skill, workspace as prepared)"]
    if report["vacuous_tasks"]:
        lines.append(f"VACUOUS TASKS ({len(report['vacuous_tasks'])}): they pass with no agent work; "
                     "add a grader that the agent's work alone can satisfy")
        lines.extend(f"  - {t}" for t in report["vacuous_tasks"])
    else:
        lines.append("no task passes with no agent")
    if report["vacuous_graders"]:
        lines.append(f"vacuous graders ({len(report['vacuous_graders'])}): they pass with no agent work")
        lines.extend(f"  - {g['task_id']}: {g['grader']}" for g in report["vacuous_graders"])
    if report["not_audited"]:
        lines.append(f"not audited ({len(report['not_audited'])}): prompt graders (no judge is called)")
        lines.extend(f"  - {g['task_id']}: {g['grader']}" for g in report["not_audited"])
    return "\n".join(lines) + "\n"
