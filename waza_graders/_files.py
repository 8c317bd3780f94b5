"""File helpers shared by the graders that read files: safe reads, waza's path rule, atomic writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def go_error(exc: OSError) -> str:
    """An OS error worded as Go words it ("permission denied", lower case)."""
    text = exc.strerror or str(exc)
    return text[:1].lower() + text[1:]


def read_regular(path: str | os.PathLike[str], open_label: str | None = None,
                 read_label: str | None = None) -> tuple[bytes, str | None]:
    """The bytes of a regular file: ``(data, None)``, ``(b"", "missing")`` or ``(b"", reason)``.

    Opened non-blocking and checked with fstat before reading, so a FIFO or a device is
    refused instead of blocking or streaming for ever. ``reason`` reads like Go's
    ``PathError``: ``open_label`` (default ``open <file name>``) for an error opening the
    file, ``read_label`` (default ``read <file name>``) for one reading it.
    """
    name = os.path.basename(os.fspath(path))
    open_label = open_label or f"open {name}"
    read_label = read_label or f"read {name}"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return b"", "missing"
    except OSError as exc:
        return b"", f"{open_label}: {go_error(exc)}"
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return b"", f"{read_label}: is a directory"
        if not stat.S_ISREG(st.st_mode):
            return b"", f"{open_label}: not a regular file"
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), None
    except OSError as exc:
        return b"", f"{read_label}: {go_error(exc)}"
    finally:
        os.close(fd)


def locate(value: str, suite, want_dir: bool = False) -> tuple[Path, list[Path]]:
    """Where a path from a grader config points: ``(chosen, candidates tried)``.

    waza (Go) resolves these paths against the current working directory. waza for
    Python does too, and when nothing is there it looks in the suite's folder (the one
    holding eval.yaml), so a suite runs from any directory. When neither exists, the
    suite-folder candidate is chosen (that is where a new snapshot is written).
    """
    path = Path(os.path.expanduser(value)) if value.startswith("~") else Path(value)
    if path.is_absolute():
        return path, [path]
    candidates = [Path.cwd() / path]
    if suite is not None:
        in_suite = Path(suite.dir) / path
        if in_suite not in candidates:
            candidates.append(in_suite)
    check = os.path.isdir if want_dir else os.path.exists
    for cand in candidates:
        if check(cand):
            return cand, candidates
    return candidates[-1], candidates


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (waza's one safe writer): a new file follows
    the umask, an old one keeps its mode; a link is replaced, never followed."""
    # deferred: waza_core adds ~10.1 ms to importing this module
    from waza_core import write_file_safely

    write_file_safely(path, data, through_links=False)
