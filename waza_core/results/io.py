"""Writing and reading results files: the one bytes reader and the atomic writer.

Every write goes through :mod:`waza_core.safe_write`: atomic for a regular file (a
reader never sees half a file), written through a symlink, directly to a FIFO or a
character device, never loosening an existing file's mode. Every read of a results
file's bytes goes through :func:`read_bytes` and :func:`parse_json_document`, so each
problem has one one-line error. The bytes of a document are made in
:mod:`waza_core.results.jsonbytes`.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError
from waza_core.results.jsonbytes import PRETTY_MAX_RUNS, dumps, json_bytes  # noqa: F401  (their old home)
from waza_core.safe_write import check_target, is_special, write_file


def write_atomic(path: str | Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` safely: see :mod:`waza_core.safe_write` (atomic for a
    regular file, written through a link, directly to a FIFO or device; a new file
    follows the umask unless ``mode`` is given, an existing one keeps its mode)."""
    write_file(path, data, mode)


def check_writable_target(path: str | Path) -> None:
    """Fail before running when the results file could not be written afterwards."""
    if Path(path).is_dir():
        raise WazaError(f"cannot write results to {path}: it is a folder (use --output-dir for a folder)")
    check_target(path, "results")


def load_results(path: str | Path) -> dict:
    """Read a results file, with a one-line error (WazaError) for anything but a
    readable JSON object with a ``tasks`` list: missing, a FIFO or device (never read
    blindly: it could block for ever or never end), not UTF-8, not JSON, or nested
    deeper than Python's parser can follow."""
    if is_special(path):
        raise WazaError(f"cannot read results file {path}: it is not a regular file")
    doc = parse_json(read_bytes(path), path)
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise WazaError(f"results file {path} has no 'tasks' list: is it a waza results file?")
    return doc


def read_bytes(path: str | Path, what: str = "results file") -> bytes:
    """The bytes of ``path``, with a one-line error when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise WazaError(f"cannot read {what} {path}: it is a folder") from None
    except MemoryError:
        raise WazaError(f"cannot read {what} {path}: it does not fit in memory") from None
    except OSError as exc:
        raise WazaError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def parse_json_document(data: bytes, path: str | Path, what: str = "results file") -> dict[str, Any]:
    """A JSON object from ``data`` (the bytes of ``path``), with a one-line error for anything else."""
    doc = parse_json(data, path, what)
    if not isinstance(doc, dict):
        raise WazaError(f"{what} {path} is not a JSON object: is it a waza results file?")
    return doc


def parse_json(data: bytes, path: str | Path, what: str = "results file") -> Any:
    """The JSON value in ``data`` (the bytes of ``path``), with a one-line error when it is not JSON."""
    try:  # UTF-8 only, as JSON between systems must be (RFC 8259) and waza (Go) reads it; a BOM is skipped
        text = data.decode("utf-8-sig") if data.startswith(b"\xef\xbb\xbf") else data.decode("utf-8")
        with paused_gc():
            doc = json.loads(text)
    except UnicodeDecodeError as exc:
        raise WazaError(f"{what} {path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except RecursionError:
        raise WazaError(f"{what} {path} is nested too deeply to be a waza file") from None
    except MemoryError:
        raise WazaError(f"{what} {path} does not fit in memory") from None
    except ValueError as exc:
        raise WazaError(f"{what} {path} is not valid JSON: {_one_line(exc)}") from None
    return doc


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a large document is built: the collector
    would walk the growing heap again and again (a third of the time of a read) and
    find nothing, as freshly decoded JSON has no cycles."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."
