"""``waza grade`` of a large results file in bounded memory.

:func:`waza_core.run.regrade.regrade` takes a whole :class:`ResultsDocument`: for a file
of 500,000 runs that is half a million run objects (gigabytes) although only the suite's
tasks are graded. Here the file's bytes are split by msgspec (strict JSON, every task
kept as a slice of the bytes), only the tasks of the suite are decoded (the first entry
of each id, as :func:`~waza_core.run.regrade.tasks_to_grade` takes them) and graded, and
the ``-o`` document is written from the slices in two passes (the summary, which comes
first in the file, then the tasks): the regraded tasks first, then every other task
decoded, normalized and encoded one at a time, exactly as the full path writes it (same
decoder, same encoder, same summary, the compact form a file of more than
:data:`~waza_core.results.jsonbytes.PRETTY_MAX_RUNS` runs gets). Memory: the file's
bytes, the graded tasks and one task at a time; a 500,000-run file's 280 MB output was
1 GB of peak memory when it was built in memory first.

A small file, or one only Python's JSON reads (``NaN``, a lone surrogate), takes the full
path: :func:`regrade_bytes` returns None.
"""

from __future__ import annotations

import io
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import attrs
import msgspec

from waza_core.model import Suite
from waza_core.results import triage
from waza_core.results.codec import _Decoder, _with_extra, decode_results, header_to_json, task_to_json
from waza_core.results.jsonbytes import PRETTY_MAX_RUNS, compact_json
from waza_core.results.model import ResultsDocument, RunResult, TaskResult
from waza_core.results.stats import SummaryTally
from waza_core.run import regrade as full

if TYPE_CHECKING:
    from waza_core.run.judge_agreement import JudgeRepeats

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_VALUE = msgspec.json.Decoder()


class _Id(msgspec.Struct):
    test_id: Any = None
    runs: Any = None


_ID = msgspec.json.Decoder(_Id)


@attrs.define
class StreamedGrade:
    """What :func:`regrade_bytes` produced: the summary and warnings of
    :class:`~waza_core.run.regrade.GradeReport`, and :meth:`output`, the ``-o`` document's
    bytes, made only when asked for."""

    summary: dict[str, Any]
    graded: list[str]
    warnings: list[str]
    suite: Suite
    header: ResultsDocument
    regraded: list[TaskResult]
    raw_tasks: list[msgspec.Raw]
    #: the tasks decoded for grading (their warnings were given then)
    decoded: frozenset[int] = frozenset()
    #: the header of the document written, summary included (:meth:`prepare`)
    document: ResultsDocument | None = None
    #: ``--repeat K``: the ``judge_agreement`` block (also in ``summary`` and the document)
    judge_agreement: dict[str, Any] | None = None

    def prepare(self) -> None:
        """The first pass over the other tasks: the summary and ``runs_per_test`` of the
        whole document (:attr:`document`), and what the decoder says of the tasks (added
        to :attr:`warnings`). Nothing of a task is kept."""
        tally = SummaryTally(len(self.raw_tasks))
        categories: Counter[str] = Counter()
        most_runs = 0
        count = 0
        for task in self._tasks(_Decoder(self.warnings)):
            tally.add(task, count)
            categories.update(triage.annotate_task(task, task.test_id in self.vacuous))
            count += 1
            most_runs = max(most_runs, len(task.runs))
        doc = full.merged_document(self.header, self.suite, [])
        if self.header.config.runs_per_test is None:
            doc.config.runs_per_test = most_runs or 1
        doc.summary = tally.summary(self.header.summary.duration_ms if self.header.summary is not None else 0)
        triage.put_counts(doc.summary, categories)
        self.document = doc

    @property
    def vacuous(self) -> frozenset[str]:
        return triage.vacuous_task_ids(self.header.extra.get("audit"))

    def write(self, fh: BinaryIO) -> None:
        """The second pass: the full results document, as
        :func:`~waza_core.run.regrade.merged_document` and
        :func:`~waza_core.results.codec.encode_results` give it, written one task at a time."""
        if self.document is None:
            self.prepare()
        doc = self.document
        assert doc is not None  # made by prepare()
        head = compact_json(header_to_json(doc))
        fh.write(head[:-1] + b',"tasks":[')
        vacuous = self.vacuous
        for count, task in enumerate(self._tasks(_Decoder([]))):
            triage.annotate_task(task, task.test_id in vacuous)  # as merged_document does
            fh.write(compact_json(task_to_json(task)) if not count else b"," + compact_json(task_to_json(task)))
        tail = compact_json(_with_extra({"incomplete": doc.incomplete}, doc.extra))
        fh.write(b"]," + tail[1:] + b"\n")

    def output(self) -> bytes:
        """:meth:`write` into bytes."""
        buffer = io.BytesIO()
        self.write(buffer)
        return buffer.getvalue()

    def _tasks(self, decoder: _Decoder) -> Iterator[TaskResult]:
        """The tasks of the document in order: the regraded ones, then every other task of
        the file (decoded one at a time) whose id was not graded."""
        done = {t.test_id for t in self.regraded}
        quiet = _Decoder([])  # the tasks decoded for grading gave their warnings then
        yield from self.regraded
        for index, raw in enumerate(self.raw_tasks):
            task = (quiet if index in self.decoded else decoder).task(_VALUE.decode(raw), f"tasks[{index}]")
            if task is not None and task.test_id not in done:
                yield task


