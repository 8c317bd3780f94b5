"""``tasks_from``: tasks generated from the rows of a CSV or JSON Lines file.

As in waza (Go) ``internal/dataset``: when an eval sets ``tasks_from``, its tasks are
the rows of that file and the ``tasks`` globs are not read. Per row:

* ``test_id`` = the ``id`` column, else the ``name`` column, else ``row-N``;
* display name = the ``name`` column, else ``row-N``;
* prompt = the ``prompt`` column (empty when there is none), rendered as a template
  (:mod:`waza_core.suite.template`) when it contains ``{{``, with ``.Vars`` = the
  eval's ``inputs`` overlaid by the row's columns;
* no task graders: only the eval's global graders grade these tasks.

``range: [start, end]`` keeps rows start..end (1-based, inclusive, counting data rows
only: the CSV header and blank lines do not count). The file is read as a stream and
reading stops after row ``end``, so a small range of a huge file costs only what it
reads; a file is never held in memory whole.

Differences from waza (Go), each a fix of a trap:

* ``row-N`` counts rows of the file, not of the selected range (Go numbers the range
  from 1, so ``range: [11, 20]`` and ``[1, 10]`` both made ``row-1`` .. ``row-10``);
* the path must stay inside the suite's folder after symbolic links are resolved
  (Go compares the cleaned path only);
* a UTF-8 byte-order mark before the header is dropped (Go keeps it in the first
  column's name, which then never matches ``id``);
* JSON Lines (``.jsonl``, ``.ndjson``) is read too: one object per line, strings as
  they are, numbers and booleans as their JSON text.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from waza_core import limits
from waza_core.model import TaskSpec
from waza_core.paths import PathEscape, display_path, resolve_inside
from waza_core.suite import template

#: suffixes read as JSON Lines; anything else is CSV
JSONL_SUFFIXES = (".jsonl", ".ndjson")
#: problems reported per file before the rest are only counted
MAX_ROW_PROBLEMS = 20
#: a CSV field may be this long (the stdlib's default is 128 KiB)
MAX_FIELD_BYTES = 16 * 1024 * 1024

#: ``report(file, message, where, warning=False)``: ``where`` is ``(line, col)`` in the
#: data file, ``("key",)`` for a key of eval.yaml, or None
Report = Callable[..., None]


class DatasetError(ValueError):
    """A problem with the whole file (or one row); ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def resolve(eval_dir: Path, rel: str) -> Path:
    """The data file ``rel`` names, which must stay inside ``eval_dir`` (links resolved)."""
    text = rel
    if os.path.isabs(text):
        text = os.path.relpath(text, eval_dir)
    norm = os.path.normpath(text)
    if norm == ".." or norm.startswith(".." + os.sep) or os.path.isabs(norm):
        raise PathEscape("the path leaves the suite's folder")
    return resolve_inside(eval_dir, norm)


def check_range(value) -> tuple[int, int] | None:
    """``range`` as (start, end), None when unset; DatasetError when malformed.

    waza (Go) reads ``range`` into ``[2]int`` and treats ``[0, 0]`` as unset."""
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise DatasetError("range must be a list of two integers [start, end] (1-based, inclusive)")
    start, end = value
    if (start, end) == (0, 0):
        return None
    if start <= 0 or end <= 0:
        raise DatasetError(f"invalid range: both values must be > 0, got [{start}, {end}]")
    if start > end:
        raise DatasetError(f"invalid range: start ({start}) must be <= end ({end})")
    return start, end


def iter_rows(path: Path, rng: tuple[int, int] | None = None) -> Iterator[tuple[int, int, dict[str, str]]]:
    """Yield ``(row number, line number, row)`` for the selected rows, reading lazily.

    Raises :class:`DatasetError` for a bad file or row (stopping there)."""
    reader = _jsonl_rows if path.suffix.lower() in JSONL_SUFFIXES else _csv_rows
    start, end = rng if rng is not None else (1, None)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            for number, line, row in reader(fh):
                if end is not None and number > end:
                    return
                if number >= start:
                    yield number, line, row
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text ({exc.reason} at byte {exc.start} of a read block)") from None
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror or exc}") from None


def count_rows(path: Path) -> int:
    """How many data rows the file has (read as a stream; for messages only)."""
    return sum(1 for _ in iter_rows(path))


def _csv_rows(fh) -> Iterator[tuple[int, int, dict[str, str]]]:
    old_limit = csv.field_size_limit()
    csv.field_size_limit(min(MAX_FIELD_BYTES, sys.maxsize))
    try:
        reader = csv.reader(fh, strict=True)
        header = None
        number = 0
        try:
            for record in reader:
                if not record or record == [""]:
                    continue  # blank line, skipped as Go's encoding/csv does
                if header is None:
                    header = record
                    continue
                number += 1
                if len(record) != len(header):
                    raise DatasetError(f"row {number} has {len(record)} column(s), expected {len(header)} "
                                       f"(the header has {len(header)}: {', '.join(header)})", reader.line_num)
                yield number, reader.line_num, dict(zip(header, record, strict=True))
        except csv.Error as exc:
            hint = " (a quoted field is never closed)" if "unexpected end of data" in str(exc) else ""
            raise DatasetError(f"invalid CSV: {exc}{hint}", reader.line_num) from None
        if header is None:
            raise DatasetError("the file is empty (no header row)")
    finally:
        csv.field_size_limit(old_limit)


