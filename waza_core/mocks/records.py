"""The call records that mocks leave for waza: one JSON file per call in a run's log folder.

A shim (``command_mocks``) or the MCP mock server (``mcp_mocks``) writes each call it
answers as ``{"recorded_at": <ns>, "invocation": {...}}``, whole and then renamed, so a
reader never sees half a record; waza reads them back in the order they happened once the
run is over. Standard library only: the shim and the MCP server import this module.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


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


def read_records(folder: str | os.PathLike[str]) -> list[dict]:
    """The invocations recorded in ``folder``, in the order they happened (record time,
    then file name); unreadable or malformed records are skipped."""
    folder = Path(folder)
    records = []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []
    for name in names:
        try:
            with open(folder / name, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and isinstance(record.get("invocation"), dict):
            records.append((int(record.get("recorded_at") or 0), record["invocation"]))
    records.sort(key=lambda r: r[0])  # stable: file-name order breaks ties
    return [inv for _, inv in records]
