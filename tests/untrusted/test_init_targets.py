"""`waza init` / `waza new` check every target and every folder on its way (links,
dangling links, existing files, FIFOs) before writing the first byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.inprocess import run_waza_in_process as run_waza

INIT_PATHS = [".github", ".github/workflows", ".github/workflows/waza.yml", "tasks", "tasks/explain-greet.yaml",
              "fixtures", "fixtures/greet.py", "eval.yaml", ".waza.yaml", ".gitignore"]
KINDS = ["dangling link", "link to a folder outside", "file", "fifo"]


def _plant(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dangling link":
        path.symlink_to(outside / "nowhere")
    elif kind == "link to a folder outside":
        path.symlink_to(outside)
    elif kind == "file":
        path.write_text("mine")
    else:
        os.mkfifo(path)


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = "link" if p.is_symlink() else "dir" if p.is_dir() else "other"
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("planted", INIT_PATHS)
def test_init_stops_before_writing_anything(tmp_path, planted, kind):
    project, outside = tmp_path / "p", tmp_path / "outside"
    outside.mkdir()
    _plant(project / planted, kind, outside)
    before = _tree(tmp_path)
    proc = run_waza("init", "p", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert b"nothing written" in proc.stderr and b"Traceback" not in proc.stderr
    assert _tree(tmp_path) == before  # not one file or folder more, nothing outside


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("planted", ["x/tasks", "x/fixtures", "x/eval.yaml", "x/tasks/summarise-notes.yaml"])
def test_new_eval_stops_before_writing_anything(tmp_path, planted, kind):
    outside = tmp_path / "outside"
    outside.mkdir()
    _plant(tmp_path / "d" / planted, kind, outside)
    before = _tree(tmp_path)
    proc = run_waza("new", "eval", "x", "--dir", "d", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and b"nothing written" in proc.stderr, proc.stderr
    assert _tree(tmp_path) == before


def test_new_task_through_a_linked_tasks_folder(tmp_path):
    assert run_waza("new", "eval", "s", cwd=tmp_path).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    tasks = tmp_path / "s" / "tasks"
    for name in os.listdir(tasks):
        (tasks / name).unlink()
    tasks.rmdir()
    tasks.symlink_to(outside)
    proc = run_waza("new", "task", "t9", "--suite", "s", cwd=tmp_path)
    assert proc.returncode == 2 and b"s/tasks is a symbolic link" in proc.stderr, proc.stderr
    assert list(outside.iterdir()) == []


def test_a_project_folder_that_is_a_link_is_the_users_choice(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "p").symlink_to("real")
    assert run_waza("init", "p", cwd=tmp_path).returncode == 0
    assert (tmp_path / "real" / "eval.yaml").is_file()
