"""A fast, light reading of a results file's bytes: what a per-task summary needs, no more.

``waza report RESULTS --html`` of 20,000 runs must take well under two seconds from
start to exit, and most of a results file is outputs, transcripts and tool events the
summary never reads. Parsing all of it into Python objects (``json.loads``) costs more
than the rest of the command together. :func:`outline` instead lets msgspec validate
the whole file (strict JSON, valid UTF-8) while building Python objects only for the
fields a task summary reads (statuses, scores, durations, tokens, grader feedback),
and hands back each task's JSON text as it is in the file, so a report can embed it
without decoding or encoding it again.

The light document then goes through the same :func:`~waza_core.results.reading.decode`
and :func:`~waza_core.results.reading.normalize` as a full read, so every reading of it
(score, pass rate, flaky) is the one gate, compare and the other reporters make.
Anything unusual makes :func:`outline` return None and the caller reads the file the
full, tolerant way: JSON that only Python's parser takes (``NaN``, a lone surrogate), a
shape the light types do not expect (a run that is not an object), a file the tolerant
decoder would warn about, or an optimizer report.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any, TypedDict

import attrs
import msgspec


class _Grader(TypedDict, total=False):
    type: Any
    score: Any
    passed: Any
    feedback: Any


class _Digest(TypedDict, total=False):
    usage: Any
    tokens_in: Any
    tokens_out: Any
    tokens_total: Any


class _Run(TypedDict, total=False):
    run_number: Any
    attempts: Any
    status: Any
    duration_ms: Any
    validations: dict[str, _Grader] | None
    usage: Any
    session_digest: _Digest | None
    error_msg: Any
    cached: Any


class _Task(TypedDict, total=False):
    test_id: Any
    display_name: Any
    status: Any
    stats: Any
    tags: Any
    golden: Any
    cached: Any
    runs: list[_Run] | None


class _Top(TypedDict, total=False):
    kind: Any
    schemaVersion: Any
    eval_id: Any
    skill: Any
    eval_name: Any
    timestamp: Any
    waza_version: Any
    incomplete: Any
    config: Any
    summary: Any
    tasks: list[msgspec.Raw]


_TOP = msgspec.json.Decoder(_Top)
_TASK = msgspec.json.Decoder(_Task)


@attrs.define
class Outline:
    """``document``: the header fields and a light copy of every task (normalized like a
    full read); ``task_sources[i]``: the JSON text of task ``i`` as the file has it, with
    ``<``, ``>`` and ``&`` written as ``\\u`` escapes (the same JSON value, safe to embed
    in an HTML ``<script>`` element)."""

    document: dict[str, Any]
    task_sources: list[msgspec.Raw]


def escape_for_html(data: bytes) -> bytes:
    """JSON text with ``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``.

    In valid JSON these bytes can only stand inside a string (never in an escape, never
    in a multi-byte UTF-8 sequence), so replacing them byte for byte keeps the value.
    """
    return data.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


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


def outline(data: bytes, where: str) -> Outline | None:
    """The light reading of a results file's bytes, or None (see the module docstring).

    Raises :class:`~waza_core.errors.WazaError` only for what a full read refuses too:
    a schema version this waza does not read.
    """
    from waza_core.results.reading import decode, normalize

    safe = escape_for_html(data)
    with paused_gc():
        try:
            top = _TOP.decode(safe)
            raw_tasks = top.pop("tasks", None)
            if raw_tasks is None or top.get("kind") is not None:
                return None
            tasks = [_TASK.decode(raw) for raw in raw_tasks]
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None  # RecursionError: nested deeper than msgspec goes; the full read says so
        doc: dict[str, Any] = {**top, "tasks": tasks}
        warnings: list[str] = []
        doc = normalize(decode(doc, where, warnings), where)
    if warnings or len(doc["tasks"]) != len(raw_tasks):
        return None  # the full read says what is odd about the file
    return Outline(doc, raw_tasks)