def _jsonl_rows(fh) -> Iterator[tuple[int, int, dict[str, str]]]:
    number = 0
    for line_no, line in enumerate(fh, 1):
        if not line.strip():
            continue
        number += 1
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"row {number} is not valid JSON: {exc}", line_no) from None
        if not isinstance(obj, dict):
            raise DatasetError(f"row {number} must be a JSON object, got {type(obj).__name__}", line_no)
        row = {}
        for key, value in obj.items():
            if isinstance(value, str):
                row[key] = value
            elif value is None:
                row[key] = ""
            elif isinstance(value, (bool, int, float)):
                row[key] = json.dumps(value)
            else:
                raise DatasetError(f"row {number}: column {key!r} must be a string, number or boolean, "
                                   f"got {'an object' if isinstance(value, dict) else 'a list'}", line_no)
        yield number, line_no, row


def _too_long(number: int, rendered: int, budget: int) -> str:
    """The message for a row whose prompt goes over a rendering limit (see limits.py)."""
    if budget - rendered >= limits.MAX_RENDERED_PROMPT_CHARS:
        return (f"row {number}: prompt: the rendered prompt would be more than "
                f"{limits.MAX_RENDERED_PROMPT_CHARS:,} characters (a large variable repeated too often?)")
    return (f"row {number}: prompt: the prompts rendered up to this row would be more than {budget:,} "
            f"characters ({limits.TEMPLATE_GROWTH} times the file's size plus "
            f"{limits.TEMPLATE_SLACK_CHARS // (1024 * 1024)} Mi): a template that repeats a large variable?")


def _clip(message: str, limit: int = 300) -> str:
    """A message that quotes a row's text, cut to one screen line's worth."""
    return message if len(message) <= limit else message[:limit - 3] + "..."


def load_tasks(eval_file: Path, rel: str, rng_value, inputs: dict[str, str], report: Report,
               now: float | None = None) -> list[TaskSpec]:
    """The tasks of ``tasks_from``; every problem goes to ``report(file, message, (line, col))``."""
    try:
        rng = check_range(rng_value)
    except DatasetError as exc:
        report(eval_file, str(exc), ("range",))
        return []
    try:
        path = resolve(eval_file.parent, rel)
    except PathEscape as exc:
        report(eval_file, f"tasks_from {rel!r}: {exc}; keep the data file inside {display_path(eval_file.parent)}",
               ("tasks_from",))
        return []
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:  # gone since is_file() looked
        size = None
    if size is None:
        what = "is a folder" if path.is_dir() else "no such file"
        report(eval_file, f"tasks_from {rel!r}: {what} ({display_path(path)})", ("tasks_from",))
        return []
    stamp = time.time() if now is None else now
    when = datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc).astimezone()
    job_id, timestamp = f"run-{int(stamp)}", when.isoformat()
    tasks: list[TaskSpec] = []
    problems = 0
    saw_prompt = None
    budget = limits.TEMPLATE_GROWTH * size + limits.TEMPLATE_SLACK_CHARS  # see limits.py
    rendered = 0
    try:
        for number, line, row in iter_rows(path, rng):
            if saw_prompt is None:
                saw_prompt = "prompt" in row
            fallback = f"row-{number}"
            name = row.get("name") or fallback
            prompt = row.get("prompt", "")
            if "{{" in prompt:
                ctx = template.Context(vars={**inputs, **row}, task_name=name, job_id=job_id, timestamp=timestamp)
                try:
                    prompt = template.render(prompt, ctx, min(limits.MAX_RENDERED_PROMPT_CHARS, budget - rendered))
                except template.TooLong:
                    report(path, _too_long(number, rendered, budget), (line, 1))
                    return []
                except template.TemplateError as exc:
                    problems += 1
                    if problems <= MAX_ROW_PROBLEMS:
                        report(path, f"row {number}: prompt: {_clip(str(exc))}", (line, 1))
                    continue
                rendered += len(prompt)
            tasks.append(TaskSpec(id=row.get("id") or row.get("name") or fallback, name=name, prompt=prompt,
                                  file=path, raw={"tasks_from_row": number, "line": line}))
    except DatasetError as exc:
        report(path, str(exc), (exc.line, 1) if exc.line else None)
        return []
    if problems > MAX_ROW_PROBLEMS:
        report(path, f"... and {problems - MAX_ROW_PROBLEMS} more row(s) with template problems", None)
    if rng is not None and not tasks and not problems:
        report(eval_file, f"range [{rng[0]}, {rng[1]}] selects no row: {display_path(path)} has "
               f"{count_rows(path)} data row(s)", ("range",))
    elif not tasks and not problems:
        report(path, "the file has a header but no data row", None)
    elif saw_prompt is False:
        report(path, "the file has no 'prompt' column; every task gets an empty prompt", (1, 1), warning=True)
    return tasks
