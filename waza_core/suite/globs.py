"""The task files of a ``tasks:`` glob: what ``Path.glob`` matches, regular files only, sorted.

``Path.glob`` makes a Path for every entry of a folder, the ``is_file()`` filter after it
stats each match, and sorting Paths compares their parts: a suite of 100,000 task files
in one folder spent about 20 us per file there. The usual patterns (``tasks/*.yaml``,
``*.yaml``, ``a/b/*.y?ml``: folders written out, a wildcard only in the file name) are
listed here with one ``os.scandir``, whose entries carry their type from the folder
listing itself (no ``stat`` for a regular file that is not a link); every other pattern
(``**``, a wildcard in a folder name, ``..``, no wildcard at all) goes through
``Path.glob`` as before. Both give the same files in the same order, with the same
rules as pathlib 3.11+: ``*`` matches dotfiles, names match case-sensitively on POSIX
(fnmatch), links are followed, a folder that cannot be read has no matches.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from collections.abc import Callable
from operator import methodcaller
from pathlib import Path

from waza_core.lazy_re import LazyPattern

#: errors that make pathlib's ``is_file()`` / ``is_dir()`` answer False instead of raising
_IGNORED = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
_WILDCARD = LazyPattern(r"[*?\[]")


class Listing:
    """The task files of one pattern: their path strings in the order of ``sorted(paths)``,
    and the strings of those whose own entry is a symbolic link (None when the listing did
    not say). Strings, not a Path per file: a Path held ~260 B more than its string, and a
    list of 100,000 of them outlived the loading of every task (a loader that needs a Path
    asks :meth:`path` for it)."""

    __slots__ = ("texts", "links", "folder", "_paths")

    def __init__(self, texts: list[str], links: set[str] | None, folder: str | None = None,
                 paths: list[Path] | None = None) -> None:
        self.texts, self.links = texts, links
        self.folder = folder  # the one folder of every file, as a string, when it is known
        self._paths = paths  # the Paths, when the listing had them anyway (pathlib's glob)

    @property
    def paths(self) -> list[Path]:
        """The files as Paths (made on each call when the listing holds strings only)."""
        return self._paths if self._paths is not None else [Path(t) for t in self.texts]

    def path(self, i: int) -> Path:
        """The ``i``-th file as a Path."""
        return self._paths[i] if self._paths is not None else Path(self.texts[i])

    def folder_of(self, i: int) -> str:
        """The folder of the ``i``-th file, as a string."""
        if self.folder is not None:
            return self.folder
        return (self.texts[i].rpartition("/")[0] or "/") if os.sep == "/" else str(self.path(i).parent)

    def is_link(self, i: int) -> bool:
        return os.path.islink(self.texts[i]) if self.links is None else self.texts[i] in self.links


def task_files(base: Path, pattern: str) -> Listing:
    """Regular files (links followed) under ``base`` that match the relative ``pattern``."""
    simple = _simple(pattern) if os.sep == "/" else None
    if simple is None:
        return _by_pathlib(base, pattern)
    folders, name_pattern = simple
    folder = base.joinpath(*folders) if folders else base
    if not base.is_dir():  # pathlib's own first check (an error other than "not there" raises)
        return Listing([], set())
    names, link_names = _listed(folder, _name_test(name_pattern), check_folder=bool(folders))
    names.sort()
    # str(folder / name) for a plain name listed in folder, without making the Path
    folder_text = str(folder)
    prefix = "" if folder_text == "." else folder_text if folder_text.endswith("/") else folder_text + "/"
    return Listing([prefix + name for name in names], {prefix + name for name in link_names}, folder_text)


def _simple(pattern: str) -> tuple[list[str], str] | None:
    """(folders, name pattern) of a pattern whose only wildcards are in its last part,
    split as pathlib splits it (empty and ``.`` parts dropped); None for any other."""
    if not pattern or pattern.endswith("/") or pattern.startswith("/"):
        return None
    parts = [p for p in pattern.split("/") if p and p != "."]
    if not parts or ".." in parts or "**" in parts[-1]:
        return None
    *folders, last = parts
    if not _WILDCARD.search(last) or any(_WILDCARD.search(p) for p in folders):
        return None
    return folders, last


def _name_test(pattern: str) -> Callable[[str], object]:
    """pathlib's name test on POSIX (``re.compile(fnmatch.translate(p)).fullmatch``); a
    plain ``*`` followed by text is an ``endswith`` (``*`` matches anything, even ``.``)."""
    if pattern.startswith("*") and not _WILDCARD.search(pattern[1:]):
        return methodcaller("endswith", pattern[1:])  # no Python frame per listed file
    return re.compile(fnmatch.translate(pattern)).fullmatch


def _listed(folder: Path, test: Callable[[str], object], check_folder: bool) -> tuple[list[str], list[str]]:
    """The names of the regular files of ``folder`` (links followed) that pass ``test``,
    and those of them that are symbolic links.

    As in pathlib, a folder that is not there (or not a folder) or cannot be read has no
    matches; an error while telling what a matching entry is raises, unless pathlib's
    ``is_file()`` would answer False for it."""
    names: list[str] = []
    links: list[str] = []
    error = None
    try:
        if check_folder and not folder.is_dir():
            return [], []
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if not test(name):
                    continue
                try:
                    if not entry.is_file():  # no system call for a regular file or a folder
                        continue
                    if entry.is_symlink():
                        links.append(name)
                except OSError as exc:
                    if exc.errno in _IGNORED:
                        continue
                    error = exc  # raised below, not taken for a folder that cannot be read
                    break
                names.append(name)
    except PermissionError:
        return [], []
    if error is not None:
        raise error
    return names, links


def _by_pathlib(base: Path, pattern: str) -> Listing:
    matches = sorted((p for p in base.glob(pattern) if p.is_file()), key=_path_order if os.sep == "/" else None)
    return Listing([str(p) for p in matches], None, paths=matches)


def _path_order(path: Path) -> list[str]:
    """The order of ``sorted(paths)`` (PurePosixPath compares its parts) for matches of
    one absolute base, without building the comparison keys again at each of the
    n log n comparisons (nor keeping a parts tuple on each of 100,000 paths)."""
    return str(path).split("/")
