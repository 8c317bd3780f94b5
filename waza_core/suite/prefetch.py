"""The first load of a big suite, on more than one core: helper processes parse task files.

Why: a suite's first load (no suite cache yet: a CI machine, a new clone, a new waza)
parses and checks every task file, about 130 us of wall a file against 29 us for a file
found in the cache (20,000 tasks, one core): nearly all of a cold ``waza run``'s extra
time. The work of one file does not depend on any other, so on a machine with a free core a forked
helper does the tail of the file list while the loading process does the head.

What a helper does is exactly what the loader does for a file not in the cache
(``_load_checked``, the same code), except that it keeps nothing: for each file of its
share it writes one line to a file of no name (:func:`_scratch_file`), every
:data:`BATCH` files: the file's suite-cache line (see :mod:`waza_core.suite.cache`) when
it loaded without any problem or warning and its document is cacheable, else an empty
line. When the loader looks a file of a helper's share up and the cache file does not
have it, the cache asks :meth:`Helpers.line` for the helper's line (waiting only when it
is not written yet) and takes it as :meth:`SuiteCache.put` would have stored it, if the
file's ``stat`` is still the one the helper saw. Any other file (an empty line, a file
changed since, a helper that failed, was killed or ended early) the loader reads and
checks itself, so every message is the loader's own, in the usual order, and the loaded
suite and the cache file are the same with or without helpers; only the wall time differs.

When: only on Linux (``fork``), only when the suite cache holds nothing for the suite
(its first load, a new waza, ``WAZA_NO_CACHE=1``) or each of the first
:data:`PROBE_FILES` task files had a line there of another ``stat`` (then for the files
after them), only with at least :data:`MIN_FILES` task files, only in a process with a
single thread (``fork`` copies no other thread), and with at most one helper per other
CPU this process may run on (``os.sched_getaffinity``), at most :data:`MAX_HELPERS`.
``WAZA_LOAD_HELPERS=N`` sets the most helpers (``0``: none).

A warm load from the suite's snapshot uses one helper of another kind under the same platform,
thread and CPU rules, with a threshold of its own
(:class:`ForkedCheck`, :func:`stat_check_wanted`): it answers whether every task file still has
the ``stat`` the snapshot holds for it, by its exit status, while the loader builds the specs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence

from waza_core.errors import WazaError
from waza_core.suite.cache import cache_line

#: below this many task files a helper saves less than starting it costs
MIN_FILES = 500
#: a load whose first this many task files each had a cache line of another ``stat``
#: (every file touched, a cache restored onto a new checkout) starts helpers for the rest
#: as a first load does; files never cached (a warning, an error, a new file) do not count
PROBE_FILES = 64
MAX_HELPERS = 3
#: a warm load of fewer task files checks their ``stat`` itself (~2.5 us a file, against ~1.5 ms
#: to fork a helper that does it meanwhile)
MIN_STAT_FILES = 1000
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


def most_helpers() -> int:
    """The most helpers a load may start: ``WAZA_LOAD_HELPERS``, else :data:`MAX_HELPERS`.
    A bad value is an error of every load (exit 2), not only of those that would start one."""
    raw = os.environ.get(ENV, "").strip()
    if raw and not (raw.isascii() and raw.isdigit()):
        raise WazaError(f"{ENV} must be a whole number, 0 or more (0: no helper processes), got {raw!r}")
    return int(raw) if raw else MAX_HELPERS


def helpers_wanted(n_files: int, most: int) -> int:
    """How many helpers to start for ``n_files`` task files none of which the cache holds."""
    if n_files < MIN_FILES:
        return 0
    return min(_spare_cpus(most), n_files // MIN_FILES)


def stat_check_wanted(n_files: int, most: int) -> bool:
    """Whether a warm load of ``n_files`` task files from the suite's snapshot has a helper
    check their ``stat`` (:mod:`waza_core.suite.snapshot`)."""
    return n_files >= MIN_STAT_FILES and _spare_cpus(most) > 0


def _spare_cpus(most: int) -> int:
    """How many helpers may run beside the loader: one per other CPU this process may run on,
    at most ``most``; none off Linux or in a process with more than one thread."""
    if most == 0 or not sys.platform.startswith("linux") or not _one_thread():
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except OSError:  # pragma: no cover - Linux always answers
        return 0
    return max(0, min(most, cpus - 1))


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


#: the signals that stop a load: blocked while a helper is forked or the helpers are stopped,
#: so no helper is left untracked or unreaped by a signal in between
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


class _Helper:
    """One helper process and the lines it has written so far, one per file of its share
    (an empty line: the file had a problem or a warning, or could not be cached)."""

    def __init__(self, pid: int, fd: int, lo: int, hi: int) -> None:
        self.pid, self.fd, self.lo, self.hi = pid, fd, lo, hi
        self.lines: list[bytes] = []
        self.offset = 0
        self.rest = b""  # a line not ended yet
        self.ended = False  # reaped
        self.taken = 0  # lines before this one were asked for or passed over: dropped

    def line(self, i: int) -> bytes | None:
        """The line of file ``i``, waiting for it if needed; None when the helper ended
        without writing it (it failed or was killed: the loader loads the file itself)."""
        k = i - self.lo
        while k >= len(self.lines):
            if self._read():
                continue
            if self.ended:  # reaped, and all it wrote is read
                return None
            if not self._reap():
                time.sleep(POLL_SECONDS)
        line = self.lines[k]
        for j in range(self.taken, k + 1):  # asked for once, or never (a file found in the cache)
            self.lines[j] = b""
        self.taken = k + 1
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
        """Whether the helper has ended (reaped now or before)."""
        if not self.ended:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # pragma: no cover - SIGCHLD is kept at its default while helpers run
                pid = self.pid
            self.ended = pid != 0
        return self.ended

    def stop(self) -> None:
        """Kill and reap it if it still runs, and close its file; again is nothing."""
        try:
            if not self.ended:
                _kill_and_reap(self.pid)
                self.ended = True
        finally:
            if self.fd >= 0:
                fd, self.fd = self.fd, -1
                os.close(fd)


class Helpers:
    """The helpers of one load, each with its share of the file list. The loader
    says which file it loads (:meth:`at`); the suite cache asks for that file's line only
    when the file is not in the cache file (:meth:`line`), so a file found there never
    waits for a helper."""

    def __init__(self) -> None:
        self.shares: list[_Helper] = []
        self._current: _Helper | None = None
        self._index = -1
        self._sigchld: object = None  # SIGCHLD's disposition to give back (_keep_children)

    def start(self, load_one: Callable[[str, object], None], names: Sequence[str], helpers: int, done: int = 0
              ) -> None:
        """Fork ``helpers`` helpers for the files (path strings) after the first ``done``
        (already loaded)."""
        starts = [done + start for start in shares(len(names) - done, helpers)]
        ends = [*starts[1:], len(names)]
        parent = os.getpid()
        _flush_streams()
        if self._sigchld is None:
            self._sigchld = _keep_children()
        for lo, hi in zip(starts, ends, strict=True):
            try:
                fd = _scratch_file()
            except OSError:
                return  # no memory file and no temporary folder: the loader does the rest itself

            def started(pid: int, fd: int = fd, lo: int = lo, hi: int = hi) -> None:
                self.shares.append(_Helper(pid, fd, lo, hi))  # the helper's record owns fd from here
            owners = len(self.shares)
            try:
                forked = _fork(functools.partial(_helper, load_one, names, lo, hi, fd, parent), started)
            except BaseException:  # a stop signal as the fork began or ended
                if len(self.shares) == owners:
                    os.close(fd)
                raise
            if not forked:
                os.close(fd)  # no memory or too many processes: the loader does the rest itself
                return

    def at(self, i: int) -> None:
        """The loader is about to load file ``i``."""
        self._index = i

    def line(self) -> bytes | None:
        """The line a helper wrote for the file being loaded (waiting for it if needed);
        None when no helper has that file, or its helper ended without writing it."""
        i, helper = self._index, self._current
        if helper is None or not helper.lo <= i < helper.hi:
            helper = self._current = next((h for h in self.shares if h.lo <= i < h.hi), None)
            if helper is None:
                return None
        return helper.line(i)

    def stop(self) -> None:
        """End and reap every helper (still running only when the load stopped early),
        with the stop signals held until all are gone."""
        _end_with_stops_held(self._end)

    def _end(self) -> None:
        for helper in self.shares:
            helper.stop()
        self.shares.clear()
        _give_back_children(self._sigchld)
        self._sigchld = None


class ForkedCheck:
    """A helper that answers one yes-or-no question, by its exit status, while the loader goes on.

    The question runs on the loader's memory as it was at the fork: what it reads must not be
    changed by the loader before the answer is taken. Made before it is started, so whoever
    holds it can always :meth:`stop` it (a ``finally``), whatever interrupts the loader."""

    def __init__(self, question: Callable[[], bool]) -> None:
        self.question = question
        self.pid: int | None = None  # while it runs (started and not reaped)
        self._sigchld: object = None

    def start(self) -> bool:
        """Fork the helper; False when no process could be made (the loader must answer the
        question itself)."""
        _flush_streams()
        if self._sigchld is None:
            self._sigchld = _keep_children()
        if _fork(functools.partial(_answer, self.question), self._started):
            return True
        self._give_back()
        return False

    def _started(self, pid: int) -> None:
        self.pid = pid

    def answer(self) -> bool:
        """Wait for the helper: True when it answered yes; False when it answered no, failed,
        was killed, or never ran."""
        if self.pid is None:
            return False
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # pragma: no cover - SIGCHLD is kept at its default while it runs
            status = -1
        self.pid = None
        self._give_back()
        return status == 0

    def stop(self) -> None:
        """End and reap the helper when it still runs (the loader stopped early), with the stop
        signals held meanwhile."""
        _end_with_stops_held(self._end)

    def _end(self) -> None:
        if self.pid is not None:
            _kill_and_reap(self.pid)
            self.pid = None
        self._give_back()

    def _give_back(self) -> None:
        _give_back_children(self._sigchld)
        self._sigchld = None


def _flush_streams() -> None:
    """Flush what a helper would inherit and must not write a second time."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _keep_children() -> object:
    """Make sure this process reaps its helpers itself: with SIGCHLD ignored the kernel
    would, and their exit statuses would be lost. What to give back to
    :func:`_give_back_children` (None: nothing was changed)."""
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        return signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    return None


