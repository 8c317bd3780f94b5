"""Reading what someone else could have written: one rule, one helper.

waza reads files it did not write itself in this run: result-cache entries (CI restores
``.waza-cache`` from a shared cache), suite-cache lines (a user folder), journals, the
call records mocks leave in a folder the agent is given, agents' event files, results
files from elsewhere. Any of them may be a link to somewhere else, a FIFO (reading it
blocks for ever), huge, nested a million deep, or the right shape with the wrong types.
The rule (docs/safety.md, "Files someone else wrote"):

1. **Opened without following a link** (``O_NOFOLLOW``) where the name sits in a folder
   others can write (caches, agent folders); a path the user named is followed, as a
   user asked for it.
2. **Never blocking**: opened with ``O_NONBLOCK``, then ``fstat``: anything but a regular
   file (a FIFO, a device, a socket, a folder) is refused before one byte is read.
3. **Size-bounded**: a file or line larger than the feature's limit is refused unread.
4. **Parsed with a depth limit**, without ``NaN``/``Infinity``, numbers that overflow to
   infinity, or integers outside 64 bits (the results writer could not write them).
5. **Validated field by field** by the feature (types, finite numbers, known statuses,
   a boolean is not an integer) before it touches a results document.

A failure is an :class:`UntrustedInput` (a :class:`~waza_core.errors.WazaError`) whose
message starts with ``FILE`` or ``FILE:LINE``; each feature skips the item with a warning
or refuses it, as its docs say. Standard library only: this is a leaf module, imported by
every reader (and by nothing it could import back).
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from waza_core.errors import WazaError
from waza_core.safe_write import describe_mode

if TYPE_CHECKING:
    import mmap

#: deepest nesting of mappings and lists accepted in a file someone else wrote (a results
#: document itself is about 8 deep; tool arguments an agent passes add some)
MAX_DEPTH = 100
#: the integers a results file can carry (msgspec writes 64-bit integers only)
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1
#: the statuses of a run and of a task in a results file
RUN_STATUSES = frozenset({"passed", "failed", "error", "n/a"})


class UntrustedInput(WazaError):
    """A file or line someone else wrote that waza will not use; the message names it."""


def open_regular(path: str | os.PathLike[str], *, follow: bool = False, limit: int | None = None) -> BinaryIO:
    """``path`` opened for reading, when it is a regular file (of at most ``limit`` bytes).

    Never blocks: ``O_NONBLOCK`` makes opening a FIFO return at once, and ``fstat`` of what
    was opened (not of the name, which could change in between) refuses it. Without
    ``follow`` a symbolic link is refused (``O_NOFOLLOW``). FileNotFoundError passes
    through (a missing file is often "nothing there" for the caller)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise UntrustedInput(f"{os.fsdecode(path)}: a symbolic link (not followed)") from None
        raise UntrustedInput(f"{os.fsdecode(path)}: cannot open: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedInput(f"{os.fsdecode(path)}: {describe_mode(st.st_mode)}, not a regular file")
        if limit is not None and st.st_size > limit:
            raise UntrustedInput(f"{os.fsdecode(path)}: {st.st_size} bytes, more than the {limit} allowed")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], *, limit: int, follow: bool = False) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`);
    a file that grows past the limit while it is read is refused too."""
    with open_regular(path, follow=follow, limit=limit) as fh:
        return _read_within(fh, path, limit)


def _read_within(fh, path: str | os.PathLike[str], limit: int) -> bytes:
    """The rest of ``fh``, refused when it is more than ``limit`` bytes (it grew since its stat)."""
    try:
        data = _read_up_to(fh, limit + 1)
    except OSError as exc:
        raise UntrustedInput(f"{os.fsdecode(path)}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise UntrustedInput(f"{os.fsdecode(path)}: more than the {limit} bytes allowed")
    return data


def can_map() -> bool:
    """Whether this platform can drop the pages of a mapping (``mmap.madvise``; not Windows)."""
    import mmap  # deferred: a C module only large suite caches need (~0.4 ms)

    return hasattr(mmap.mmap, "madvise") and hasattr(mmap, "MADV_DONTNEED")


def read_or_map(path: str | os.PathLike[str], *, limit: int, map_from: int) -> bytes | mmap.mmap:
    """The bytes of a regular file of at most ``limit`` bytes, as :func:`read_bytes`; a file of
    ``map_from`` bytes or more is mapped (read-only) instead, so the caller can drop the pages
    it has read (``madvise``) rather than hold the whole file for as long as it works on it.

    Only a file of this user that nobody else may write is mapped: whoever can write it can
    also truncate it under the mapping, and reading a page past the new end kills the process
    (``SIGBUS``). Another file is read, as by :func:`read_bytes`."""
    with open_regular(path, limit=limit) as fh:
        st = os.fstat(fh.fileno())
        if st.st_size >= map_from and st.st_uid == os.geteuid() and not st.st_mode & 0o022 and can_map():
            import mmap  # deferred: a C module read only for large files (~0.4 ms)

            try:
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                pass  # a file system that cannot map (or a file emptied since its stat): read it
        return _read_within(fh, path, limit)


def _read_up_to(fh, most: int) -> bytes:
    """At most ``most`` bytes of ``fh``, read in buffers sized by the file, not by ``most``:
    ``read(most)`` allocates ``most`` bytes first (1 GiB for the suite cache's limit, which a
    process under ``ulimit -v`` cannot have), however small the file."""
    size = os.fstat(fh.fileno()).st_size
    data = fh.read(min(size + 1, most))
    if not 0 < len(data) < most or len(data) <= size:
        return data
    chunks, got = [data], len(data)  # the file grew since its stat (or says 0 bytes): read on
    while got < most:
        more = fh.read(min(1 << 20, most - got))
        if not more:
            break
        chunks.append(more)
        got += len(more)
    return b"".join(chunks)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} overflows")
    return value


def loads(data: bytes | str, where: str, *, max_depth: int = MAX_DEPTH, positions: bool = False) -> Any:
    """Strict JSON of ``data``: UTF-8, no ``NaN``/``Infinity``, finite numbers, 64-bit
    integers, at most ``max_depth`` levels. ``where`` (``FILE`` or ``FILE:LINE``) starts
    the message of the :class:`UntrustedInput` raised for anything else; ``positions``
    (``where`` is a whole file) adds the line and column of broken JSON (``FILE:3:7``)."""
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise UntrustedInput(f"{where}: nested more than {max_depth} levels deep") from None
    except UnicodeDecodeError as exc:
        raise UntrustedInput(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        at = f"{where}:{exc.lineno}:{exc.colno}" if positions else where
        raise UntrustedInput(f"{at}: not valid JSON: {_short(exc.msg if positions else str(exc))}") from None
    except ValueError as exc:  # the refusals above, an integer of > 4300 digits
        raise UntrustedInput(f"{where}: not valid JSON: {_short(str(exc))}") from None
    check_plain(value, where, max_depth=max_depth)
    return value


def check_plain(value: Any, where: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse a parsed value nested more than ``max_depth`` deep, with an integer outside
    64 bits or a float that is not finite (iterative: no recursion on hostile depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        cls = item.__class__
        if cls is dict or cls is list:
            if depth > max_depth:
                raise UntrustedInput(f"{where}: nested more than {max_depth} levels deep")
            children = item.values() if cls is dict else item
            stack.extend((child, depth + 1) for child in children if child.__class__ in _CHECKED)
        elif cls is int:
            if not INT_MIN <= item <= INT_MAX:
                raise UntrustedInput(f"{where}: the integer {str(item)[:20]}... is out of range")
        elif cls is float and not math.isfinite(item):
            raise UntrustedInput(f"{where}: {item!r} is not a finite number")


_CHECKED = frozenset({dict, list, int, float})


def read_json(path: str | os.PathLike[str], *, limit: int, follow: bool = False,
              max_depth: int = MAX_DEPTH) -> Any:
    """:func:`read_bytes` then :func:`loads`: one JSON document someone else wrote."""
    return loads(read_bytes(path, limit=limit, follow=follow), os.fsdecode(path), max_depth=max_depth)


def iter_lines(fh: BinaryIO, *, limit: int, where: str) -> Iterator[tuple[int, bytes]]:
    """(line number, line with its newline) of ``fh``, never holding more than ``limit``
    bytes of one line: a longer line is an :class:`UntrustedInput` at ``where:LINE``. A last
    line without its newline is yielded as it is (the caller decides)."""
    number = 0
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not (len(raw) == limit + 1 and raw.endswith(b"\n")):
            raise UntrustedInput(f"{where}:{number}: the line is longer than the {limit} bytes allowed")
        yield number, raw


# -- field by field ----------------------------------------------------------------------

def is_int(value: Any) -> bool:
    """An integer, and not a boolean (``True`` is an ``int`` to Python, not to JSON)."""
    return value.__class__ is int


def is_number(value: Any) -> bool:
    """A finite integer or float, not a boolean."""
    return value.__class__ is int or (value.__class__ is float and math.isfinite(value))


def field(obj: dict, key: str, check: Any, what: str, where: str, *, optional: bool = False) -> Any:
    """``obj[key]`` when ``check(value)`` holds, else :class:`UntrustedInput` naming
    ``where``, the key and ``what`` it must be (absent is allowed with ``optional``)."""
    if key not in obj:
        if optional:
            return None
        raise UntrustedInput(f"{where}: {key!r} is missing")
    value = obj[key]
    if not check(value):
        raise UntrustedInput(f"{where}: {key!r} must be {what}, not {_short(json.dumps(value, default=str))}")
    return value


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["INT_MAX", "INT_MIN", "MAX_DEPTH", "RUN_STATUSES", "UntrustedInput", "check_plain", "field",
           "is_int", "is_number", "iter_lines", "loads", "open_regular", "read_bytes", "read_json"]
