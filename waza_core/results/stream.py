"""Reading a large results file one task at a time, in bounded memory.

``waza compare`` and ``waza report --markdown`` of a valid 38 MB file of 500,000 runs ran
out of memory: the whole document became Python objects (about 60 times the file's size)
before a single figure was computed. Here the file's bytes are checked and split by msgspec
(strict JSON, valid UTF-8; every task kept as a slice of the bytes, no object built), the
header is decoded alone, and :meth:`StreamedResults.tasks` decodes, reads tolerantly and
normalizes one task at a time, exactly as a full read would (the same
:func:`~waza_core.results.reading.decode` and :func:`~waza_core.results.reading.normalize`
per task), so each reader keeps only what it needs of each task (a row of figures for
compare, the shown rows for the markdown summary).

What costs memory then is the file's bytes, one slice object per task and what the reader
keeps. A file msgspec refuses (``NaN``, a lone surrogate, nesting deeper than it goes) is
left to the full, tolerant reading (:func:`stream` returns None).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from waza_core.results import reading
from waza_core.results.io import read_bytes
from waza_core.results.outline import _TOP

_DECODE = msgspec.json.Decoder()


class StreamedResults:
    """A results file's header, and its tasks decoded one at a time (see the module)."""

    def __init__(self, header: dict[str, Any], raw_tasks: list[msgspec.Raw], where: str, ours: bool) -> None:
        self.raw_tasks = raw_tasks
        self.where = where
        self.ours = ours
        self.warned = 0
        self.warned_tasks: set[int] = set()  # each task's warnings once, however often it is read
        self.header = header
        summary = header.get("summary")
        if not isinstance(summary, dict) or not all(reading._is_number(summary.get(k)) for k in reading.SUMMARY_KEYS):
            computed = summarize(self.tasks())
            if not isinstance(summary, dict):
                header["summary"] = computed
            else:
                for key, value in computed.items():
                    if not reading._is_number(summary.get(key)):
                        summary[key] = value

    def __len__(self) -> int:
        return len(self.raw_tasks)

    def tasks(self) -> Iterator[dict[str, Any]]:
        """Every task, decoded and normalized as a full read gives it, one at a time."""
        for index, raw in enumerate(self.raw_tasks):
            task = _decode_task(raw, index, self)
            if isinstance(task, dict):
                yield reading._task(task, index)

    def warn(self, index: int, lines: list[str]) -> None:
        if not lines or index in self.warned_tasks:
            return
        self.warned_tasks.add(index)
        for line in lines:
            self.warned += 1
            if self.warned <= reading.MAX_WARNINGS:
                sys.stderr.write(f"waza: warning: {self.where}: {line}\n")


def _decode_task(raw: msgspec.Raw, index: int, streamed: StreamedResults) -> Any:
    task = _DECODE.decode(raw)
    if streamed.ours:
        return task
    # deferred: waza_core.results.codec adds ~20.5 ms to importing this module
    from waza_core.results.codec import _Decoder, task_to_json

    warnings: list[str] = []
    decoded = _Decoder(warnings).task(task, f"tasks[{index}]")
    streamed.warn(index, warnings)
    return task_to_json(decoded) if decoded is not None else None


def stream(data: bytes, where: str) -> StreamedResults | None:
    """The streamed reading of a results file's bytes, or None when only the full reading
    takes the file (Python-only JSON) or it is not a results file (an optimizer report).
    Raises WazaError for what a full read refuses too (another major schema version)."""
    try:
        top = _TOP.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    raw_tasks = top.pop("tasks", None)
    if raw_tasks is None or top.get("kind") is not None:
        return None
    try:  # every task once, kept nowhere: a value only the full read takes (an integer of
        for raw in raw_tasks:  # more than 64 bits) sends the whole file there, before any figure
            _DECODE.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    ours = isinstance(top.get("waza_version"), str)
    header = reading.decode({**top, "tasks": []}, where)
    header.pop("tasks", None)
    reading.check_schema_version(header, where)
    if not isinstance(header.get("config"), dict):
        header["config"] = {}
    for key in ("eval_name", "skill"):
        if not isinstance(header.get(key), str):
            header[key] = ""
    if "summary" not in top:
        header.pop("summary", None)
    return StreamedResults(header, raw_tasks, where, ours)


def open_stream(path: str | Path) -> StreamedResults | None:
    """:func:`stream` of the file at ``path`` (read whole: its bytes are what is kept)."""
    return stream(read_bytes(path), str(path))


def summarize(tasks: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """:func:`waza_core.results.reading.summarize` over tasks that come one at a time."""
    total = passed = failed = errors = 0
    score_sum = 0.0
    duration = 0
    for task in tasks:
        total += 1
        status = task["status"]
        passed += status == "passed"
        failed += status == "failed"
        errors += status == "error"
        score = reading.task_score(task)
        if score is not None:
            score_sum += score
        duration += sum(int(r["duration_ms"]) for r in task["runs"])
    return {
        "total_tests": total, "succeeded": passed, "failed": failed, "errors": errors,
        "skipped": total - passed - failed - errors,
        "success_rate": passed / total if total else 0.0,
        "aggregate_score": score_sum / total if total else 0.0,
        "duration_ms": duration,
    }


__all__ = ["StreamedResults", "open_stream", "stream", "summarize"]
