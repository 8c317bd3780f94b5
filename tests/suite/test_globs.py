"""The task-file listing (waza_core/suite/globs.py) gives exactly what ``Path.glob``
filtered by ``is_file()`` and sorted gives: the same files, the same order, the same
strings, whether it listed the folder itself or handed the pattern to pathlib."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from waza_core.suite import globs

SIMPLE = ["tasks/*.yaml", "*.yaml", "tasks/*", "tasks/t?.yaml", "tasks/[ab]*.yaml", "tasks/*.y*ml",
          "tasks/[!a]*", "./tasks/*.yaml", "tasks//*.yaml", "tasks/./*.yaml", "deep/er/*.yaml", "tasks/*.YAML",
          "linked/*.yaml", "missing/*.yaml", "afile.yaml/*.yaml", "tasks/*[*", "tasks/sp ace*", "tasks/*é*",
          "tasks/.*"]
OTHER = ["**/*.yaml", "tasks/**/*.yaml", "*/*.yaml", "tasks/../tasks/*.yaml", "tasks/a.yaml", "tasks/",
         "t*/a.yaml", "tasks/*.yaml/"]


@pytest.fixture
def tree(tmp_path):
    base = tmp_path / "suite"
    outside = tmp_path / "outside"
    (base / "tasks" / "sub").mkdir(parents=True)
    (base / "deep" / "er").mkdir(parents=True)
    outside.mkdir()
    for name in ("a.yaml", "b.yaml", "t1.yaml", ".hidden.yaml", ".yaml", "c.yml", "notes.txt", "UP.YAML",
                 "sp ace.yaml", "é.yaml", "x[y.yaml", "sub/in_sub.yaml"):
        (base / "tasks" / name).write_text("id: x\n")
    with open(os.fsencode(base / "tasks") + b"/not-utf8-\xff.yaml", "w") as fh:  # a name os.fsdecode escapes
        fh.write("id: x\n")
    (base / "top.yaml").write_text("id: x\n")
    (base / "afile.yaml").write_text("id: x\n")
    (base / "deep" / "er" / "d.yaml").write_text("id: x\n")
    (outside / "o.yaml").write_text("id: x\n")
    (base / "tasks" / "folder.yaml").mkdir()  # a folder is not a task file
    os.mkfifo(base / "tasks" / "fifo.yaml")  # nor is a FIFO (never opened)
    (base / "tasks" / "link_in.yaml").symlink_to(base / "tasks" / "a.yaml")
    (base / "tasks" / "link_out.yaml").symlink_to(outside / "o.yaml")
    (base / "tasks" / "broken.yaml").symlink_to(base / "nowhere.yaml")
    (base / "tasks" / "loop.yaml").symlink_to(base / "tasks" / "loop.yaml")
    (base / "tasks" / "dirlink.yaml").symlink_to(base / "tasks" / "sub")
    (base / "linked").symlink_to(base / "tasks")
    return base


def pathlib_files(base: Path, pattern: str) -> list[Path]:
    return sorted(p for p in base.glob(pattern) if p.is_file())


@pytest.mark.parametrize("pattern", SIMPLE + OTHER)
def test_the_listing_is_pathlibs(tree, pattern, monkeypatch):
    expected = pathlib_files(tree, pattern)
    if pattern in SIMPLE:  # listed by globs itself: pathlib is not asked
        monkeypatch.setattr(Path, "glob", lambda *a: pytest.fail("Path.glob used"))
    listing = globs.task_files(tree, pattern)
    assert listing.paths == expected
    assert listing.texts == [str(p) for p in expected]
    assert [str(p) for p in listing.paths] == listing.texts
    assert [listing.is_link(i) for i in range(len(expected))] == [p.is_symlink() for p in expected]


def test_what_the_listing_keeps(tree):
    names = [p.name for p in globs.task_files(tree, "tasks/*.yaml").paths]
    assert names == sorted(["a.yaml", "b.yaml", "t1.yaml", ".hidden.yaml", ".yaml", "sp ace.yaml", "é.yaml",
                            "x[y.yaml", "link_in.yaml", "link_out.yaml", os.fsdecode(b"not-utf8-\xff.yaml")])
    # dotfiles too, as pathlib does


def test_a_folder_that_cannot_be_read_has_no_matches_as_in_pathlib(tree, monkeypatch):
    real = os.scandir
    denied = str(tree / "tasks")

    def scandir(path="."):
        if os.fspath(path) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert pathlib_files(tree, "tasks/*.yaml") == []
    assert globs.task_files(tree, "tasks/*.yaml").paths == []


class FakeEntry:
    def __init__(self, name, error=None):
        self.name, self.error = name, error

    def is_file(self):
        if self.error:
            raise OSError(self.error, os.strerror(self.error), self.name)
        return True

    def is_symlink(self):
        return False


class FakeListing(list):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize(("error", "raises"), [(errno.ENOENT, False), (errno.ELOOP, False), (errno.ENOTDIR, False),
                                               (errno.EIO, True), (errno.EACCES, True)])
def test_an_entry_that_cannot_be_told_raises_as_in_pathlib(tree, monkeypatch, error, raises):
    """pathlib's is_file() answers False for a missing target, a loop, a path through a
    file; any other error is raised (PermissionError too: only a folder that cannot be
    read is passed over)."""
    entries = FakeListing([FakeEntry("a.yaml"), FakeEntry("b.yaml", error), FakeEntry("c.yaml")])
    monkeypatch.setattr(os, "scandir", lambda path: entries)
    if raises:
        with pytest.raises(OSError) as info:
            globs.task_files(tree, "tasks/*.yaml")
        assert info.value.errno == error
    else:
        assert [p.name for p in globs.task_files(tree, "tasks/*.yaml").paths] == ["a.yaml", "c.yaml"]


@pytest.mark.parametrize("folder", ["", "a", "a b c", ".b/c"])
def test_a_listed_file_is_its_joined_path(tmp_path, folder, monkeypatch):
    """The listing's strings are ``str(folder / name)`` (made without a Path), its Paths
    equal pathlib's, from the root folder, a relative base and ``.`` too."""
    (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / folder / "t.yaml").write_text("x")
    pattern = f"{folder}/*.yaml" if folder else "*.yaml"
    monkeypatch.chdir(tmp_path)
    for base in (tmp_path, Path(".")):
        listing = globs.task_files(base, pattern)
        expected = base / folder / "t.yaml" if folder else base / "t.yaml"
        assert listing.texts == [str(expected)] and listing.paths == [expected] and listing.path(0) == expected
    under_root = tmp_path.relative_to("/") / folder
    assert globs.task_files(Path("/"), f"{under_root}/*.yaml").texts == [f"/{under_root}/t.yaml"]


def test_a_file_matched_by_a_listed_and_a_pathlib_pattern_is_one_task(make_suite, registry):
    from tests.conftest import BASIC_EVAL
    from waza_core.suite.load import load_suite

    task = "id: {}\ninputs: {{prompt: p}}\nallow_ungraded: true\n"
    ev = BASIC_EVAL.replace('tasks: ["tasks/*.yaml"]', 'tasks: ["tasks/*.yaml", "tasks/**/*.yaml", "./tasks/a.yaml"]')
    path = make_suite(ev, {"tasks/a.yaml": task.format("a"), "tasks/sub/b.yaml": task.format("b")})
    assert [t.id for t in load_suite(path, registry).tasks] == ["a", "b"]