def _give_back_children(saved: object) -> None:
    if saved is not None:
        signal.signal(signal.SIGCHLD, saved)


def _fork(child: Callable[[object], None], started: Callable[[int], None]) -> bool:
    """Fork a helper that runs ``child(blocked)`` (it never returns: it ends with ``os._exit``);
    ``started(pid)`` records it. The stop signals are held from before the fork until it is
    recorded, so none of them can leave a helper that nobody reaps (the Python handler of another
    signal that raises could). False when no process could be made."""
    with _stops_held() as blocked:
        try:
            pid = os.fork()
        except OSError:
            return False
        if pid == 0:  # pragma: no cover - runs in the helper
            child(blocked)
            os._exit(1)  # never reached: a child ends with os._exit; never goes on as a loader
        started(pid)
        return True


def _end_with_stops_held(end: Callable[[], None]) -> None:
    """Run ``end`` with the stop signals held, then once more without them: what a stop signal
    interrupted as they were held (or while ``end`` ran) is done by the second run, so ``end``
    must be harmless the second time (it always runs twice)."""
    try:
        with _stops_held():
            end()
    finally:
        end()


@contextlib.contextmanager
def _stops_held():
    """Hold the stop signals; gives the mask before. ``pthread_sigmask`` runs the Python handler
    of a signal that was pending as it returns, after it changed the mask: the mask is read
    first, by a call that changes nothing, so an interrupt raised by either call still leaves
    the mask as it was."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        yield before
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _kill_and_reap(pid: int) -> None:
    """End a helper that may still run (still this process's child: its pid cannot have been reused)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except (ChildProcessError, ProcessLookupError):  # reaped already (a second stop after an interrupted answer)
        pass


def _as_helper(blocked) -> None:  # pragma: no cover - runs in the helper
    """What a helper does first: the stop signals end it (one the loader's parent set to be
    ignored stays ignored), and they are blocked until it is ready to die of them; its own
    messages would repeat the loader's: they go nowhere."""
    try:
        for sig in _STOPS:
            if signal.getsignal(sig) != signal.SIG_IGN:
                signal.signal(sig, signal.SIG_DFL)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    sink = os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 1)
    os.dup2(sink, 2)


def _answer(question: Callable[[], bool], blocked) -> None:  # pragma: no cover - runs in the helper
    """A :class:`ForkedCheck` helper's whole life: exit 0 for yes, 1 for no or an error."""
    code = 1
    try:
        _as_helper(blocked)
        code = 0 if question() else 1
    finally:
        os._exit(code)


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


def _helper(load_one, names, lo: int, hi: int, fd: int, parent: int,
            blocked) -> None:  # pragma: no cover - runs in the helper
    """The helper's whole life: its share, then ``os._exit`` (no exit hooks, no buffers of
    the loader's flushed twice). One line per file, written every :data:`BATCH` files so the
    loader can start on them."""
    code = 1
    try:
        _as_helper(blocked)
        stand_in, batch = _Lines(), []
        for i in range(lo, hi):
            stand_in.line = b"\n"
            load_one(names[i], stand_in)
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