def regrade_bytes(suite: Suite, registry, data: bytes, *, task_id: str | None = None,
                  workspace_dir: str | os.PathLike[str] | None = None, cancel: threading.Event | None = None,
                  on_run: Callable[[str, RunResult], None] | None = None,
                  judge_model: str | None = None,
                  judges: JudgeRepeats | None = None,
                  on_header: Callable[[ResultsDocument], None] | None = None,
                  require_workspace: bool = False) -> StreamedGrade | None:
    """:func:`~waza_core.run.regrade.regrade` of a results file's bytes, in bounded memory;
    None when the full path must read the file (see the module). ``on_header(doc)`` is
    called with the file's header (no task) before the first run is graded."""
    split = _split(data)
    if split is None:
        return None
    fields, raw_tasks = split
    wanted = {t.id for t in suite.tasks} if task_id is None else {task_id}
    found: dict[str, int] = {}
    runs = 0
    for index, raw in enumerate(raw_tasks):
        try:
            head = _ID.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            continue  # not a task object: the decoder leaves it out (and warns), as the full read does
        runs += len(head.runs) if isinstance(head.runs, list) else 0
        if isinstance(head.test_id, str) and head.test_id in wanted and head.test_id not in found:
            found[head.test_id] = index
    if runs <= PRETTY_MAX_RUNS:
        return None  # small: the full path, and its indented output
    warnings: list[str] = []
    header = decode_results({**fields, "tasks": []}, warnings)
    if on_header is not None:
        on_header(header)
    decoder = _Decoder(warnings)
    for index in sorted(found.values()):
        task = decoder.task(_VALUE.decode(raw_tasks[index]), f"tasks[{index}]")
        if task is not None:
            header.tasks.append(task)
    regraded = full.grade_tasks(suite, registry, header, warnings, task_id=task_id, workspace_dir=workspace_dir,
                                cancel=cancel, on_run=on_run, judge_model=judge_model, judges=judges,
                                require_workspace=require_workspace)
    header.tasks = []
    summary = full.grade_summary(regraded)
    block = None
    if judges is not None:
        block = header.extra["judge_agreement"] = summary["judge_agreement"] = judges.block()
    return StreamedGrade(summary=summary, graded=[t.test_id for t in regraded], warnings=warnings, suite=suite,
                         header=header, regraded=regraded, raw_tasks=raw_tasks, decoded=frozenset(found.values()),
                         judge_agreement=block)


def _split(data: bytes) -> tuple[dict[str, Any], list[msgspec.Raw]] | None:
    """(top-level fields but ``tasks``, each task as a slice), or None when msgspec does not
    take the file (the full read then says what is wrong, or reads what only it reads)."""
    try:
        top = _FIELDS.decode(data)
        tasks = top.pop("tasks", None)
        if tasks is None:
            return None
        raw_tasks = _RAW_LIST.decode(tasks)
        fields = {key: _VALUE.decode(value) for key, value in top.items()}
        for raw in raw_tasks:  # every task once, kept nowhere: a value only the full read
            _VALUE.decode(raw)  # takes (an integer over 64 bits) sends the file there
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    if fields.get("kind") is not None:
        return None  # an optimizer report: the full read refuses it with its message
    return fields, raw_tasks


__all__ = ["StreamedGrade", "regrade_bytes"]
