"""The do-nothing control of a suite: what ``waza audit`` and ``waza run --audit`` both do.

Every task is run once against the ``null`` executor (:mod:`waza_adapters.null`): an
empty answer, no tool call, no skill use, the workspace exactly as prepared. A task that
passes against it is vacuous (it passes whatever the agent does), and so is every grader
that passes (a vacuous grader). The run is a child ``waza run --executor null --trials 1``
from the current folder, so relative script paths resolve as in the real run and nothing
of the parent run (its journal, cache, reporters) is touched.

No paid call is ever made: prompt graders judged by the run's executor are "not judged"
under ``null`` and reported as not audited, and a prompt grader that names a paid judge
executor (``config.judge.executor``) is refused before anything runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError

NULL_EXECUTOR = "null"
#: characters of the child run's stderr shown when it wrote no results
STDERR_TAIL = 2000


class AuditRunFailed(WazaError):
    """The do-nothing run wrote no results (the suite failed to load in the child, say)."""

    def __init__(self, message: str, returncode: int, stderr: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def all_graders(suite) -> Iterator[tuple[str, Any]]:
    """(file, grader spec) of every grader of the suite: suite-level, per task, per checkpoint."""
    for g in suite.graders:
        yield str(suite.file), g
    for t in suite.tasks:
        for g in t.graders:
            yield t.filename, g
        for cp in t.checkpoints:
            for g in cp.graders:
                yield t.filename, g


def paid_judge_problem(suite, registry) -> str | None:
    """Why the audit refuses this suite (a prompt grader with a judge executor that may make
    paid calls), or None."""
    for where, spec in all_graders(suite):
        judge = (spec.config.get("judge") or {}).get("executor") if spec.type == "prompt" else None
        if judge and judge not in (NULL_EXECUTOR, "mock"):
            cls = registry.get("executor", judge) if judge in registry.names("executor") else None
            if cls is None or getattr(cls, "paid", True):
                return (f"{where}: prompt grader {spec.name!r} names the judge executor {judge!r}, which may make "
                        "paid calls; an audit never does: remove config.judge.executor for the audit or audit a "
                        "copy without it")
    return None


def prompt_graders(suite) -> set[str]:
    return {g.name for _, g in all_graders(suite) if g.type == "prompt"}


def null_run(suite_file: Path, plugins: Sequence[str] = (), run_args: Sequence[str] = ()) -> dict:
    """The results document of the suite run once per task against the do-nothing agent.

    ``run_args``: more ``waza run`` options for the child (``--task``, ``--tags``,
    ``--context-dir`` of the real run, so both see the same tasks)."""
    with tempfile.TemporaryDirectory(prefix="waza-audit-") as tmp:
        out = Path(tmp) / "results.json"
        argv = [sys.executable, "-m", "waza_core", "run", str(suite_file), "--executor", NULL_EXECUTOR,
                "--trials", "1", "-o", str(out), "-q", *run_args]
        for p in plugins:
            argv += ["-p", p]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if not out.exists():
            raise AuditRunFailed(f"the audit run (executor {NULL_EXECUTOR!r}) wrote no results (exit "
                                 f"{proc.returncode}): {proc.stderr.strip()[-STDERR_TAIL:]}",
                                 proc.returncode, proc.stderr)
        return json.loads(out.read_text("utf-8"))


def audit_report(doc: dict, prompt_names: set[str]) -> dict:
    """``{"vacuous_tasks", "vacuous_graders", "not_audited", "tasks_audited", "executor"}``
    from a results document of a run under the do-nothing agent."""
    vacuous_tasks, vacuous_graders, not_audited = [], [], []
    for task in doc.get("tasks", []):
        tid = task.get("test_id")
        if task.get("status") == "passed":
            vacuous_tasks.append(tid)
        runs = task.get("runs") or []
        for name, val in ((runs[0].get("validations") or {}).items() if runs else ()):
            if name in prompt_names:
                not_audited.append({"task_id": tid, "grader": name,
                                    "reason": "prompt grader: its judge is never called in an audit"})
            elif isinstance(val, dict) and val.get("passed") is True:
                vacuous_graders.append({"task_id": tid, "grader": name})
    return {"vacuous_tasks": vacuous_tasks, "vacuous_graders": vacuous_graders, "not_audited": not_audited,
            "tasks_audited": len(doc.get("tasks", [])), "executor": NULL_EXECUTOR}


def audit_suite(suite, registry, plugins: Sequence[str] = (), run_args: Sequence[str] = ()) -> dict:
    """The audit report of a loaded suite (:func:`audit_report`); a paid judge is a WazaError."""
    problem = paid_judge_problem(suite, registry)
    if problem:
        raise WazaError(problem)
    models = list(suite.config.models or ())
    if len(models) > 1:  # one results document: the do-nothing agent answers every model alike
        run_args = [*run_args, "--model", models[0]]
    return audit_report(null_run(suite.file, plugins, run_args), prompt_graders(suite))


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
