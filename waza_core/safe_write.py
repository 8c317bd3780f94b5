"""Writing a file the user named (or one waza keeps) without damaging what is there.

Every file waza writes (results, reports, journals, caches, snapshots, optimizer
evidence) goes through :func:`write_file` (whole files) or :func:`open_append`
(journals), so one set of rules holds everywhere:

* **a regular file, or a new one**, is written atomically: a temporary sibling is
  written, flushed and fsynced, then renamed over the target, so a reader never sees
  half a file and an interrupted write leaves the old file intact;
* **permissions are never loosened**: an existing file keeps its mode (and, when waza
  runs as root, its owner); a new file gets ``0666 & ~umask`` like any other tool's
  output, unless the caller names a mode (``0600`` for private data), which is then
  set explicitly whatever the umask. A given mode can only tighten an existing file;
* **a symbolic link is written through**: the file it points to is replaced
  atomically and the link stays a link (``through_links=False`` replaces the link
  itself, for folders waza owns);
* **a FIFO or a character device is written to directly** (``-o /dev/null``,
  ``-o /dev/stdout``, ``-o >(jq .)`` are common idioms): nothing is renamed over it.
  Opening a FIFO waits at most :data:`FIFO_WAIT_SECONDS` for a reader;
* **anything else** (a folder, a socket, a block device) is refused with a
  :class:`~waza_core.errors.WazaError` (exit 2) before anything is written.

:func:`check_target` runs the same classification before a long run starts, so a
target that could never be written fails in milliseconds, not after an hour.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections.abc import Callable
from typing import BinaryIO

from waza_core.errors import WazaError
from waza_core.lazy_re import LazyPattern

#: how long opening a FIFO waits for a reader before giving up (exit 2)
FIFO_WAIT_SECONDS = 10.0

_REGULAR, _NEW, _STREAM, _DIRECT, _FD = "regular", "new", "stream", "direct", "fd"
_FD_PATH = LazyPattern(r"^/(?:dev/fd|proc/self/fd|proc/thread-self/fd)/(\d+)$")
#: standard descriptors that were closed when waza started (``>&-``): ``/dev/null`` was
#: put there so no file of waza's lands on them, and ``-o /dev/stdout`` is then refused
UNUSABLE_FDS: set[int] = set()
_STD_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def current_umask() -> int:
    """The process umask, read without changing it when the system tells it (Linux)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (racy only against another umask call)
    os.umask(mask)
    return mask


