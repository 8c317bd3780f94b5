"""A cache of parsed and checked suite files, so a large suite loads fast the second time.

Parsing YAML and checking it against the schemas costs ~0.3 ms per task file; a suite
of 2000 tasks spends most of its start-up there. Files that loaded *without any
problem* are stored as plain JSON, keyed by their path and ``stat`` identity (size,
mtime, ctime, inode), under a fingerprint of everything that decides validity: the
cache format, the waza and ruamel.yaml versions, the shipped schemas, the loader's own files
(``waza_core/suite``), each built-in grader's and executor's module with the files of its
package, and each other plugin's class file and schema. Any change to a file or a plugin misses the cache; a file with
problems is never cached, so error messages are always fresh.

Each suite has one file, ``suites/<sha256 of the eval file's path>.json`` (the name of
format 1, so an older file is replaced, not left behind). Format 2 is not one JSON
document but a header line ``{"fingerprint": ..., "seal": ...}`` (the seal of all the lines
after it, when there is a key: :mod:`waza_core.suite.seal`) and then one line per checked file,
in the order the last load visited them::

    ["/abs/tasks/a.yaml","task",SIZE,MTIME_NS,CTIME_NS,INODE]<TAB>{...the document...}

A load visits the files in the same order again, so it reads the lines one after the
other: the header of the next line is compared as bytes with the expected one, and only
the document is decoded (:mod:`waza_core.cache_json`), as its task loads. Nothing of the file is decoded
up front, nothing but the documents is kept, and what a lookup makes for a moment is
freed before the next task's objects are made (a 100,000-task suite loaded from format
1's whole-file ``json.loads`` stayed about 55 MiB bigger after loading, in freed
fragments). A lookup out of order (a file added, renamed or gone) reads the headers of
all lines once. The file is written again (atomically) when a file was checked again,
a line was found out of order or lines of files no longer visited are left, with the
lines of the files this load visited, in its order. A JSON text cannot hold a raw tab
or newline, so they delimit safely. A file of :data:`MAP_FROM_BYTES` or more is mapped, not
read, and the load drops its pages as it reads on (:meth:`SuiteCache._drop_read`).

Limits: a document is cached only if its JSON is at most :data:`MAX_GROWTH` times its
source plus :data:`GROWTH_SLACK` bytes (docs/safety.md), and only if it comes back
unchanged from JSON (:meth:`SuiteCache.put` decodes its JSON and compares).

Location: ``$WAZA_CACHE_DIR``, else ``$XDG_CACHE_HOME/waza``, else ``~/.cache/waza``
(directory 0700, files 0600). ``WAZA_NO_CACHE=1`` turns it off. A broken or
unreadable cache (or a damaged line of one) is ignored: the cache can only make
loading faster, never different.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from waza_core import cache_json, untrusted
from waza_core._version import __version__
from waza_core.safe_write import replace_entry
from waza_core.suite import cache_checks, schema, seal

if TYPE_CHECKING:
    import mmap

FORMAT = 2
#: a checked document is cached only if its JSON is at most this many times the size
#: of its source (plus :data:`GROWTH_SLACK` bytes): a file whose aliases multiply it
#: must never turn into a huge cache file (see docs/safety.md)
MAX_GROWTH = 4
GROWTH_SLACK = 64 * 1024

#: the largest suite cache file read back (a bigger one is ignored and written again)
MAX_FILE_BYTES = 1 << 30
#: a cache file this big or bigger is mapped, not read, and the pages a load has read are
#: dropped as it goes (:meth:`SuiteCache._drop_read`): a 100,000-task suite's 24 MiB file,
#: held whole until its last task was built, was most of what the load's peak had beyond the suite
MAP_FROM_BYTES = 1 << 20
#: the longest header line read (waza writes ~150 bytes: :func:`header_line`)
HEADER_MAX_BYTES = 512
#: how far a load reads on in a mapped file before it drops the pages behind it
DROP_EVERY_BYTES = 1 << 20

_encode = cache_json.encode
_decode = cache_json.decode


_STR, _BOOL, _DICT = str, bool, dict
_NUM = (int, float)
_STRS = [str]
_GRADERS = [{"type": str, "name": str, "config": dict, "weight": _NUM}]
#: what a cached task document must look like (key -> type, [item shape] or {nested
#: shape}): every field the loader reads, of the type the task schema gives it
TASK_SHAPE: dict[str, Any] = {
    "id": _STR, "name": _STR, "description": _STR, "tags": _STRS, "enabled": _BOOL,
    "timeout_seconds": _NUM, "first_event_timeout_seconds": _NUM, "context_dir": _STR,
    "skill_directories": _STRS, "golden": _BOOL, "requirements": list, "instruction_files": _STRS,
    "expected": _DICT, "graders": _GRADERS,
    "checkpoints": [{"after_turn": int, "on_failure": _STR, "graders": _GRADERS}],
    "inputs": {"prompt": _STR, "prompt_file": _STR, "files": [{"path": _STR, "content": _STR}],
               "context": _DICT, "follow_up_prompts": _STRS, "responder": _DICT},
}
_REQUIRED = {id(TASK_SHAPE): ("id", "inputs")}


def _fits(value: Any, shape: Any) -> bool:
    """Whether ``value`` has ``shape``: a type (a bool is not a number), a one-item list
    (a list of that shape) or a mapping of optional keys (other keys are not looked at)."""
    if isinstance(shape, dict):
        if not isinstance(value, dict) or not all(k in value for k in _REQUIRED.get(id(shape), ())):
            return False
        return all(k not in value or _fits(value[k], sub) for k, sub in shape.items())
    if isinstance(shape, list):
        return isinstance(value, list) and all(_fits(item, shape[0]) for item in value)
    if value is None:
        return shape is not _STR and shape is not _BOOL and shape is not list and shape is not dict
    return isinstance(value, shape) and not (isinstance(value, bool) and shape is not _BOOL)


#: :data:`TASK_SHAPE` checked at C speed ("yes" only; see waza_core/suite/cache_checks.py)
_fits_task = cache_checks.shape_checker(TASK_SHAPE, _REQUIRED, _NUM)


def cache_dir() -> Path | None:
    if os.environ.get("WAZA_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("WAZA_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "waza"


def stat_key(path: str | os.PathLike[str]) -> list[int]:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def folded_inode(ino: int) -> int:
    """An inode number folded into a signed 64-bit integer (an ``array('q')`` item): inode
    numbers are unsigned 64-bit on Linux (FUSE and network filesystems hand out ones above
    2**63) and up to 128 bits on Windows. For a pre-filter, where two inodes sharing a fold
    only cost a ``stat`` more (``Suite.task_file_inodes``)."""
    return ino & 0x7FFF_FFFF_FFFF_FFFF


def _class_identity(cls) -> list:
    try:
        src = inspect.getsourcefile(cls)
        st = os.stat(src) if src else None
        return [cls.__module__, cls.__qualname__, src, st.st_mtime_ns if st else 0, st.st_size if st else 0]
    except (TypeError, OSError):
        return [cls.__module__, cls.__qualname__, None, 0, 0]


def _package_identity(package: str) -> tuple | None:
    """The source files of a package (a built-in plugin package such as ``waza_graders``, or
    the loader's own ``waza_core.suite``), each with its size and time, found without
    importing the package; None when its folder holds no ``.py`` file to name (a zip, a
    sourceless or frozen install). A built-in's schemas and classes are in these files, so this names them as
    :func:`_class_identity` and the composed schemas would, without importing every grader
    and executor (~25 ms of a warm ``waza validate``: each module and the attrs classes it
    creates)."""
    # deferred: importlib.util adds ~0.4 ms to importing this module
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
        folders = list(spec.submodule_search_locations or ()) if spec else []
    except (ImportError, ValueError):
        return None
    files = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(".py") and entry.is_file():
                        st = entry.stat()
                        files.append((entry.path, st.st_size, st.st_mtime_ns))
        except OSError:
            return None
    return (package, *sorted(files)) if files else None


def _plugin_identity(registry, kind: str, name: str, packages: dict[str, tuple | None]) -> list:
    """What decides how ``name`` of ``kind`` checks a document: for a built-in, its module and
    the files of its package (``packages``: those found so far); for any other plugin, or a
    built-in whose package files cannot be named, its class's source file and its schema."""
    module = registry.builtin_module(kind, name)
    if module is not None:
        package = module.partition(".")[0]
        if package not in packages:
            packages[package] = _package_identity(package)
        if packages[package] is not None:
            return [kind, name, module, packages[package]]
    cls = registry.get(kind, name)
    return [kind, name, _class_identity(cls), getattr(cls, "config_schema", None), getattr(cls, "config_key", None)]


def _parser_identity() -> list:
    """Which ruamel.yaml parses the files: its package file and that file's size and time,
    which change with every install. Not ``importlib.metadata.version``: importing it (and
    the ``email`` package it needs) was ~15 ms of a warm ``waza validate`` (``python -X
    importtime``), and ruamel.yaml itself is not imported on a warm load."""
    # deferred: importlib.util adds ~0.4 ms to importing this module
    import importlib.util

    try:
        origin = importlib.util.find_spec("ruamel.yaml").origin
        st = os.stat(origin)
        return [origin, st.st_mtime_ns, st.st_size]
    except (AttributeError, ImportError, OSError, TypeError, ValueError):
        return [None]


def fingerprint(registry) -> str:
    """The key of everything that decides whether a checked document is still valid: the
    cache format, waza's and the parser's versions, the shipped schemas, and every grader and
    executor (see :func:`_plugin_identity`; the names are those the composed schemas list)."""
    # the loader's own files too: the checks a sealed line passed are the code of this package
    # (TASK_SHAPE, cache_checks, load.py), which an editable install changes without a new version
    parts: list[Any] = [FORMAT, __version__, _parser_identity(), schema.load("eval"), schema.load("task"),
                        _package_identity("waza_core.suite")]
    packages: dict[str, tuple | None] = {}
    for kind in ("grader", "executor"):
        parts.extend(_plugin_identity(registry, kind, n, packages) for n in registry.names(kind))
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def cacheable(data: Any, size: int) -> bytes | None:
    """The JSON of a checked document read from ``size`` bytes of source, or None when
    it is not to be cached: not plain JSON (it would not come back unchanged) or much
    bigger than its source."""
    try:
        blob = _encode(data)
    except (UnicodeEncodeError, OverflowError, TypeError, ValueError):
        return None  # e.g. a lone surrogate, which UTF-8 cannot carry
    # only a document that JSON gives back unchanged is cached (no dates, sets or non-string
    # keys, no NaN): decoding and comparing runs at C speed, less than half the time of a
    # walk over every value in Python
    if len(blob) > MAX_GROWTH * size + GROWTH_SLACK or _decode(blob) != data:
        return None
    return blob


def cache_line(file: str, kind: str, key: list[int], data: Any) -> bytes | None:
    """The line of the cache file that stores ``data`` for ``file``, or None (see :func:`cacheable`)."""
    blob = cacheable(data, key[0])
    return None if blob is None else _line(file, kind, key, blob)


def _line(file: str, kind: str, key: list[int], blob: bytes) -> bytes:
    return b"%b\t%b\n" % (_head(file, kind, key), blob)


def _head(file: str, kind: str, key: list[int]) -> bytes:
    """The start of a file's line, up to the tab before its document. A file name that
    is not UTF-8 (``os.fsdecode`` keeps its bytes as lone surrogates, which UTF-8 cannot
    carry) is written with ``\\udcxx`` escapes, as the standard library writes it."""
    try:
        return cache_json.encode_plain([file, kind, *key])
    except UnicodeEncodeError:
        return json.dumps([file, kind, *key], separators=(",", ":")).encode()


def _decode_head(blob: bytes | memoryview) -> Any:
    try:
        return _decode(blob)
    except ValueError:  # msgspec refuses the escapes of a lone surrogate
        return json.loads(bytes(blob))


def _line_of(buf: bytes | mmap.mmap, head: bytes, pos: int) -> bool:
    """Whether the line at ``pos`` starts with ``head`` and a tab (``find`` in exactly that
    span: a mapped file has no ``startswith``)."""
    after = pos + len(head)
    return buf.find(head, pos, after) == pos and buf.find(b"\t", after, after + 1) == after


class SuiteCache:
    """Checked documents of one suite, looked up in the order a load visits its files."""

    def __init__(self, eval_file: Path, registry) -> None:
        self.dir = cache_dir()
        self.registry = registry
        self.dirty = False
        #: the cache file as read (or mapped: :data:`MAP_FROM_BYTES`): header line, then one line per file
        self._buf: bytes | mmap.mmap = b""
        self._view = memoryview(self._buf)
        self._dropped = 1 << 62  # in a mapped file: the pages before it are dropped (never in bytes)
        self._pos = 0  # where the line of the next file in the last load's order starts
        self._index: dict[tuple[str, str], tuple[int, int]] | None = None  # lookups out of order
        #: what the next save writes, in visit order: (start, end) of a line of ``_buf``,
        #: or (-1 - i, 0) for ``_new[i]``; flat, so a warm load of 100,000 files keeps no object per file
        self._visits = array("q")
        self._new: list[bytes] = []
        self._reordered = False
        #: lookups that found the file's line with another ``stat`` (the file changed since)
        self.stale = 0
        #: the line a helper process wrote for the file being looked up (see :meth:`_from_helper`)
        self.helper_line: Callable[[], bytes | None] | None = None
        #: called when a lookup finds nothing (the file is then parsed and checked again)
        self.on_miss: Callable[[], object] | None = None
        #: the compact JSON of the document the last ``get`` returned or ``put`` stored,
        #: None after a miss or a document not stored: a task keeps it as its ``raw``
        #: (a few hundred bytes instead of a tree of dicts; docs/architecture.md)
        self.last_blob: bytes | None = None
        self._start = 0  # where the first file's line starts (after the header line)
        #: whether the header's seal proves waza wrote every line after it here, after checking
        #: each (:mod:`waza_core.suite.seal`): then no line is checked again
        self.sealed = False
        self._reseal: bool | None = None  # whether a checked line should get the file sealed (once)
        #: whether :meth:`keep_rest` was called (the tasks came from the suite's snapshot)
        self.kept_rest = False
        if self.dir is None:
            return
        self.path = self.dir / "suites" / (hashlib.sha256(os.fsencode(eval_file)).hexdigest() + ".json")
        self.fp = fingerprint(registry)
        try:  # a link, a FIFO or a huge file planted in the cache folder is not read
            buf = untrusted.read_or_map(self.path, limit=MAX_FILE_BYTES, map_from=MAP_FROM_BYTES)
        except (OSError, untrusted.UntrustedInput):
            return
        header = read_header(buf, self.fp)
        if header is None:
            release(buf)
            return
        self._buf, self._view = buf, memoryview(buf)
        self._pos = self._start = buf.find(b"\n") + 1
        secret = seal.key(apart_from=self.dir)
        with self._view[self._start:] as lines:
            self.sealed = secret is not None and seal.matches(secret, self._sealed_name(), lines, header.get("seal"))
        if not isinstance(buf, bytes):
            self._dropped = 0
            drop_pages(self._buf, 0, len(buf))  # the seal read every page

    def _sealed_name(self) -> str:
        """What the seal binds the lines to besides their bytes: the fingerprint and this cache
        file's name (another suite's sealed file copied here is not sealed here)."""
        return f"{self.fp}\n{os.fsdecode(self.path.name)}"

    @property
    def holds_nothing(self) -> bool:
        """Whether no line of the cache file can answer (none, unreadable, another fingerprint)."""
        return not self._buf

    def get(self, file: str, kind: str, key: list[int]) -> Any | None:
        """The document stored for ``file`` (a path string) when ``kind`` and its
        ``stat_key`` still match, else None."""
        self.last_blob = None
        data = self._get(file, kind, key)
        if data is None and self.helper_line is not None:
            data = self._from_helper(self.helper_line(), file, kind, key)
        if data is None and self.on_miss is not None:
            self.on_miss()
        return data

    def _from_helper(self, line: bytes | None, file: str, kind: str, key: list[int]) -> Any | None:
        """The document of ``line``, the line a helper process wrote for ``file`` after parsing and
        checking it (:mod:`waza_core.suite.prefetch`), taken as :meth:`put` would store it,
        when its ``stat`` is still ``key``; else None (the file changed since, or the helper
        stored nothing for it)."""
        if not line:
            return None
        head, tab, blob = line.partition(b"\t")
        if not tab or head != _head(file, kind, key):
            return None
        data = _decode(blob)
        if self.dir is not None:  # as put: without a cache the task keeps its document
            self._add(line + b"\n", blob)
        return data

    def _get(self, file: str, kind: str, key: list[int]) -> Any | None:
        buf, pos = self._buf, self._pos
        if not buf:
            return None
        head = _head(file, kind, key)
        if _line_of(buf, head, pos):  # the next line, as in the last load: compared as bytes
            end = buf.find(b"\n", pos)
            if end < 0:
                return None  # a last line cut short
            self._pos = end + 1
            if end - self._dropped > DROP_EVERY_BYTES:
                self._drop_read(pos)
            return self._document(head, pos, end + 1, kind)
        if self._line_head(pos) == (file, kind):  # the next line, of this file before it changed
            self._pos = buf.find(b"\n", pos) + 1
            self.stale += 1
            return None
        span = self._lookup(file, kind)
        if span is None:
            return None  # not cached
        if not _line_of(buf, head, span[0]):
            self.stale += 1
            return None  # changed since
        self._pos = span[1]  # the next files are most likely the ones after it
        self._reordered = True
        return self._document(head, *span, kind)

    def _document(self, head: bytes, start: int, end: int, kind: str) -> Any | None:
        """The document of the line ``buf[start:end]`` (which starts with ``head`` and a tab)."""
        blob = self._view[start + len(head) + 1:end - 1]
        try:
            data = _decode(blob)
        except (ValueError, RecursionError):
            return None
        blob = bytes(blob)
        if not isinstance(data, dict) or not (self.sealed or self._checked(kind, data, blob)):
            return None
        self.last_blob = blob
        self._visits.append(start)
        self._visits.append(end)
        return data

    def _checked(self, kind: str, data: dict, blob: bytes) -> bool:
        """:meth:`_trusted`, for a line of a file waza did not seal (or sealed under another key);
        the first line that passes has the file written again, sealed, when there is a key, so
        the next loads check nothing."""
        if not self._trusted(kind, data, blob):
            return False
        if self._reseal is None:
            self._reseal = seal.key(create=True, apart_from=self.dir) is not None
            if self._reseal:
                self.dirty = True
        return True

    def _trusted(self, kind: str, data: dict, blob: bytes) -> bool:
        """Whether a cached document may be used as if it had just been checked. The cache
        file lives in a user folder others may write, so the right header with the wrong
        types must not reach the loader: the eval document (one per suite) is checked
        against its schema again; a task document (thousands: the schema would cost most
        of what the cache saves) against the shape of every field the loader reads
        (:data:`TASK_SHAPE`). A line that fails is a miss: the file is read and checked again.
        ``cache_checks`` answers both for the usual line (``blob``, its JSON) at C speed; only
        its "yes" is trusted."""
        if not cache_checks.surely_plain(blob, untrusted.MAX_DEPTH):
            try:
                untrusted.check_plain(data, "suite cache")
            except untrusted.UntrustedInput:
                return False
        if kind == "task":
            return _fits_task(data) or _fits(data, TASK_SHAPE)
        # iter_errors asks jsonschema-rs first: a valid eval never imports jsonschema (~130 ms of
        # a warm `waza validate` measured with -X importtime under load, ~30 ms quiet)
        return kind == "eval" and not schema.iter_errors(kind, self.registry, data)

    def _line_head(self, pos: int) -> tuple[str, str] | None:
        """(path, kind) of the line that starts at ``pos``, when it reads as one."""
        buf = self._buf
        end = buf.find(b"\n", pos)
        tab = buf.find(b"\t", pos, end)
        if end < 0 or tab < 0:
            return None
        try:
            head = _decode_head(self._view[pos:tab])
        except (ValueError, RecursionError):  # msgspec.DecodeError and json.JSONDecodeError are ValueErrors
            return None
        if isinstance(head, list) and len(head) == 6 and isinstance(head[0], str) and isinstance(head[1], str):
            return head[0], head[1]
        return None

    def keep_rest(self) -> None:
        """Count every whole line after the last one looked up as visited, in its order: a load
        whose tasks came from the suite's snapshot (:mod:`waza_core.suite.snapshot`) looks none
        of them up, and its save must keep them for the load that will."""
        buf = self._buf
        end = buf.rfind(b"\n") + 1 if buf else 0
        if self._pos < end:
            self._visits.append(self._pos)
            self._visits.append(end)
        self._pos = len(buf)
        self.kept_rest = True

    def _drop_read(self, upto: int) -> None:
        """Drop this process's pages of the mapped file from the last drop to ``upto``."""
        end = drop_pages(self._buf, self._dropped, upto)
        if end > self._dropped:
            self._dropped = end

    def close(self) -> None:
        """Let go of the file read or mapped (after :meth:`save`; the cache answers nothing after)."""
        buf, self._buf = self._buf, b""
        self._view.release()
        self._view = memoryview(self._buf)
        self._index = None
        release(buf)

    def _lookup(self, file: str, kind: str) -> tuple[int, int] | None:
        """(start, end) of the line of ``file`` anywhere in the cache file: the headers of
        all lines are read once, the first time a file is not where the last load had it."""
        if self._index is None:
            self._index = {}
            buf, pos = self._buf, self._start
            while pos < len(buf):
                end = buf.find(b"\n", pos)
                if end < 0:
                    break
                found = self._line_head(pos)
                if found is not None:
                    self._index.setdefault(found, (pos, end + 1))
                pos = end + 1
            if not isinstance(buf, bytes):
                drop_pages(self._buf, 0, len(buf))  # every header was read
        return self._index.get((file, kind))

    def put(self, file: str, kind: str, key: list[int], data: Any) -> None:
        """Remember ``data`` for ``file`` (whose ``stat_key`` is ``key``; its first item
        is the source size), unless it is not plain JSON or much bigger than its source."""
        if self.dir is None:
            return
        blob = cacheable(data, key[0])
        if blob is not None:
            self._add(_line(file, kind, key, blob), blob)

    def _add(self, line: bytes, blob: bytes) -> None:
        self.last_blob = blob
        self._visits.append(-1 - len(self._new))
        self._visits.append(0)
        self._new.append(line)
        self.dirty = True

    def save(self) -> None:
        """Write the lines of the files this load visited, in its order, when a file
        was (re)checked, a line was found out of order or lines of gone files are left."""
        if self.dir is None:
            return
        stale = self._buf and self._pos < len(self._buf)
        if not (self.dirty or self._reordered or stale):
            return
        try:
            for folder in (self.dir, self.dir / "suites"):
                try:
                    folder.mkdir(parents=True, mode=0o700)
                    os.chmod(folder, 0o700)  # what waza makes is private whatever the umask
                except FileExistsError:
                    pass
            secret = seal.key(create=True, apart_from=self.dir)
            # the header's length is known before the lines are: written last, over a placeholder
            header_len = len(header_line(self.fp, "0" * 64 if secret is not None else None))
            out = bytearray(header_len)
            view, visits = self._view, self._visits
            for i in range(0, len(visits), 2):
                start = visits[i]
                out += view[start:visits[i + 1]] if start >= 0 else self._new[-1 - start]
            body = memoryview(out)[header_len:]
            out[:header_len] = header_line(self.fp,
                                           None if secret is None else seal.seal(secret, self._sealed_name(), body))
            body.release()
            replace_entry(self.path, bytes(out), 0o600)  # a planted link is replaced, not followed
        except Exception:  # a cache that cannot be written is only a slower next load
            pass


def header_line(fp: str, sealed: str | None) -> bytes:
    """The first line of a file of this cache (the suite's cache file, its snapshot): the
    fingerprint, and the seal of the bytes after it when there is a key. Its length does not
    depend on the seal (64 hex digits), so a file can be written with a placeholder first."""
    header = {"fingerprint": fp} if sealed is None else {"fingerprint": fp, "seal": sealed}
    return _encode(header) + b"\n"


def read_header(buf: bytes | mmap.mmap, fp: str) -> dict | None:
    """The first line of ``buf``, decoded, when it is a header of the fingerprint ``fp``
    (:func:`header_line`), else None. A line is decoded only when it starts as such a header does
    and ends within :data:`HEADER_MAX_BYTES`: a planted first line of a gigabyte is not read
    into objects."""
    start = b'{"fingerprint":"%s"' % fp.encode()
    if buf[:len(start)] != start:
        return None
    end = buf.find(b"\n", 0, HEADER_MAX_BYTES)
    if end < 0:
        return None
    try:
        header = _decode(buf[:end])
    except (ValueError, RecursionError):  # nested too deeply: not ours
        return None
    return header if isinstance(header, dict) and header.get("fingerprint") == fp else None


def drop_pages(buf: bytes | mmap.mmap, start: int, upto: int) -> int:
    """Drop this process's pages of the mapped file ``buf`` from ``start`` (a page boundary) to
    the page boundary at or before ``upto``, which is returned (the pages stay in the system's
    file cache, so a later look back reads them again at no cost). Nothing for bytes."""
    if isinstance(buf, bytes):
        return start
    import mmap  # deferred, as in untrusted.read_or_map

    end = upto - upto % mmap.PAGESIZE
    if end > start:
        try:
            buf.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError):
            pass  # only memory: never a reason to fail a load
    return max(end, start)


def release(buf: bytes | mmap.mmap) -> None:
    """Unmap ``buf`` when it is a mapped file (a view of it still held: the mapping goes with it)."""
    if not isinstance(buf, bytes):
        try:
            buf.close()
        except BufferError:
            pass


def read_entries(path: Path) -> dict[str, dict]:
    """Every readable line of the cache file ``path``, as ``{file: {"kind", "stat", "data"}}``
    (for tests and for looking into a cache by hand)."""
    out: dict[str, dict] = {}
    for line in path.read_bytes().split(b"\n")[1:]:
        head, tab, doc = line.partition(b"\t")
        if tab:
            file, kind, *key = _decode_head(head)
            out[file] = {"kind": kind, "stat": key, "data": _decode(doc)}
    return out
