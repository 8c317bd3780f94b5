"""Every command exits with an ``ExitCode`` member, never a literal number."""

from __future__ import annotations

import ast
from pathlib import Path

from waza_core import ExitCode

CLI = Path(__file__).resolve().parents[2] / "waza_core" / "cli"


def literal_exit_codes(path: Path) -> list[str]:
    """Calls like ``Exit(2)``, ``SystemExit(130)``, ``fail(msg, 2)``, ``sys.exit(1)`` with a number."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("Exit", "SystemExit", "exit", "fail"):
            continue
        args = node.args[1:] if name == "fail" else node.args
        args = args + [k.value for k in node.keywords if k.arg in ("code", "exit_code")]
        if any(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in args):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_command_exits_with_a_literal_number():
    assert [hit for p in sorted(CLI.glob("*.py")) for hit in literal_exit_codes(p)] == []


def test_the_rule_catches_literals(tmp_path):
    sample = tmp_path / "cmd.py"
    sample.write_text("raise typer.Exit(2)\nraise SystemExit(130)\nfail('x', 1)\nraise typer.Exit(ExitCode.OK)\n")
    assert literal_exit_codes(sample) == ["cmd.py:1", "cmd.py:2", "cmd.py:3"]


def test_exit_code_values_match_waza():
    assert [int(c) for c in (ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE, ExitCode.INTERRUPTED)] == [0, 1, 2, 130]
    from waza_core import WazaError

    assert WazaError.exit_code == ExitCode.USAGE
