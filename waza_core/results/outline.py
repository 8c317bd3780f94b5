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
import functools
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
        warnings: list[str] = []
        if isinstance(top.get("waza_version"), str):  # ours: decode() keeps it as it is
            doc: dict[str, Any] | None = decode({**top, "tasks": tasks}, where, warnings)
        else:  # waza (Go): the tolerant decoder's reading of the few light fields
            doc = decode({**top, "tasks": []}, where, warnings)
            doc["tasks"] = light_tasks(tasks)
        if warnings or doc["tasks"] is None:
            return None  # the full read says what is odd about the file
        doc = normalize(doc, where)
    if len(doc["tasks"]) != len(raw_tasks):
        return None
    return Outline(doc, raw_tasks)


# -- the tolerant decoder, for the light fields only ---------------------------------------
#
# decode() of a light waza (Go) document runs the core's tolerant decoder
# (waza_core.results.codec) over every task and run and encodes them back: half a second
# for 20,000 runs, more than the rest of `waza report --html`. What it does to the light
# fields of a file it has nothing to warn about is simple: a missing field (or a null one
# that cannot be null) takes its default. light_tasks() does just that, from the decoder's
# own field tables, and gives up (None: the full read runs and warns) on any value the
# decoder would warn about. Like the light reading of our own files, it leaves out the
# fields a summary never reads (outputs, transcripts, ...). The property tests in tests/ci/test_report_outline.py hold
# the page and the gate report of a light reading equal to those of a full read.


class _Odd(Exception):
    """A value the tolerant decoder would warn about."""


def _table(rows: tuple, light: type) -> list[tuple[str, Any, bool, Any]]:
    """The decoder's rows for the light fields: key, type check, nullable, default."""
    from waza_core.results.codec import _KINDS

    keys = set(light.__annotations__)
    assert not any(isinstance(row[4], (list, dict)) for row in rows if row[0] in keys), "a shared default"
    return [(key, _KINDS[kind][0], nullable, default) for key, _, kind, nullable, default in rows if key in keys]


def _fields(obj: dict[str, Any], table: list[tuple[str, Any, bool, Any]]) -> dict[str, Any]:
    """The light fields of ``obj`` as the decoder reads them (defaults here are never a list or dict)."""
    out = {}
    for key, check, nullable, default in table:
        value = obj.get(key)
        if value is None:  # missing, or null: "not recorded"
            out[key] = None if nullable and key in obj else default
        elif check(value):
            out[key] = value
        else:
            raise _Odd
    return out


@functools.cache
def _tables() -> dict[str, tuple]:
    from waza_core.results import codec

    return {"task": _table(codec._TASK_FIELDS, _Task), "run": _table(codec._RUN_FIELDS, _Run),
            "digest": _table(codec._DIGEST_FIELDS, _Digest), "grader": _table(codec._GRADER_FIELDS, _Grader)}


def light_tasks(tasks: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``tasks`` (light, as :data:`_TASK` decodes them) as decode() would give them, or
    None when the tolerant decoder would warn about one of their values."""
    try:
        tables = _tables()
        return [_light_task(t, tables) for t in tasks]
    except _Odd:
        return None


def _light_task(obj: dict[str, Any], tables: dict[str, tuple]) -> dict[str, Any]:
    test_id = obj.get("test_id")
    if not isinstance(test_id, str):
        raise _Odd
    f = _fields(obj, tables["task"])
    stats, tags = f["stats"], f["tags"]
    if stats is not None and not all(isinstance(stats.get(k, 0.0), (int, float)) and not isinstance(
            stats.get(k, 0.0), bool) for k in ("avg_score", "avg_weighted_score")):
        raise _Odd
    if tags is not None and not all(isinstance(t, str) for t in tags):
        raise _Odd
    runs = obj.get("runs")
    if runs is not None and not isinstance(runs, list):
        raise _Odd
    name = f["display_name"]
    out: dict[str, Any] = {"test_id": test_id, "display_name": test_id if name is None else name}
    if tags is not None:
        out["tags"] = tags
    out["status"] = f["status"]
    out["runs"] = [_light_run(r, i + 1, tables) for i, r in enumerate(runs or ())]
    out["stats"] = stats
    for key in ("golden", "cached"):  # fields the decoder does not know: kept as they are
        if key in obj:
            out[key] = obj[key]
    return out


def _light_run(obj: Any, position: int, tables: dict[str, tuple]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _Odd
    out = _fields(obj, tables["run"])
    if out["run_number"] is None:
        out["run_number"] = position
    if out["error_msg"] is None:  # the encoder writes it only when set
        del out["error_msg"]
    raw = obj.get("validations")
    validations = {}
    if raw is not None:
        for name, v in raw.items():
            if not isinstance(v, dict):
                raise _Odd
            validations[name] = _fields(v, tables["grader"])
    out["validations"] = validations
    digest = obj.get("session_digest")
    d = _fields(digest if digest is not None else {}, tables["digest"])
    if digest:
        d.update((k, v) for k, v in digest.items() if k not in d)  # tokens_in, ...: kept as they are
    out["session_digest"] = d
    if "cached" in obj:
        out["cached"] = obj["cached"]
    return out
