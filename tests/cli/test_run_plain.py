"""``waza run`` of a plain command line is run before typer is imported
(waza_core/cli/run_plain.py): the defaults it knows equal the typer command's, and every
plain command line builds the same RunCommand both ways; any other form goes to typer."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from waza_core.cli import run_plain


def test_the_defaults_equal_the_typer_commands():
    from waza_core.cli.run import run

    params = inspect.signature(run).parameters
    typer_defaults = {name: p.default.default for name, p in params.items() if name != "eval_file"}
    assert run_plain.DEFAULTS == typer_defaults


PLAIN = [
    ["suite/eval.yaml"],
    ["suite", "-o", "out.json", "-q"],
    ["--output=-", "suite", "--color", "never", "-v"],
    ["suite", "-p", "mod_a", "--plugin=no:text", "--executor", "mock", "--executor=echo", "-m", "a", "--model", "b"],
    ["suite", "--output-dir", "res", "--context-dir", "fx", "--task", "t*", "--tags", "x", "--tags=y", "--parallel",
     "--fail-fast", "--keep-workspaces", "--update-snapshots", "--skip-graders", "--audit", "--baseline",
     "--baseline-from", "old.json", "--judge-model", "j", "--log-format", "json", "--reporter", "junit",
     "--reporter-option", "junit.output=true", "--cache", "--cache-dir", "c", "--backend", "local",
     "--ray-address", "r", "--journal", "j.jsonl", "--resume", "r.jsonl", "--prices", "none"],
    ["suite", "-o", "-"],
]


def _captured(monkeypatch) -> list:
    import waza_core.run.command as command

    seen: list = []
    monkeypatch.setattr(command, "run_command", lambda eval_file, cmd: seen.append((eval_file, cmd)) or 0)
    return seen


@pytest.mark.parametrize("args", PLAIN)
def test_a_plain_command_line_builds_what_typer_builds(args, monkeypatch):
    from typer.main import get_command

    from waza_core.cli.app import build_app

    seen = _captured(monkeypatch)
    assert run_plain.run(args) == 0
    get_command(build_app("run")).main(args=["run", *args], prog_name="waza", standalone_mode=False)
    assert len(seen) == 2
    (fast_file, fast), (typer_file, slow) = seen
    assert fast_file == typer_file and isinstance(fast_file, Path)
    assert fast == slow


@pytest.mark.parametrize("args", [
    [], ["--help"], ["suite", "--help"], ["suite", "--trials", "2"], ["suite", "--workers=2"], ["suite", "-qv"],
    ["suite", "--", "x"], ["a", "b"], ["suite", "-o"], ["suite", "-o=x"], ["suite", "--max-spend", "1"],
    ["suite", "--unknown"],
])
def test_any_other_form_is_left_to_typer(args):
    assert run_plain.parse_plain(args) is None


def test_the_suite_runs_through_the_plain_path(tmp_path, monkeypatch):
    import json

    from tests.conftest import REPO

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    assert run_plain.run([str(REPO / "examples" / "quickstart" / "eval.yaml"), "-o", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["summary"]["total_tests"] == 2
