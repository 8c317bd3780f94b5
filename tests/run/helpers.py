"""Suites of slow runs for the journal and Ray tests: a program grader that sleeps
(it must not burn CPU: the test machine has two cores) and then appends the task's
name to a log file, so a test can count how often each task was graded."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path


def slow_suite(root: Path, tasks: int, log: Path, sleep: float = 0.3, **config) -> Path:
    """A suite of ``tasks`` tasks t01..tNN, mock executor, one slow program grader."""
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    cfg = {"executor": "mock", "model": "mock-model", **config}
    grader = {"type": "program", "name": "slow",
              "config": {"command": "sh", "args": ["-c", f"sleep {sleep}; grep '^Task:' >> \"$0\"", str(log)],
                         "timeout": 60}}
    eval_yaml = {"name": "slow-suite", "skill": "demo", "config": cfg, "graders": [grader], "tasks": ["tasks/*.yaml"]}
    (root / "eval.yaml").write_text(json.dumps(eval_yaml, indent=1))  # JSON is YAML
    for i in range(1, tasks + 1):
        (root / "tasks" / f"t{i:02d}.yaml").write_text(f"id: t{i:02d}\nname: t{i:02d}\ninputs: {{prompt: p{i}}}\n")
    return root / "eval.yaml"


def gradings(log: Path) -> Counter:
    """How often each task was graded, from the grader's log."""
    if not log.exists():
        return Counter()
    return Counter(line.split(":", 1)[1].strip() for line in log.read_text().splitlines() if line.startswith("Task:"))


def journal_tasks(path: Path) -> list[str]:
    """The task ids of the complete run lines of a journal, in order."""
    lines = path.read_bytes().split(b"\n")[1:-1]
    return [json.loads(line)["task_id"] for line in lines]


#: the app of each command, built once (typer still builds its click command on each call:
#: an app of the one command called keeps that cheap)
_app: dict = {}


class Outcome:
    """What ``waza`` run in this process returned: ``returncode``, ``stdout``, ``stderr``."""

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str) -> Outcome:
    """Run ``waza <args>`` in this process (a subprocess costs a second or two here)."""
    import os

    from typer.testing import CliRunner

    from waza_core.cli.app import build_app

    if args[0] not in _app:
        os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
        _app[args[0]] = build_app(args[0])
    res = CliRunner().invoke(_app[args[0]], list(args))
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"uncaught {type(res.exception).__name__}: {res.exception}") from res.exception
    return Outcome(res.exit_code, res.stdout_bytes, res.stderr_bytes)
