"""Writing results, reports and evidence: atomically, with explicit modes.

A file is written to a temporary sibling, flushed and fsynced, given its mode, then
renamed over the target: a reader never sees half a file, and an interrupted write
leaves no partial file behind as if it were complete.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError

#: Documents with more runs than this are written without indentation: the stdlib's
#: C encoder only runs for compact output, and it is ~10x faster on large results.
PRETTY_MAX_RUNS = 500


def dumps(doc: Any, compact: bool | None = None) -> bytes:
    """JSON bytes of ``doc``: indented, or compact when asked or when it holds many runs."""
    if compact is None:
        compact = isinstance(doc, dict) and sum(len(t.get("runs", ())) for t in doc.get("tasks", ())) > PRETTY_MAX_RUNS
    if compact:
        return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_atomic(path: str | Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically with exactly ``mode`` (umask ignored)."""
    path = Path(path)
    parent = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except FileNotFoundError:
        raise WazaError(f"cannot write {path}: folder {parent} does not exist") from None
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WazaError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_json(path: str | Path, doc: Any, mode: int = 0o644) -> None:
    write_atomic(path, dumps(doc), mode)


def check_writable_target(path: str | Path) -> None:
    """Fail before running when the results file could not be written afterwards."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise WazaError(f"cannot write results to {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise WazaError(f"cannot write results to {path}: folder {parent} is not writable")
    if Path(path).is_dir():
        raise WazaError(f"cannot write results to {path}: it is a folder (use --output-dir for a folder)")
