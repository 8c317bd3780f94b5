"""The call records that mocks leave for waza: one JSON file per call in a run's log folder.

A shim (``command_mocks``) or the MCP mock server (``mcp_mocks``) writes each call it
answers as ``{"recorded_at": <ns>, "invocation": {...}}``, whole and then renamed, so a
reader never sees half a record; waza reads them back in the order they happened once the
run is over. Standard library and :mod:`waza_core.untrusted` only: the shim and the MCP server import this module.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from waza_core import untrusted


def write_record(log_dir: str, invocation: dict) -> None:
    """One ``call-*.json`` in ``log_dir`` (mode 0600, written whole, then renamed)."""
    now = time.time_ns()
    data = json.dumps({"recorded_at": now, "invocation": invocation}).encode("utf-8")
    stem = f"call-{now:020d}-{os.getpid()}-{os.urandom(4).hex()}"
    tmp = os.path.join(log_dir, f".{stem}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, os.path.join(log_dir, stem + ".json"))


#: the largest call record read back: a bigger file in the folder is skipped unread
MAX_RECORD_BYTES = 1024 * 1024
#: the most records read from one run's folder (the rest are skipped, with one warning)
MAX_RECORDS = 10_000

_STR = (lambda v: isinstance(v, str), "a string")
_INDEX = (lambda v: untrusted.is_int(v) and v >= -1, "an integer >= -1 (-1: no response matched)")
#: the fields of a record's invocation, by who wrote it: (check, what it must be, required)
COMMAND_FIELDS = {"command": (*_STR, True),
                  "args": (lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
                           "a list of strings", False),
                  "exit_code": (untrusted.is_int, "an integer", False), "response_index": (*_INDEX, False)}
MCP_FIELDS = {"server": (*_STR, True), "tool": (*_STR, True),
              "arguments": (lambda v: isinstance(v, dict), "an object", False),
              "response_index": (*_INDEX, False), "is_error": (lambda v: isinstance(v, bool), "true or false", False)}


def read_records(folder: str | os.PathLike[str], fields: dict | None = None,
                 skipped: list[str] | None = None) -> list[dict]:
    """The invocations recorded in ``folder``, in the order they happened (record time,
    then file name).

    The folder is in the agent's reach, so every record is input someone else could have
    written (docs/safety.md): read through :mod:`waza_core.untrusted` (a link, a FIFO, a file
    over :data:`MAX_RECORD_BYTES`, bad JSON, NaN, a 64-bit overflow or more than 100 levels
    are refused) and checked against ``fields`` (:data:`COMMAND_FIELDS`, :data:`MCP_FIELDS`).
    A bad record is skipped, with its reason appended to ``skipped``; the others are kept."""
    folder = Path(folder)
    note = skipped.append if skipped is not None else (lambda message: None)
    records = []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []
    if len(names) > MAX_RECORDS:
        note(f"{len(names) - MAX_RECORDS} call record(s) past the first {MAX_RECORDS} skipped")
        names = names[:MAX_RECORDS]
    for name in names:
        try:
            records.append(_record(folder / name, name, fields or {}))
        except FileNotFoundError:
            continue
        except untrusted.UntrustedInput as exc:
            note(f"call record {exc}; skipped")
    records.sort(key=lambda r: r[0])  # stable: file-name order breaks ties
    return [inv for _, inv in records]


def _record(path: Path, name: str, fields: dict) -> tuple[int, dict]:
    """(record time, invocation) of one record file, or UntrustedInput naming ``name``."""
    try:
        record = untrusted.loads(untrusted.read_bytes(path, limit=MAX_RECORD_BYTES), name)
    except untrusted.UntrustedInput as exc:
        raise untrusted.UntrustedInput(str(exc).replace(str(path), name)) from None
    if not isinstance(record, dict):
        raise untrusted.UntrustedInput(f"{name}: not a JSON object")
    recorded_at = untrusted.field(record, "recorded_at", lambda v: untrusted.is_int(v) and v >= 0,
                                  "an integer >= 0", name, optional=True) or 0
    invocation = untrusted.field(record, "invocation", lambda v: isinstance(v, dict), "an object", name)
    for key, (check, what, required) in fields.items():
        untrusted.field(invocation, key, check, what, f"{name}: invocation", optional=not required)
    return recorded_at, invocation
