"""Helpers for the program grader tests: real scripts, real children, real files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from waza_core.grading.base import GradingContext
from waza_core.model import GraderSpec, RunEvidence, TaskSpec

PY = sys.executable
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the program grader is POSIX only")


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """Every context directory of a test lands in its own TMPDIR, checked afterwards."""
    base = tmp_path / "tmpdir"
    base.mkdir()
    monkeypatch.setenv("TMPDIR", str(base))
    return base


def script(dir_: Path, body: str, name: str = "grader.py") -> Path:
    path = dir_ / name
    path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return path


def spec(command: str, *args: str, timeout: float | None = None, name: str = "prog") -> GraderSpec:
    config: dict = {"command": command, "args": list(args)}
    if timeout is not None:
        config["timeout"] = timeout
    return GraderSpec(type="program", name=name, config=config)


def python_grader(path: Path, timeout: float | None = None, name: str = "prog"):
    from waza_graders.program import ProgramGrader

    return ProgramGrader(spec(PY, "-S", str(path), timeout=timeout, name=name))


def context(workspace: Path | None, output: str = "the agent said hello", **evidence) -> GradingContext:
    task = TaskSpec(id="t", name="t", prompt="p", file=Path("t.yaml"))
    return GradingContext(task=task, evidence=RunEvidence(output=output, **evidence),
                          workspace_dir=str(workspace) if workspace else None)


def make_unwritable(path: Path) -> None:
    """Make a directory refuse new entries and removals, for root too (chattr +i)."""
    if IS_ROOT:
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: cannot make a directory unwritable")
        proc = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if proc.returncode != 0:
            pytest.skip(f"chattr +i not supported here: {proc.stderr.decode().strip()}")
    else:
        path.chmod(0o500)


def make_writable(path: Path) -> None:
    if IS_ROOT:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    else:
        path.chmod(0o700)
