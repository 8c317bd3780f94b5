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

import functools
from typing import Annotated, Any, Optional, TypedDict

import attrs
import msgspec

from waza_core.results.io import paused_gc
from waza_core.results.reading import decode, normalize


class _Grader(TypedDict, total=False):
    type: Any
    score: Any
    passed: Any
    feedback: Any
    error: Any  # failure triage: a grader that could not judge


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
    triage: Any
    checkpoints: Any  # failure triage: a checkpoint that stopped the run


class _Task(TypedDict, total=False):
    test_id: Any
    display_name: Any
    status: Any
    stats: Any
    tags: Any
    golden: Any
    cached: Any
    skill_impact: Any  # an A/B run: the HTML report's skill impact table
    triage: Any
    error_msg: Any  # a task without runs (its before_task hook failed)
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
    audit: Any
    judge_agreement: Any  # waza grade --repeat: shown by the markdown and HTML reports
    skill_impact_significance: Any  # an A/B run: shown by the markdown and HTML reports
    baseline_from: Any  # waza run --baseline-from: which stored file the baseline came from
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


def outline(data: bytes, where: str) -> Outline | None:
    """The light reading of a results file's bytes, or None (see the module docstring).

    Raises :class:`~waza_core.errors.WazaError` only for what a full read refuses too:
    a schema version this waza does not read.
    """
    safe = escape_for_html(data)
    with paused_gc():
        try:
            top = _TOP.decode(safe)
            raw_tasks = top.pop("tasks", None)
            if raw_tasks is None or top.get("kind") is not None:
                return None
            ours = isinstance(top.get("waza_version"), str)
            task_decoder = _TASK if ours else _go_decoder()
            tasks: list[Any] = [task_decoder.decode(raw) for raw in raw_tasks]
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None  # RecursionError: nested deeper than msgspec goes; the full read says so
        warnings: list[str] = []
        if ours:  # decode() keeps our own files as they are
            doc = decode({**top, "tasks": tasks}, where, warnings)
        else:  # waza (Go): the tolerant decoder's reading of the light fields, see below
            doc = decode({**top, "tasks": []}, where, warnings)
            doc["tasks"] = go_light_tasks(tasks)
        if warnings or doc["tasks"] is None:
            return None  # the full read says what is odd about the file
        doc = normalize(doc, where)
    if len(doc["tasks"]) != len(raw_tasks):
        return None
    return Outline(doc, raw_tasks)


# -- the tolerant decoder, for the light fields of a waza (Go) file ------------------------
#
# decode() of a light waza (Go) document runs the core's tolerant decoder
# (waza_core.results.codec) over every task and run and encodes them back: half a second
# for 20,000 runs, more than the rest of `waza report --html`. What it does to the light
# fields of a file it has nothing to warn about is simple: a missing field (or a null one
# that cannot be null) takes its default. So a waza (Go) file's tasks are decoded with
# types made from the decoder's own field tables (each field of its kind, or null), which
# msgspec checks in C: a value the decoder would warn about fails them, and the full read
# runs and warns. go_light_tasks() then fills the defaults from the same tables. Like the
# light reading of our own files, it leaves out the fields a summary never reads
# (outputs, transcripts, ...). Property tests in tests/reporters/test_report_outline.py hold
# the page, the gate report and every light field equal to those of a full read.

_KIND_TYPES: dict[str, Any] = {
    "int": int, "count": Annotated[int, msgspec.Meta(ge=0)], "positive": Annotated[int, msgspec.Meta(ge=1)],
    "num": int | float, "str": str, "bool": bool, "list": list, "dict": dict,
}


def _strict(name: str, rows: tuple, light: type, **nested: Any) -> tuple[type, list, list]:
    """A TypedDict of ``light``'s fields, each of its kind in the decoder's ``rows`` or null
    (``nested``: the types of the other fields); the (key, default) of its non-nullable
    fields, the keys of its nullable ones (absent: null, as the decoder takes them)."""
    keys = set(light.__annotations__)
    rows = tuple(row for row in rows if row[0] in keys)
    assert not any(isinstance(row[4], (list, dict)) or (row[3] and row[4] is not None) for row in rows)
    fields = {key: _KIND_TYPES[kind] | None for key, _, kind, _, _ in rows}
    fields.update({k: v for k, v in nested.items()})
    fields.update({k: Any for k in keys if k not in fields})
    typed = TypedDict(name, fields, total=False)  # type: ignore[misc]  # a type made at run time
    return (typed, [(key, default) for key, _, _, nullable, default in rows if not nullable],
            [key for key, _, _, nullable, _ in rows if nullable])


@functools.cache
def _go_types() -> dict[str, Any]:
    # deferred: waza_core.results adds ~25.6 ms to importing this module
    from waza_core.results import codec

    grader = _strict("_GoGrader", codec._GRADER_FIELDS, _Grader)
    digest = _strict("_GoDigest", codec._DIGEST_FIELDS, _Digest)
    grader_type: Any = grader[0]
    run = _strict("_GoRun", codec._RUN_FIELDS, _Run, validations=Optional[dict[str, grader_type]],
                  session_digest=Optional[digest[0]])
    run_type: Any = run[0]
    task = _strict("_GoTask", codec._TASK_FIELDS, _Task, runs=Optional[list[run_type]],
                   tags=list[str] | None)  # the decoder warns about a tag that is not a string
    return {"grader": grader, "digest": digest, "run": run, "task": task}


@functools.cache
def _go_decoder() -> msgspec.json.Decoder:
    return msgspec.json.Decoder(_go_types()["task"][0])


def _fill(obj: dict[str, Any], defaults: list, nullable: list) -> dict[str, Any]:
    for key, default in defaults:
        if obj.get(key) is None:
            obj[key] = default
    for key in nullable:
        obj.setdefault(key, None)
    return obj


def go_light_tasks(tasks: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``tasks`` (as the waza (Go) light types decode them) as decode() would give them, or
    None when the tolerant decoder would warn about one of them."""
    types = _go_types()
    _, task_defaults, task_nullable = types["task"]
    _, run_defaults, run_nullable = types["run"]
    _, grader_defaults, grader_nullable = types["grader"]
    _, digest_defaults, digest_nullable = types["digest"]
    for task in tasks:
        test_id = task.get("test_id")
        stats = task.get("stats")
        if not isinstance(test_id, str) or (stats is not None and not all(
                type(stats.get(k, 0.0)) in (int, float) for k in ("avg_score", "avg_weighted_score"))):
            return None
        _fill(task, task_defaults, task_nullable)
        if task["display_name"] is None:
            task["display_name"] = test_id
        if task["tags"] is None:
            del task["tags"]  # the encoder writes tags only when set
        runs = task.get("runs") or []
        task["runs"] = runs
        for position, run in enumerate(runs, 1):
            _fill(run, run_defaults, run_nullable)
            if run["run_number"] is None:
                run["run_number"] = position
            if run["error_msg"] is None:
                del run["error_msg"]  # the encoder writes it only when set
            validations = run.get("validations") or {}
            for grader in validations.values():
                _fill(grader, grader_defaults, grader_nullable)
            run["validations"] = validations
            run["session_digest"] = _fill(run.get("session_digest") or {}, digest_defaults, digest_nullable)
    return tasks
