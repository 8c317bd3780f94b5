"""Path helpers shared by the core and the plugins: how a path is shown, and whether a
relative path stays inside its root once every symlink is resolved."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path


def display_path(path: str | os.PathLike[str], cwd: str | None = None) -> str:
    """A path relative to the working directory when it is under it, else as given.
    ``cwd``: ``os.getcwd()``, from a caller that shows many paths at once."""
    text = os.fspath(path)
    if isinstance(text, str) and os.sep == "/":
        head, _, name = text.rpartition("/")
        if head.startswith("/") and name not in ("", ".", "..") and "//" not in text and "/." not in head:
            # a plain name in a normalised absolute folder: that folder's relative form
            # once (a suite of 100,000 task files shows them all from a few folders)
            cwd = os.getcwd() if cwd is None else cwd
            if cwd != text and not cwd.startswith(text + "/"):
                rel_head = _relative_folder(head, cwd)
                rel = name if rel_head == "." else f"{rel_head}/{name}"
                return rel if not rel.startswith("..") else text
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)


@functools.lru_cache(maxsize=256)
def _relative_folder(folder: str, cwd: str) -> str:
    return os.path.relpath(folder, cwd)


class PathEscape(ValueError):
    """A relative path that is absolute, climbs with ``..`` or leaves its root through a link."""


def resolve_inside(root: str | os.PathLike[str], rel: str) -> Path:
    """``root/rel`` with every symlink resolved, refusing anything outside ``root``.

    ``rel`` must be relative and free of ``..`` segments (even ones that would cancel
    out); after resolving links (of ``root`` too) the result must still be ``root`` or
    below it. The target need not exist. Raises :class:`PathEscape` with a reason.
    """
    if not isinstance(rel, str) or not rel:
        raise PathEscape("the path is empty")
    if "\0" in rel:
        raise PathEscape("the path contains a NUL character")
    if os.path.isabs(rel) or rel.startswith(("\\", "/")):
        raise PathEscape("the path must be relative")
    if ".." in Path(rel.replace("\\", "/")).parts:
        raise PathEscape("the path must not contain '..'")
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / rel))
    if target != base and not target.is_relative_to(base):
        raise PathEscape(f"the path leaves {display_path(base)} through a symbolic link")
    return target
