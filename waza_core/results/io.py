"""Writing and reading results files.

Every write goes through :mod:`waza_core.safe_write`: atomic for a regular file (a
reader never sees half a file), written through a symlink, directly to a FIFO or a
character device, never loosening an existing file's mode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError

#: Documents with more runs than this are written without indentation: the stdlib's
#: C encoder only runs for compact output, and it is ~10x faster on large results.
PRETTY_MAX_RUNS = 500


def dumps(doc: Any, compact: bool | None = None) -> bytes:
    """JSON bytes of ``doc``: indented, or compact when asked or when it holds many runs.
    Compact output is the results writer's (msgspec), so ``--reporter json`` and ``-o``
    give the same bytes for a large run too (``1e16``, not the stdlib's ``1e+16``)."""
    if compact is None:
        compact = isinstance(doc, dict) and sum(len(t.get("runs", ())) for t in doc.get("tasks", ())) > PRETTY_MAX_RUNS
    if compact:
        from waza_core.results.codec import compact_json

        return compact_json(doc) + b"\n"
    return json_bytes(doc, indent=2) + b"\n"


def json_bytes(value: Any, **options: Any) -> bytes:
    """UTF-8 JSON of ``value``; a lone surrogate (from a JSON ``"\\ud800"`` escape in a
    data file, an agent's undecodable output) is written as its ``\\uXXXX`` escape, as
    JSON allows, instead of failing the whole results file at the very end."""
    try:
        return json.dumps(value, ensure_ascii=False, **options).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, **options).encode("ascii")


def write_atomic(path: str | Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` safely: see :mod:`waza_core.safe_write` (atomic for a
    regular file, written through a link, directly to a FIFO or device; a new file
    follows the umask unless ``mode`` is given, an existing one keeps its mode)."""
    from waza_core.safe_write import write_file

    write_file(path, data, mode)


def write_json(path: str | Path, doc: Any, mode: int | None = None) -> None:
    write_atomic(path, dumps(doc), mode)


def check_writable_target(path: str | Path) -> None:
    """Fail before running when the results file could not be written afterwards."""
    from waza_core.safe_write import check_target

    if Path(path).is_dir():
        raise WazaError(f"cannot write results to {path}: it is a folder (use --output-dir for a folder)")
    check_target(path, "results")


def load_results(path: str | Path) -> dict:
    """Read a results file, with a one-line error (WazaError) for anything but a
    readable JSON object with a ``tasks`` list: missing, a FIFO or device (never read
    blindly: it could block for ever or never end), not UTF-8, not JSON, or nested
    deeper than Python's parser can follow."""
    from waza_core.safe_write import is_special

    if is_special(path):
        raise WazaError(f"cannot read results file {path}: it is not a regular file")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise WazaError(f"cannot read results file {path}: {exc.strerror}") from None
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WazaError(f"results file {path} is not valid JSON: {_one_line(exc)}") from None
    except RecursionError:
        raise WazaError(f"results file {path} is nested too deeply to read: is it a waza results file?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise WazaError(f"results file {path} has no 'tasks' list: is it a waza results file?")
    return doc


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."
