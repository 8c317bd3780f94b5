"""What a load built of a suite's plain tasks, kept beside its cache: a warm load decodes no document.

A warm load through the suite cache (:mod:`waza_core.suite.cache`) still does, for each task
file, a ``stat``, a comparison of its cache line's head, a JSON decode of its document and the
building of its grader and task specs from that: ~12 us a task, a quarter of a warm
100,000-task ``waza run``. Most large suites are plain tasks (an id, an inline prompt, graders;
maybe a name, a description, tags, a time limit or follow-up prompts; no files, context or
checkpoints), whose specs depend on the document alone. So after a load that built every task
of a suite from the cache, this module writes each spec's fields to ``suites/<sha256>.specs``
beside the cache file; the next load, when nothing changed, builds the specs from them: a
``stat`` and four integers compared a file, no document decoded (~6 us a task).

The snapshot is used only when all of these hold; else the load goes through the cache as before:

* the suite has at least :data:`MIN_TASKS` task files, every one a plain task
  (:func:`_plain`) that came through the suite cache (so it loaded without a problem);
* its seal matches: an HMAC-SHA256, under the suite cache's key (:mod:`waza_core.suite.seal`),
  of the cache's fingerprint (waza's version, the loader's files, every plugin), the snapshot's
  file name, the size and time of ``waza_core/model.py`` (the specs' classes) and all its bytes.
  Without a key nothing is written or read;
* the suite cache file carries its seal too (a cache file whose lines are each checked again,
  as one someone else may have written, is not used with a snapshot: its save keeps only lines
  that passed);
* the task files are the same list in the same order (a digest of their names), and each one's
  ``stat`` identity (size, mtime, ctime, inode) is the one its spec was built from: the first
  file that differs ends the attempt and the load starts again through the cache, which then
  writes a new snapshot, or removes it when the suite no longer qualifies.

Format: the cache file's header line (``suite.cache.header_line``: fingerprint and seal), then records, each an 8-byte
little-endian length and a msgpack array: first ``[digest of the names, number of tasks]``,
then one per :data:`CHUNK` tasks, in columns: the stat keys (``array('q')`` bytes, four a task),
ids, names (nil when equal to the id), prompts, documents (the compact JSON the task keeps as
``raw``), graders (``[type, name, weight, config]`` each; config compact JSON or ``{}``) and the
:data:`_KEPT` fields (nil when all are at their defaults, else a list of them in that order).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from array import array
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any

from waza_core import untrusted
from waza_core.model import TaskSpec, make_grader_spec, make_task_spec, share_tags
from waza_core.safe_write import replace_entry
from waza_core.suite import cache as suite_cache
from waza_core.suite import prefetch, seal
from waza_core.suite.cache import SuiteCache, drop_pages, folded_inode, release

#: a suite of fewer task files is loaded through the cache alone (a snapshot saves ~6 us a task)
MIN_TASKS = 256
#: tasks per record: a load decodes one record at a time and drops the pages it has read
CHUNK = 4096
SUFFIX = ".specs"
_LENGTH_BYTES = 8

#: the fields of a task that are written for every task (_REBUILT); written only when one of them
#: is not at its default, as a list of plain values (_KEPT: strings, numbers, booleans, tuples of
#: strings, as the load gives them, all read from the task file alone); and those a plain task must
#: hold at their default (_DEFAULTED: files and folders the task file names, whose contents no stat
#: of it covers, and structures). Every field is in one of the three (tests/suite/test_snapshot.py):
#: a field added to TaskSpec must be added to one
_REBUILT = ("id", "name", "prompt", "filename", "graders", "_raw")
_KEPT = ("description", "tags", "enabled", "timeout_seconds", "follow_up_prompts", "golden",
         "first_event_timeout_seconds")
_DEFAULTED = ("context_dir", "files", "_context", "skill_directories", "requirements", "checkpoints",
              "instruction_files", "responder")
_defaulted_fields = attrgetter(*_DEFAULTED)  # one call, in C, for the 8 (once a task of each save)
_kept_fields = attrgetter(*_KEPT)
_DEFAULTS = _defaulted_fields(TaskSpec(id="", name="", prompt="", file=""))
_KEPT_DEFAULTS = _kept_fields(TaskSpec(id="", name="", prompt="", file=""))
_KEPT_DEFAULT_TYPES = tuple(map(type, _KEPT_DEFAULTS))


def names_digest(names: Sequence[str]) -> str:
    """What ties a snapshot to the list of task files, in order (a NUL is in no path)."""
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _path(cache: SuiteCache) -> Any:
    return cache.path.with_suffix(SUFFIX)


def _sealed_name(cache: SuiteCache) -> str:
    """What the seal binds the snapshot to besides its bytes: the cache's fingerprint, the file's
    name, and the file that defines the specs it rebuilds (``waza_core/model.py``, which the
    fingerprint does not name: an editable install changes it without a new version)."""
    return f"{cache.fp}\n{os.fsdecode(_path(cache).name)}\n{_model_identity()}"


def _model_identity() -> str:
    try:
        st = os.stat(sys.modules[TaskSpec.__module__].__file__ or "")
    except (OSError, KeyError, TypeError):
        return "?"
    return f"{st.st_size} {st.st_mtime_ns}"


def _msgpack():
    # deferred: msgspec's import costs ~13 ms (waza_core/cache_json.py); a large suite only
    import msgspec

    return msgspec.msgpack


def load(cache: SuiteCache, names: list[str], keys: array, most_helpers: int = 0) -> list[TaskSpec] | None:
    """The specs of the task files ``names`` from the suite's snapshot, with each file's stat
    key appended to ``keys`` (as the cache's load appends them); None, and ``keys`` as it was,
    when there is no usable snapshot or a file changed since.

    With a spare CPU and at least ``prefetch.MIN_STAT_FILES`` files (``most_helpers``: as for
    the load helpers), a forked helper checks every file's ``stat`` while this process builds
    the specs, which are used only once it said that each one matched (at 100,000 tasks the
    ``stat`` calls are ~0.2 s of a ~0.7 s load)."""
    if len(names) < MIN_TASKS or cache.dir is None or not cache.sealed:
        # an unsealed cache file has its lines checked one by one, and is sealed again only with
        # lines that passed: a snapshot load checks none, so it must not keep them (keep_rest)
        return None
    secret = seal.key(apart_from=cache.dir)
    if secret is None:
        return None
    try:
        buf = untrusted.read_or_map(_path(cache), limit=suite_cache.MAX_FILE_BYTES,
                                    map_from=suite_cache.MAP_FROM_BYTES)
    except (OSError, untrusted.UntrustedInput):
        return None
    start = len(keys)
    try:
        tasks = _read(buf, secret, cache, names, keys, most_helpers)
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, RecursionError):
        tasks = None  # not what waza writes: a damaged or foreign file is only a miss
    finally:
        release(buf)
    if tasks is None:
        del keys[start:]
        return None
    cache.keep_rest()
    return tasks


def _read(buf: Any, secret: bytes, cache: SuiteCache, names: list[str], keys: array,
          most_helpers: int = 0) -> list[TaskSpec] | None:
    header = suite_cache.read_header(buf, cache.fp)  # the cache file's header rules
    if header is None:
        return None
    end = buf.find(b"\n")
    with memoryview(buf) as view:
        with view[end + 1:] as body:
            if not seal.matches(secret, _sealed_name(cache), body, header.get("seal")):
                return None
        drop_pages(buf, 0, len(buf))  # the seal read every page
        apart = None
        if prefetch.stat_check_wanted(len(names), most_helpers):
            apart = prefetch.ForkedCheck(functools.partial(_same_stats, buf, view, end + 1, names))
            _msgpack()  # imported before the fork, not by both processes
        records = _records(buf, view, end + 1)
        try:
            checked_apart = apart is not None and apart.start()
            tasks = _tasks(records, names, keys, check_stats=not checked_apart)
            if checked_apart and tasks is not None and not apart.answer():
                return None
            return tasks
        finally:
            if apart is not None:
                apart.stop()  # still running only when the load stopped early
            records.close()  # its view of the file, before the file is let go


def _tasks(records, names: list[str], keys: array, check_stats: bool = True) -> list[TaskSpec] | None:
    decode = _msgpack().decode
    first = next(records, None)
    if first is None:
        return None
    digest, count = decode(first)
    if count != len(names) or digest != names_digest(names):
        return None
    tasks: list[TaskSpec] = []
    shared: dict = {}  # strings, and tuples of tags: one object each for the whole suite
    for record in records:
        if not _build(decode(record), names, len(tasks), keys, tasks, shared, check_stats):
            return None
    return tasks if len(tasks) == count else None


def _same_stats(buf: Any, view: memoryview, pos: int, names: list[str]) -> bool:
    """Whether every one of ``names`` has the ``stat`` key the snapshot's records (from ``pos``)
    hold for it, and they hold one for each: what a helper answers while the specs are built."""
    decode = _msgpack().decode
    records = _records(buf, view, pos)
    next(records, None)  # the names' digest: the loader checks it
    first = 0
    for record in records:
        written = _stat_keys(decode(record)[0])
        if not _same_files(names, first, written):
            return False
        first += len(written) // 4
    return first == len(names)


def _stat_keys(data: bytes) -> array:
    written = array("q")
    written.frombytes(data)
    return written


def _same_files(names: list[str], first: int, written: array) -> bool:
    """Whether the files ``names[first:]`` have the stat keys ``written`` (four integers a file)."""
    stat, fold = os.stat, folded_inode
    for j in range(0, len(written), 4):
        try:
            st = stat(names[first + j // 4])
        except OSError:
            return False
        if (st.st_mtime_ns != written[j + 1] or st.st_size != written[j] or st.st_ctime_ns != written[j + 2]
                or fold(st.st_ino) != written[j + 3]):
            return False
    return True


def _records(buf: Any, view: memoryview, pos: int):
    """Each record's bytes, in order; the pages of a mapped file are dropped behind them."""
    dropped = 0
    while pos < len(buf):
        size = int.from_bytes(view[pos:pos + _LENGTH_BYTES], "little")
        pos += _LENGTH_BYTES
        if pos + size > len(buf):
            raise ValueError("a record cut short")
        with view[pos:pos + size] as record:
            yield record
        pos += size
        if not isinstance(buf, bytes) and pos - dropped > suite_cache.DROP_EVERY_BYTES:
            dropped = drop_pages(buf, dropped, pos)


def _build(record: list, names: list[str], first: int, keys: array, tasks: list[TaskSpec],
           shared: dict, check_stats: bool = True) -> bool:
    """Add the specs of one record's tasks (``names[first:]``); False when its columns do not
    agree, or (``check_stats``) when a file's ``stat`` is not the one written."""
    stat_keys, ids, task_names, prompts, docs, graders, kept = record
    written = _stat_keys(stat_keys)
    if len(written) != 4 * len(ids) or (check_stats and not _same_files(names, first, written)):
        return False
    for i, task_id in enumerate(ids):
        name = names[first + i]
        specs = tuple([make_grader_spec(shared.setdefault(kind, kind), shared.setdefault(gname, gname), weight, config,
                                        k, name)
                       for k, (kind, gname, weight, config) in enumerate(graders[i])])
        values = kept[i]
        if values is None:  # every _KEPT field at its default
            tasks.append(make_task_spec(id=task_id, name=task_names[i] or task_id, prompt=prompts[i], file=name,
                                        graders=specs, raw=docs[i]))
        else:
            tasks.append(make_task_spec(id=task_id, name=task_names[i] or task_id, prompt=prompts[i], file=name,
                                        graders=specs, raw=docs[i], **_kept_arguments(values, shared)))
    keys.extend(written)  # every file's stat was the one written (or a helper checks it: _read)
    return True


def save(cache: SuiteCache, names: list[str], tasks: list[TaskSpec], keys: array) -> None:
    """After a load that did not come from the snapshot: write the snapshot of ``tasks`` of
    ``names`` (``keys``: the stat key of each, as the load read it) when every task is plain,
    else remove the one there is (the next loads would read it only to find it out of date).
    Never a reason to fail the load.

    Written as it is encoded, a record at a time (at 100,000 tasks the whole file held in memory
    was ~78 MB more at the end of a first load): the header, whose length does not depend on the
    seal, is written first with a placeholder seal and again at the end."""
    if cache.dir is None:
        return
    if not _snapshot_of(names, tasks, keys):
        _remove(cache)
        return
    secret = seal.key(create=True, apart_from=cache.dir)
    if secret is None:
        return
    mac = seal.sealer(secret, _sealed_name(cache))
    placeholder = suite_cache.header_line(cache.fp, "0" * 64)

    def fill(fh) -> None:
        fh.write(placeholder)
        for record in _records_of(names, tasks, keys):
            length = len(record).to_bytes(_LENGTH_BYTES, "little")
            mac.update(length)
            mac.update(record)
            fh.write(length)
            fh.write(record)
        header = suite_cache.header_line(cache.fp, mac.hexdigest())
        if len(header) != len(placeholder):  # a seal is 64 hex digits: never
            raise ValueError("the snapshot's header changed length")
        fh.seek(0)
        fh.write(header)

    try:
        replace_entry(_path(cache), fill, 0o600)  # a planted link is replaced, not followed
    except Exception:  # as the suite cache: a snapshot that cannot be written is only a slower next load
        pass


def _records_of(names: list[str], tasks: list[TaskSpec], keys: array) -> Iterator[bytes]:
    """The records of the snapshot of ``tasks``, encoded one at a time."""
    encode = _msgpack().encode
    yield encode([names_digest(names), len(names)])
    for start in range(0, len(tasks), CHUNK):
        yield encode(_columns(tasks[start:start + CHUNK], keys[4 * start:4 * (start + CHUNK)]))


def _snapshot_of(names: list[str], tasks: list[TaskSpec], keys: array) -> bool:
    """Whether the load's ``tasks`` can have a snapshot: enough of them, one per file, every
    file's stat known, every task plain."""
    if len(names) < MIN_TASKS or len(tasks) != len(names) or len(keys) != 4 * len(names):
        return False
    return -1 not in keys[0::4] and all(_plain(t) for t in tasks)


def _remove(cache: SuiteCache) -> None:
    try:
        os.unlink(_path(cache))  # the name: a link planted there is removed, not followed
    except OSError:
        pass


def _columns(tasks: list[TaskSpec], keys: array) -> list:
    return [keys.tobytes(), [t.id for t in tasks], [None if t.name == t.id else t.name for t in tasks],
            [t.prompt for t in tasks], [t.raw_json for t in tasks],
            [[[g.type, g.name, g.weight, g._config] for g in t.graders] for t in tasks],
            [None if (values := _kept_fields(t)) == _KEPT_DEFAULTS else list(values) for t in tasks]]


def _kept_arguments(values: list, shared: dict) -> dict[str, Any]:
    """The _KEPT fields of a task, as written (msgpack gives lists where the spec holds tuples);
    tasks share their tags (``model.share_tags``), as a load through the cache has them."""
    description, tags, enabled, timeout, follow_ups, golden, first_event = values
    return {"description": description, "tags": share_tags(tags, shared), "enabled": enabled,
            "timeout_seconds": timeout, "follow_up_prompts": tuple(follow_ups), "golden": golden,
            "first_event_timeout_seconds": first_event}


def _plain_values(values: tuple) -> bool:
    """Whether the _KEPT fields of a task are of the types the load gives them, which msgpack
    gives back as they were (a str is never read back as bytes, nor an int as a float)."""
    if values == _KEPT_DEFAULTS and tuple(map(type, values)) == _KEPT_DEFAULT_TYPES:
        return True  # most tasks: every one at its default (in C; the checks below took ~1.5 us)
    description, tags, enabled, timeout, follow_ups, golden, first_event = values
    return (type(description) is str and type(enabled) is bool and type(golden) is bool and _strings(tags)
            and _strings(follow_ups) and _number(timeout) and _number(first_event))


def _strings(value: Any) -> bool:
    return type(value) is tuple and all(type(item) is str for item in value)


def _number(value: Any) -> bool:
    return value is None or type(value) in (int, float)


def _plain(task: TaskSpec) -> bool:
    """Whether ``task`` is made again exactly from its id, name, prompt, file, graders, document
    and _KEPT fields: every other field at its default, the document from the suite cache, the prompt
    written in it (not read from a ``prompt_file``, which no ``stat`` of the task file covers),
    each grader an entry of its ``graders`` list with its config as compact JSON (or none)."""
    if task.raw_json is None or task.may_hold(b'"prompt_file"'):
        return False
    if _defaulted_fields(task) != _DEFAULTS:
        return False
    if not _plain_values(_kept_fields(task)):  # also at their defaults: 1 == True, yet an int
        return False
    file = task.filename
    for k, g in enumerate(task.graders):
        config = g._config
        if g._where != k or type(g._where) is not int or g._at_file != file:
            return False
        if type(config) is not bytes and config != {}:
            return False
    return True
