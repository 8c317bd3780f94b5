"""The shortcuts that make loading a 100,000-task suite fast give the answers of the
plain rules they replace: ``display_path`` (os.path.relpath of each file) and the
link rule of task globs (each match resolved)."""

from __future__ import annotations

import os
import random
from pathlib import Path

from waza_core.paths import display_path
from waza_core.suite import globs
from waza_core.suite.load import _LinkEscapes


def _plain_display(path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


def test_display_path_equals_relpath_from_any_folder(tmp_path, monkeypatch):
    root = str(tmp_path)
    parts = ["a", "b", "..x", ".h", "", ".", "..", "x y", "t.yaml", "c", root.lstrip("/")]
    rng = random.Random(7)
    for cwd in ["/", root, f"{root}/a", f"{root}/a/b", f"{root}/c"]:
        os.makedirs(cwd, exist_ok=True)
        monkeypatch.chdir(cwd)
        for _ in range(3000):
            path = "/" * rng.randint(1, 2) + "/".join(rng.choice(parts) for _ in range(rng.randint(0, 5)))
            if rng.random() < 0.4:
                path = cwd.rstrip("/") + "/" + path.lstrip("/")
            if rng.random() < 0.1:
                path = path.lstrip("/")
            assert display_path(path) == _plain_display(path), (cwd, path)
            assert display_path(path, cwd) == _plain_display(path), (cwd, path)  # the working folder given
            assert display_path(Path(path)) == _plain_display(Path(path)), (cwd, path)


def _plain_leaves(m: Path, base: Path) -> bool:
    return Path(os.path.normpath(m)).is_relative_to(base) and not m.resolve().is_relative_to(base.resolve())


def test_the_glob_link_rule_equals_resolving_every_match(tmp_path):
    """Folders and files linked in and out of the suite, and back in: same verdicts."""
    suite, outside = tmp_path / "suite", tmp_path / "outside"
    for d in (suite / "tasks" / "deep", suite / "shared", outside / "sub"):
        d.mkdir(parents=True)
    for f in (suite / "tasks" / "a.yaml", suite / "tasks" / "deep" / "b.yaml", suite / "shared" / "s.yaml",
              outside / "o.yaml", outside / "sub" / "p.yaml"):
        f.write_text("id: x\n")
    (suite / "tasks" / "in.yaml").symlink_to(suite / "shared" / "s.yaml")
    (suite / "tasks" / "out.yaml").symlink_to(outside / "o.yaml")
    (suite / "tasks" / "linked_in").symlink_to(suite / "shared")
    (suite / "tasks" / "linked_out").symlink_to(outside)
    (outside / "back.yaml").symlink_to(suite / "shared" / "s.yaml")  # out through the folder, back by the file
    (suite / "via").symlink_to(suite / "tasks")
    for pattern in ("tasks/*.yaml", "tasks/**/*.yaml", "tasks/*/*.yaml", "via/**/*.yaml", "**/*.yaml",
                    "tasks/../shared/*.yaml"):
        escapes = _LinkEscapes(suite, plain=".." not in Path(pattern).parts)
        matches = sorted(p for p in suite.glob(pattern) if p.is_file())
        assert matches
        listed = globs.task_files(suite, pattern)
        assert listed.paths == matches and listed.texts == [str(m) for m in matches]
        verdicts = [(m, escapes.leaves(listed, i)) for i, m in enumerate(listed.paths)]
        assert verdicts == [(m, _plain_leaves(m, suite)) for m in matches], pattern
    escapes = _LinkEscapes(suite, plain=True)
    listings = [globs.task_files(suite, pattern) for pattern in ("tasks/*.yaml", "tasks/*/*.yaml")]
    seen = {m.name: escapes.leaves(listed, i) for listed in listings for i, m in enumerate(listed.paths)}
    assert seen["back.yaml"] is False and seen["o.yaml"] is True and seen["out.yaml"] is True
    assert seen["in.yaml"] is False and seen["s.yaml"] is False


def test_task_files_are_sorted_as_paths_sort(tmp_path):
    """'a/b' before 'a-b/c' (parts order), not after it (string order)."""
    from waza_core.suite.globs import _path_order

    names = ["a/b.yaml", "a-b/c.yaml", "a.b/x.yaml", "a/b/c.yaml", "A/z.yaml", "a b/y.yaml", "ab.yaml", "a/a.yaml"]
    paths = [tmp_path / n for n in names]
    assert sorted(paths, key=_path_order) == sorted(paths)
