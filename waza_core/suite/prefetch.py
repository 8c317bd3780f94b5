"""The first load of a big suite, on more than one core: helper processes parse task files.

Why: a suite's first load (no suite cache yet: a CI machine, a new clone, a new waza)
parses and checks every task file, about 130 us of wall a file against 29 us for a file
found in the cache (20,000 tasks, one core): nearly all of a cold ``waza run``'s extra time. The
work of one file does not depend on any other, so on a machine with a free core a forked
helper does the tail of the file list while the loading process does the head.

What a helper does is exactly what the loader does for a file not in the cache
(``_load_checked``, the same code), except that it keeps nothing: for each file of its
share it writes one line to a file of no name (:func:`_scratch_file`), every
:data:`BATCH` files: the file's suite-cache line (see :mod:`waza_core.suite.cache`) when it loaded without any
problem or warning and its document is cacheable, else an empty line. From the first file
of a helper's share on, the loader reads that helper's lines as they come (waiting only
when the next one is not written yet) and hands each to :meth:`SuiteCache.adopt` just
before loading its file, which then loads as a cache hit would (decoded, built into its
task) if its ``stat`` still matches. Any other file (an empty line, a file changed since,
a helper that failed, was killed or ended early) the loader reads and checks itself, so
every message is the loader's own, in the usual order, and the result of a load is the
same with or without helpers; only its wall time differs.

When: only on Linux (``fork``), only when the suite cache holds nothing for the suite
(its first load, a new waza, ``WAZA_NO_CACHE=1``) or none of the first
:data:`PROBE_FILES` task files was found in it (then for the files after them; a partly
cached suite loads as before), only with at least :data:`MIN_FILES` task files, only in a
process with a single thread (``fork`` copies no other thread), and with at most one helper
per other CPU this process may run on (``os.sched_getaffinity``), at most :data:`MAX_HELPERS`.
``WAZA_LOAD_HELPERS=N`` sets the most helpers (``0``: none).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from waza_core.errors import WazaError
from waza_core.suite.cache import cache_line

#: below this many task files a helper saves less than starting it costs
MIN_FILES = 500
#: a load that found none of its first this many task files in the cache (every file
#: touched, a cache restored onto a new checkout: each ``stat`` differs) starts helpers
#: for the rest as a first load does
PROBE_FILES = 64
MAX_HELPERS = 3
ENV = "WAZA_LOAD_HELPERS"
#: a helper writes its lines every this many files
BATCH = 64

#: wall time per task file, in us (20,000 one-check tasks, a quiet 2-core machine): the
#: loader parsing, checking and building it; a helper parsing, checking and encoding it;
#: the loader building it from a helper's line. A helper writes a line per file as it goes
#: and the loader takes them as they come, so the shares below make the last line of a
#: helper ready about when the loader needs it.
LOADER_COLD, HELPER_COLD, LOADER_ADOPT = 130.0, 105.0, 29.0
#: how long the loader sleeps when a helper's next line is not written yet
POLL_SECONDS = 0.002


def helpers_wanted(n_files: int, first_load: bool) -> int:
    """How many helpers to start for a load of ``n_files`` task files; ``first_load``:
    the suite cache holds nothing for the suite. A bad ``WAZA_LOAD_HELPERS`` is an error
    on every load, not only on those that would start helpers."""
    raw = os.environ.get(ENV, "").strip()
    if raw and not (raw.isascii() and raw.isdigit()):
        raise WazaError(f"{ENV} must be a whole number, 0 or more (0: no helper processes), got {raw!r}")
    most = int(raw) if raw else MAX_HELPERS
    if not first_load or most == 0 or n_files < MIN_FILES or not sys.platform.startswith("linux"):
        return 0
    if not _one_thread():
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except OSError:  # pragma: no cover - Linux always answers
        return 0
    return max(0, min(most, cpus - 1, n_files // MIN_FILES))


def _one_thread() -> bool:
    """Whether this process runs one thread: Python's, and also none started by an
    extension module, which ``threading`` does not see (the kernel's list of them)."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc mounted: Python's own count is all there is
        return True


def shares(n_files: int, helpers: int) -> list[int]:
    """Where each helper's share starts: the loader has ``[0, starts[0])``, helper ``i``
    ``[starts[i], starts[i + 1])``, the last one up to ``n_files``. The first helper's
    lines must be ready as fast as the loader takes them once its own share is done:
    ``share * HELPER_COLD <= loader's share * LOADER_COLD + share * LOADER_ADOPT``."""
    each = LOADER_COLD / (HELPER_COLD - LOADER_ADOPT + LOADER_COLD * helpers)
    size = max(1, round(n_files * each))
    first = max(0, n_files - size * helpers)
    return [first + size * i for i in range(helpers)]


class _Helper:
    """One helper process and the lines it has written so far, one per file of its share
    (an empty line: the file had a problem or a warning, or could not be cached)."""

    def __init__(self, pid: int, fd: int, lo: int, hi: int) -> None:
        self.pid, self.fd, self.lo, self.hi = pid, fd, lo, hi
        self.lines: list[bytes] = []
        self.offset = 0
        self.rest = b""  # a line not ended yet
        self.ended: int | None = None  # its exit code, once reaped

    def line(self, i: int) -> bytes | None:
        """The line of file ``i``, waiting for it if needed; None when the helper ended
        without writing it (it failed or was killed: the loader loads the file itself)."""
        k = i - self.lo
        while k >= len(self.lines):
            if self._read():
                continue
            if self.ended is not None:  # reaped, and all it wrote is read
                return None
            if not self._reap():
                time.sleep(POLL_SECONDS)
        line, self.lines[k] = self.lines[k], b""  # each is asked for once: not kept twice
        return line

    def _read(self) -> bool:
        chunk = os.pread(self.fd, 1 << 20, self.offset)
        if not chunk:
            return False
        self.offset += len(chunk)
        *done, self.rest = (self.rest + chunk).split(b"\n")
        self.lines.extend(done)
        return True

    def _reap(self) -> bool:
        if self.ended is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self.ended = os.waitstatus_to_exitcode(status)
        return True

    def stop(self) -> None:
        try:
            if self.ended is None:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                self.ended = -signal.SIGKILL
        except (ChildProcessError, ProcessLookupError):
            pass
        finally:
            os.close(self.fd)


class Helpers:
    """The helpers of one load, by the index of the first file of their share."""

    def __init__(self) -> None:
        self.shares: list[_Helper] = []
        self._by_file: dict[int, _Helper] = {}
        self._current: _Helper | None = None

    def start(self, load_one: Callable[[Path, str, object], None], paths: Sequence[Path], names: Sequence[str],
              helpers: int, done: int = 0) -> None:
        """Fork ``helpers`` helpers for the files after the first ``done`` (already loaded)."""
        starts = [done + start for start in shares(len(paths) - done, helpers)]
        ends = [*starts[1:], len(paths)]
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        for lo, hi in zip(starts, ends, strict=True):
            try:
                fd = _scratch_file()
            except OSError:
                return  # no memory file and no temporary folder: the loader does the rest itself
            try:
                pid = os.fork()
            except OSError:  # no memory or too many processes: the loader does the rest itself
                os.close(fd)
                return
            if pid == 0:  # pragma: no cover - runs in the helper (checked by its lines)
                _helper(load_one, paths, names, lo, hi, fd, parent)
            self.shares.append(_Helper(pid, fd, lo, hi))
            self._by_file[lo] = self.shares[-1]

    def take(self, i: int, cache) -> None:
        """Before the loader loads file ``i``: give ``cache`` the line a helper wrote for it."""
        helper = self._by_file.get(i, self._current)
        if helper is None or not helper.lo <= i < helper.hi:
            return
        self._current = helper
        line = helper.line(i)
        if line:
            cache.adopt(line)

    def stop(self) -> None:
        """End and reap every helper (still running only when the load stopped early)."""
        for helper in self.shares:
            helper.stop()
        self.shares.clear()


def _scratch_file() -> int:
    """A file of no name for a helper's lines: a memory file (Linux), else an unlinked file
    in the temporary folder."""
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("waza-load-lines", getattr(os, "MFD_CLOEXEC", 0))
        except OSError:
            pass
    import tempfile  # deferred: ~4 ms of a start-up that loads no big cold suite

    with tempfile.TemporaryFile(prefix="waza-load-") as out:
        return os.dup(out.fileno())


class _Lines:
    """What a helper passes to the loader in place of the suite cache: nothing is cached
    yet, and the document the loader would store becomes the file's line."""

    on_miss = None

    def __init__(self) -> None:
        self.last_blob: bytes | None = None
        self.line = b"\n"  # the current file's: empty unless the loader stores its document

    def get(self, file: str, kind: str, key: list[int]) -> None:
        return None

    def put(self, file: str, kind: str, key: list[int], data) -> None:
        self.line = cache_line(file, kind, key, data) or b"\n"


def _helper(load_one, paths, names, lo: int, hi: int, fd: int, parent: int) -> None:  # pragma: no cover
    """The helper's whole life: its share, then ``os._exit`` (no exit hooks, no buffers of
    the loader's flushed twice). Its own messages would repeat the loader's: they go
    nowhere. One line per file, written every :data:`BATCH` files so the loader can start
    on them."""
    code = 1
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        sink = os.open(os.devnull, os.O_WRONLY)
        os.dup2(sink, 1)
        os.dup2(sink, 2)
        stand_in, batch = _Lines(), []
        for i in range(lo, hi):
            stand_in.line = b"\n"
            load_one(paths[i], names[i], stand_in)
            batch.append(stand_in.line)
            if len(batch) == BATCH or i == hi - 1:
                if os.getppid() != parent:  # the loader is gone: stop
                    break
                _write_all(fd, b"".join(batch))
                batch.clear()
        else:
            code = 0
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the helper
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