def describe_mode(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("it is a FIFO"): the one
    wording of every file refused, for reading (:mod:`waza_core.untrusted`) or writing."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISCHR(mode):
        return "a character device"
    return "not a regular file"


def _link_chain(path: str) -> list[str]:
    """``path`` and every path its symbolic links lead through (absolute), in order."""
    hops = [os.path.abspath(path)]
    for _ in range(40):
        try:
            target = os.readlink(hops[-1])
        except OSError:
            break
        if not os.path.isabs(target):
            if target.startswith(("pipe:", "socket:", "anon_inode:")):
                break
            target = os.path.join(os.path.dirname(hops[-1]), target)
        hops.append(os.path.normpath(target))
    return hops


def _inherited_fd(hops: list[str]) -> int | None:
    """The descriptor a path names when it is ``/dev/stdout``, ``/dev/fd/N`` and the like."""
    for hop in hops:
        if hop in _STD_NAMES:
            return _STD_NAMES[hop]
        m = _FD_PATH.match(hop)
        if m:
            return int(m.group(1))
    return None


def _classify(path: str, through_links: bool) -> tuple[str, str, os.stat_result | None]:
    """(kind, real path, stat) of a target; raises WazaError for a target never written.

    ``kind`` is ``regular`` (replace atomically), ``new`` (create atomically), ``stream``
    (a FIFO or character device: written in place), ``fd`` (``/dev/stdout``,
    ``/dev/fd/N``: written to waza's own descriptor, where the shell pointed it) or
    ``direct`` (a regular file reached through ``/proc`` or ``/dev``: written in place).
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _NEW, path, None
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror}") from None
    if not stat.S_ISLNK(st.st_mode):
        if stat.S_ISREG(st.st_mode):
            return _REGULAR, path, st
        return _classify_special(path, st) + (st,)
    if not through_links:
        return _REGULAR, path, None  # the link itself is replaced, never followed
    hops = _link_chain(path)
    fd = _inherited_fd(hops)
    if fd is not None:
        if fd in UNUSABLE_FDS:
            raise WazaError(f"cannot write {path}: descriptor {fd} was closed when waza started")
        try:
            fst = os.fstat(fd)
        except OSError:
            raise WazaError(f"cannot write {path}: descriptor {fd} is not open") from None
        if stat.S_ISDIR(fst.st_mode) or stat.S_ISBLK(fst.st_mode):
            raise WazaError(f"cannot write {path}: it is {describe_mode(fst.st_mode)}")
        return _FD, str(fd), fst
    real = os.path.realpath(path)
    try:
        target = os.stat(path)
    except FileNotFoundError:
        return _NEW, real, None  # a dangling link: create the file it names
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror}") from None
    if stat.S_ISREG(target.st_mode):
        if any(h.startswith(("/proc/", "/dev/")) for h in hops):
            return _DIRECT, path, target
        return _REGULAR, real, target
    return _classify_special(path, target) + (target,)


def _classify_special(path: str, st: os.stat_result) -> tuple[str, str]:
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return _STREAM, path
    raise WazaError(f"cannot write {path}: it is {describe_mode(st.st_mode)}; name a regular file "
                    "(or a FIFO or character device, which are written to directly)")


def check_target(path: str | os.PathLike[str], what: str = "results") -> None:
    """Fail now (WazaError, exit 2) when ``path`` could not be written later."""
    p = os.fspath(path)
    try:
        kind, real, _ = _classify(p, True)
    except WazaError as exc:
        raise WazaError(f"cannot write {what} to {p}: {str(exc).split(': ', 1)[-1]}") from None
    if kind in (_STREAM, _DIRECT, _FD):
        return
    parent = os.path.dirname(os.path.abspath(real)) or "."
    if not os.path.isdir(parent):
        raise WazaError(f"cannot write {what} to {p}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise WazaError(f"cannot write {what} to {p}: folder {parent} is not writable")
    name = os.path.basename(real)
    limit = _name_max(parent)
    if len(os.fsencode(name)) > limit:
        raise WazaError(f"cannot write {what} to {p}: the file name is longer than {limit} bytes")


def _name_max(folder: str) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def write_file(path: str | os.PathLike[str], data: bytes, mode: int | None = None, *,
               through_links: bool = True) -> None:
    """Write ``data`` to ``path`` under the rules of this module; WazaError on failure.

    ``mode`` is the mode of a new file (default: ``0666 & ~umask``) and an upper bound
    for an existing one; it is set explicitly, whatever the umask.
    """
    write_stream(path, lambda fh: fh.write(data), mode, through_links=through_links)


def replace_entry(path: str | os.PathLike[str], data: bytes | Callable[[BinaryIO], object],
                  mode: int | None = None) -> None:
    """Write a cache entry at ``path`` atomically, replacing **the name**, whatever it is:
    a symbolic link, a FIFO or a device planted there (a cache folder is shared input,
    docs/safety.md) is replaced, never followed, opened or chmodded. A folder is refused.
    ``data``: the bytes, or ``fill(binary_file)`` that writes them (a large entry made as it is
    written; the file is a new regular file, so ``fill`` may seek in it)."""
    p = os.fspath(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WazaError(f"cannot write {p}: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise WazaError(f"cannot write {p}: it is a folder")
    regular = st if st is not None and stat.S_ISREG(st.st_mode) else None
    _write_replacing(p, p, data if callable(data) else lambda fh: fh.write(data), mode, regular)


def write_stream(path: str | os.PathLike[str], fill: Callable[[BinaryIO], object], mode: int | None = None, *,
                 through_links: bool = True) -> None:
    """:func:`write_file` for content produced by ``fill(binary_file)`` (a reporter that
    streams). An ``OSError`` of ``fill`` is a WazaError naming the path; any other
    exception of ``fill`` propagates (after the temporary file is removed)."""
    p = os.fspath(path)
    kind, real, st = _classify(p, through_links)
    if kind == _FD:
        _flush_std(int(real))
        fd = os.dup(int(real))
    elif kind == _STREAM:
        fd = _open_fifo(p) if stat.S_ISFIFO(os.stat(p).st_mode) else _open(p, 0)
    elif kind == _DIRECT:
        fd = _open(p, os.O_TRUNC)
    else:
        _write_replacing(p, real, fill, mode, st)
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
    except OSError as exc:
        raise WazaError(f"cannot write {p}: {exc.strerror or exc}") from None


def _open(path: str, extra: int) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | extra)
    except OSError as exc:
        raise WazaError(f"cannot write {path}: {exc.strerror}") from None


def _final_mode(mode: int | None, st: os.stat_result | None) -> int:
    if st is not None and stat.S_ISREG(st.st_mode):
        existing = stat.S_IMODE(st.st_mode)
        return existing if mode is None else existing & mode
    return (0o666 & ~current_umask()) if mode is None else mode


def _write_replacing(shown: str, real: str, fill: Callable[[BinaryIO], object], mode: int | None,
                     st: os.stat_result | None) -> None:
    parent = os.path.dirname(os.path.abspath(real))
    name = os.path.basename(real)
    try:
        fd, tmp = _temp_sibling(parent, f".{name[:100]}.")
    except FileNotFoundError:
        raise WazaError(f"cannot write {shown}: folder {parent} does not exist") from None
    except OSError as exc:
        raise WazaError(f"cannot write {shown}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), _final_mode(mode, st))
            if st is not None and stat.S_ISREG(st.st_mode) and os.geteuid() == 0 and \
                    (st.st_uid, st.st_gid) != (0, 0):
                os.fchown(fh.fileno(), st.st_uid, st.st_gid)  # root keeps the file its owner's
        os.replace(tmp, real)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise WazaError(f"cannot write {shown}: {exc.strerror or exc}") from None
        raise


#: the flags of a new temporary sibling: created here or not at all, never through a link
_TEMP_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_BINARY", 0))
_TEMP_ATTEMPTS = 100


def _temp_sibling(parent: str, prefix: str) -> tuple[int, str]:
    """A new file ``<prefix><random>.tmp`` in ``parent``, mode 0600: its descriptor and path.

    What ``tempfile.mkstemp`` does (a random name opened with ``O_CREAT | O_EXCL``, tried
    again when taken), without importing ``tempfile``, which brings ``shutil``, ``random``
    and ``lzma`` into every run that writes a file (~11 M instructions, a few ms)."""
    for _ in range(_TEMP_ATTEMPTS):
        path = os.path.join(parent, f"{prefix}{os.urandom(6).hex()}.tmp")
        try:
            return os.open(path, _TEMP_FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name in {parent}")


def _flush_std(fd: int) -> None:
    """Flush Python's own buffer on ``fd`` first, so what was printed stays in order."""

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _open_fifo(path: str) -> int:
    """Open a FIFO for writing without blocking for ever when nobody reads it."""
    deadline = time.monotonic() + FIFO_WAIT_SECONDS
    delay = 0.01
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise WazaError(f"cannot write {path}: {exc.strerror}") from None
            if time.monotonic() >= deadline:
                raise WazaError(f"cannot write {path}: it is a FIFO and nothing read it within "
                                f"{FIFO_WAIT_SECONDS:g} s") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
            continue
        os.set_blocking(fd, True)
        return fd


def open_append(path: str | os.PathLike[str], mode: int | None = None) -> BinaryIO:
    """A binary file object appending to ``path`` (a journal), under the same rules:
    a regular or new file (created with ``mode``, default ``0666 & ~umask``), a link
    written through, a FIFO or character device written directly; anything else is a
    WazaError. An existing file's mode is narrowed to ``mode`` when one is given."""
    p = os.fspath(path)
    kind, real, st = _classify(p, True)
    if kind == _FD:
        try:
            fd = os.dup(int(real))
        except OSError as exc:
            raise WazaError(f"cannot write {p}: {exc.strerror}") from None
    elif kind == _STREAM and stat.S_ISFIFO(os.stat(p).st_mode):
        fd = _open_fifo(p)
    else:
        target = p if kind in (_STREAM, _DIRECT) else real
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC
        if kind == _NEW:
            flags |= os.O_CREAT | os.O_EXCL
        try:
            fd = os.open(target, flags, 0o600)
        except OSError as exc:
            raise WazaError(f"cannot write {p}: {exc.strerror}") from None
        if kind in (_NEW, _REGULAR):
            try:
                os.fchmod(fd, _final_mode(mode, st))
            except OSError:
                pass
    return os.fdopen(fd, "ab", buffering=0)


def writes_in_place(path: str | os.PathLike[str]) -> bool:
    """True when a write to ``path`` goes to it in place (a FIFO, a device, a descriptor
    such as ``/dev/stdout``), not to a file created or replaced beside it."""
    try:
        kind, _, _ = _classify(os.fspath(path), True)
    except WazaError:
        return False
    return kind in (_STREAM, _DIRECT, _FD)


def is_special(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is (or links to) a FIFO, device or socket: never read it blindly."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


__all__ = ["FIFO_WAIT_SECONDS", "check_target", "current_umask", "is_special", "open_append", "replace_entry",
           "write_file", "write_stream", "writes_in_place"]
