"""``waza preflight``: what a run would need, checked from local files only.

The report is waza (Go)'s ``waza.preflight`` 1.0 document (``schemas/preflight.schema.json``):
``kind``, ``schemaVersion``, ``source``, ``executor``, ``complete`` (the inventory was
examined in full; never "the suite is good"), ``tasks`` (with their descriptive
``requirements``), ``capabilities`` (static: what the executor implements), ``dependencies``
(locked graders, MCP mocks, hooks) and ``diagnostics``, each in a ``state``: ``verified`` (a
static check passed), ``unresolved`` (cannot be known offline: credentials, live services,
hooks), ``unsupported`` or ``invalid``.

Nothing runs: no agent, model, grader, hook, mock server or network. The suite is loaded with
the same loader ``waza run`` uses (which checks every file, glob, grader config, lock and
module digest), and each of its problems becomes an ``invalid`` diagnostic carrying the
loader's ``file:line:col`` message (waza (Go) gives a generic sentence per code instead).
Diagnostics are sorted by source, task, requirement, code and message, as in waza.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from waza_core.errors import SuiteError, WazaError
from waza_core.suite import yamlio
from waza_core.suite.load import load_suite

KIND = "waza.preflight"
SCHEMA_VERSION = "1.0"
_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?: (?P<msg>.*)$", re.S)


class Report:
    """The report under construction."""

    def __init__(self, source: str) -> None:
        self.doc: dict[str, Any] = {"kind": KIND, "schemaVersion": SCHEMA_VERSION, "source": source, "executor": "",
                                    "complete": True, "tasks": [], "capabilities": [], "dependencies": [],
                                    "diagnostics": []}

    def add(self, code: str, state: str, source: str, message: str, remediation: str, task: str = "",
            requirement: str = "") -> None:
        severity = "error" if state == "invalid" else ("info" if state == "verified" else "warning")
        d = {"code": code, "state": state, "severity": severity, "source": source}
        if task:
            d["task_id"] = task
        if requirement:
            d["requirement_id"] = requirement
        d.update(message=message, remediation=remediation)
        self.doc["diagnostics"].append(d)

    def failed(self, strict: bool) -> bool:
        bad = {"invalid", "unresolved", "unsupported"} if strict else {"invalid"}
        return any(d["state"] in bad for d in self.doc["diagnostics"])


def inspect(eval_path: str, registry, context_dir: str | None = None) -> Report:
    """Inspect ``eval_path`` offline; the report survives an invalid suite."""
    r = Report(eval_path)
    path = Path(eval_path)
    if not path.is_file():
        r.add("eval.read", "invalid", eval_path, "Eval file is not readable.",
              "Supply an existing readable eval YAML file.")
        r.doc["complete"] = False
        return r
    try:
        suite = load_suite(path, registry)
    except SuiteError as exc:
        _problems(r, eval_path, exc.problems)
        r.doc["executor"] = _raw_executor(path)
        r.doc["complete"] = False
        return _sorted(r)
    except WazaError as exc:
        r.add("eval.configuration", "invalid", eval_path, str(exc), "Fix the eval file, then run waza preflight again.")
        r.doc["complete"] = False
        return _sorted(r)
    executor = suite.config.executor
    r.doc["executor"] = executor
    _capabilities(r, registry, executor, eval_path)
    _dependencies(r, suite, eval_path)
    fixtures = str(Path(context_dir).absolute() if context_dir else suite.dir.absolute() / "fixtures")
    global_names = {g.name for g in suite.graders}
    for task in suite.tasks:
        names = global_names | {g.name for g in task.graders}
        source = task.filename
        r.doc["tasks"].append({
            "id": task.id, "name": task.name, "source": source, "enabled": True,
            "context_dir": str(Path(task.context_dir).absolute()) if task.context_dir else fixtures,
            "requirements": [_requirement(r, req, names, source, task.id) for req in task.requirements],
        })
    if not suite.tasks:
        r.add("tasks.empty", "invalid", eval_path, "No tasks were discovered.",
              "Supply matching task files or a nonempty selected CSV range.")
    return _sorted(r)


def _problems(r: Report, eval_path: str, problems: list[str]) -> None:
    for problem in problems:
        m = _LOCATED.match(problem)
        source = m.group("file") if m else eval_path
        task_file = m is not None and Path(source).resolve() != Path(eval_path).resolve()
        r.add("task.configuration" if task_file else "eval.configuration", "invalid", source, problem,
              "Fix what the message names (waza validate shows the same), then run waza preflight again.")


def _raw_executor(path: Path) -> str:
    try:
        data = yamlio.parse(yamlio.read_text(path))
    except Exception:  # the loader already reported why the file does not read
        return ""
    cfg = data.get("config") if isinstance(data, dict) else None
    value = cfg.get("executor") if isinstance(cfg, dict) else None
    return value if isinstance(value, str) else ""


def _capabilities(r: Report, registry, executor: str, eval_path: str) -> None:
    cls = registry.get("executor", executor)
    caps = r.doc["capabilities"]
    if cls is None:
        meaning = "Executor is not implemented by this reader."
        caps.append({"name": "task_execution", "state": "unsupported", "meaning": meaning})
        r.add("runtime.executor", "unsupported", eval_path, meaning,
              "Select an implemented executor (waza plugins lists them).")
        cls_mocks = False
    else:
        if executor == "mock":
            meaning = "Deterministic harness only; not evidence of agent quality or live side effects."
        else:
            meaning = "Static implementation supports task execution; runtime availability is not assessed."
        caps.append({"name": "task_execution", "state": "verified", "meaning": meaning})
        if getattr(cls, "paid", False) or getattr(cls, "always_paid", False):
            r.add("runtime.availability", "unresolved", eval_path,
                  "Model, CLI/SDK installation, authentication, permissions, and live resulting state are not "
                  "checked offline.", "Verify runtime readiness explicitly outside preflight.")
        cls_mocks = bool(getattr(cls, "supports_mocks", False))
    static = "Static capability only; not proof of configuration enforcement or task success."
    for name, ok in (("mcp_servers", cls_mocks), ("command_mocks", cls_mocks),
                     ("runtime_tool_boundary", executor == "copilot-sdk")):
        caps.append({"name": name, "state": "verified" if ok else "unsupported", "meaning": static})


def _dependencies(r: Report, suite, eval_path: str) -> None:
    deps = r.doc["dependencies"]
    raw_graders = suite.raw.get("graders") if isinstance(suite.raw, dict) else None
    for g in raw_graders if isinstance(raw_graders, list) else ():
        if isinstance(g, dict) and isinstance(g.get("ref"), str):  # loaded: lock, cache and digest checked
            deps.append({"kind": "grader", "name": str(g.get("name") or g["ref"]), "mode": "locked-cache",
                         "state": "verified"})
    mocks = suite.raw.get("mcp_mocks") if isinstance(suite.raw, dict) else None
    for m in mocks if isinstance(mocks, list) else ():
        if isinstance(m, dict):
            deps.append({"kind": "mcp", "name": str(m.get("name", "")), "mode": "mocked", "state": "verified"})
    if suite.hooks and any(suite.hooks.get(k) for k in ("before_run", "after_run", "before_task", "after_task")):
        deps.append({"kind": "hooks", "name": "lifecycle", "mode": "subprocess", "state": "unresolved"})
        r.add("hooks.execution", "unresolved", eval_path, "Lifecycle hooks were not executed.",
              "Review hook executables and their effects before running the eval.")


def _requirement(r: Report, req: dict, graders: set[str], source: str, task_id: str) -> dict:
    out = {k: req[k] for k in ("id", "category", "description") if k in req}
    for k in ("id", "category", "description"):
        out.setdefault(k, "")
        if not isinstance(out[k], str):
            out[k] = str(out[k])
    checks = req.get("checks") if isinstance(req.get("checks"), list) else []
    if checks:
        out["checks"] = [{k: c[k] for k in ("scope", "grader", "after_turn") if k in c}
                         for c in checks if isinstance(c, dict)]
    missing = [c.get("grader") for c in checks if isinstance(c, dict) and c.get("grader") not in graders]
    if not checks:
        state, meaning = "unresolved", "No check is declared; requirements are descriptive and never scored."
    elif missing:
        state = "unresolved"
        meaning = "A declared check names a grader this task does not have."
        r.add("requirement.check", "unresolved", source, f"check grader {missing[0]!r} is not a grader of the task",
              "Name a task or global grader in checks[].grader.", task_id, out["id"])
    else:
        state, meaning = "verified", "Declared checks name existing graders; this is not a satisfied requirement."
    out.update(state=state, meaning=meaning)
    return out


def _sorted(r: Report) -> Report:
    r.doc["diagnostics"].sort(key=lambda d: (d["source"], d.get("task_id", ""), d.get("requirement_id", ""),
                                             d["code"], d["message"]))
    return r


def render_human(doc: dict) -> str:
    """The text form, line for line as waza (Go) prints it."""
    lines = [f"Offline preflight: {doc['source']}", f"Executor: {doc['executor']}",
             f"Inventory complete: {str(doc['complete']).lower()} (not assurance)"]
    for t in doc["tasks"]:
        lines.append(f"Task {t['id']}: {t['name']} (enabled={str(t['enabled']).lower()}, context={t['context_dir']})")
        for req in t["requirements"]:
            lines.append(f"  Requirement {req['id']} [{req['category']}]: {req['state']} - {req['meaning']}")
    for c in doc["capabilities"]:
        lines.append(f"Capability {c['name']}: {c['state']} - {c['meaning']}")
    for d in doc["dependencies"]:
        lines.append(f"Dependency {d['kind']}/{d['name']}: {d['mode']}, {d['state']} (task={d.get('task_id', '')})")
    for d in doc["diagnostics"]:
        lines.append(f"{d['state']} {d['code']} [{d['severity']}] {d['source']} task={d.get('task_id', '')} "
                     f"requirement={d.get('requirement_id', '')}: {d['message']} {d['remediation']}")
    return "\n".join(lines) + "\n"
