"""Run one child process safely: argv, no shell, bounded output, whole-group kill.

Every child waza starts (program graders, the ``command`` optimizer adapter, the
``cli`` executor) goes through :func:`run`, so the rules live in one place:

- the child runs from ``argv`` without a shell, in its own session and process
  group (``start_new_session=True``), so a signal reaches all its descendants and
  a Ctrl-C on the terminal does not reach it behind waza's back;
- stdout and stderr are read concurrently and incrementally; each stream keeps its
  first ``max_stdout`` / ``max_stderr`` bytes and drains (discards) the rest, so a
  flood cannot exhaust memory nor block the child on a full pipe. With
  ``kill_on_overflow=True`` the group is killed at the first byte over the cap.
  With ``stderr_tail=True`` stderr keeps its *last* ``max_stderr`` bytes instead
  (where a crash says why) and never counts as overflowing;
- ``input`` is written to stdin while the outputs are read (no deadlock on large
  input); a child that closes stdin early is not an error;
- on timeout or cancellation the whole process group gets SIGKILL;
- when the leader exits, whatever is left of its group is killed too (a run leaves
  nothing behind), and a descendant that escaped the group (``setsid``) but holds
  the pipes open cannot hang the reader: reading stops ``DRAIN_SECONDS`` after the
  leader's exit (at once on cancellation; the leader's result is then kept as is).

The group is always signalled *before* the leader is reaped, while the leader's
zombie still reserves the group id, so a recycled pid can never be hit.

**Descendants that leave the group** (``setsid()``, a daemon's double fork) are
caught too, on Linux: waza makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``), so an orphaned descendant is re-parented to
waza instead of to init, and every child carries ``WAZA_PROCESS_TAG`` in its
environment (unless ``run(tag_environment=False)``, for a child whose environment is a
contract). When the leader exits (or is killed), :func:`_sweep` kills and reaps
every process re-parented to waza that is in the leader's group or session, carries
its tag, or still holds one of the pipes waza gave the leader, round after round until
none is left (killing one re-parents its own children to waza). Where this cannot
hold: outside Linux (no subreaper: only the group is killed); a descendant that
leaves the session *and* clears its environment (or, without a tag, closes the pipes)
while its parent still lives is only killed by :func:`kill_leftovers` when waza exits;
a process that changed user, or entered another PID namespace, cannot be found.
docs/safety.md says the same.

No busy polling: one ``selectors`` loop per call, woken by the pipes, by a pidfd
(Linux) or a waiter thread (elsewhere) on exit, and by :class:`CancelEvent`.
POSIX only.

API::

    result = run(["python3", "check.py"], cwd=ws, env=env, input=b"...", timeout=30)
    result.returncode, result.stdout, result.stderr, result.timed_out, ...

Failure to start (missing binary, no permission, bad working directory) raises
:class:`ProcessStartError`, which names ``argv[0]``.
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from waza_core.cancel import CancelEvent
from waza_core.signals import MAIN_WAIT_SECONDS

__all__ = ["DEFAULT_MAX_OUTPUT", "CancelEvent", "ProcResult", "ProcessStartError", "end", "run", "start"]

#: default cap per stream (bytes kept of stdout, and of stderr)
DEFAULT_MAX_OUTPUT = 1024 * 1024
#: how long to keep reading after the leader exited, for pipes held by escapees
DRAIN_SECONDS = 1.0
#: how often a plain threading.Event passed as ``cancel`` is checked
_EVENT_POLL_SECONDS = 0.1
_CHUNK = 64 * 1024


class ProcessStartError(Exception):
    """The child could not be started at all (as opposed to: it ran and failed)."""

    def __init__(self, argv0: str, reason: str, os_error: OSError | None = None):
        self.argv0 = argv0
        self.reason = reason
        self.errno = os_error.errno if os_error is not None else None
        super().__init__(f"cannot start {argv0!r}: {reason}")


@attrs.frozen
class ProcResult:
    """What one child did. ``returncode`` is negative when a signal ended it."""

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    cancelled: bool = False
    #: killed because an output passed its cap (only with ``kill_on_overflow``)
    overflowed: bool = False
    duration_ms: int = 0

    @property
    def killed(self) -> bool:
        """True when waza killed the child (timeout, cancellation or overflow)."""
        return self.timed_out or self.cancelled or self.overflowed

    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,  # noqa: A002 - same name as subprocess.run
    timeout: float | None = None,
    max_stdout: int = DEFAULT_MAX_OUTPUT,
    max_stderr: int = DEFAULT_MAX_OUTPUT,
    kill_on_overflow: bool = False,
    cancel: threading.Event | None = None,
    stderr_tail: bool = False,
    tag_environment: bool = True,
) -> ProcResult:
    """Run ``argv`` to completion under the rules of this module; see its docstring.

    ``env`` is the child's whole environment (``None`` inherits waza's). ``input``
    is written to stdin; without it stdin is ``/dev/null``. ``timeout`` is in
    seconds (``None`` or ``0``: no limit). ``stderr_tail`` keeps the end of stderr
    rather than its start; ``stderr_truncated`` then means its start was dropped.
    ``tag_environment=False``: the child's environment is exactly ``env``, without
    :data:`TAG_VARIABLE` (a contract such as the ``command`` optimizer adapter's); its
    descendants that left the group are then found by their session and by the
    supervised pipes they still hold (see :func:`_sweep_for`).
    """
    args = [os.fspath(a) for a in argv]
    if not args:
        raise ValueError("run() needs a non-empty argv")
    enable_subreaper()
    tag = _new_tag() if tag_environment else ""
    child_env = dict(env if env is not None else os.environ)
    if tag:
        child_env[TAG_VARIABLE] = tag
    try:
        proc = _popen(args, cwd=cwd, env=child_env, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise _start_error(args[0], cwd, exc) from None
    supervisor = _Supervisor(proc, args, input, timeout, max_stdout, max_stderr, kill_on_overflow, cancel,
                             stderr_tail)
    supervisor.tag = tag
    return supervisor.wait()


def start(argv: Sequence[str | os.PathLike[str]], *, env: Mapping[str, str] | None = None,
          **popen: Any) -> tuple[subprocess.Popen, str]:
    """Start a long-lived child that the caller speaks to itself (the ``code`` grader's
    evaluators, over pipes) under this module's rules: its own session and process group,
    the :data:`TAG_VARIABLE` tag its descendants inherit, waza a subreaper, the group
    killed at a forced exit (:func:`kill_everything`). Returns (process, tag); end it with
    :func:`end`, which also reaps every descendant that left its group.
    ``popen``: the other :class:`subprocess.Popen` arguments (pipes, ``cwd``)."""
    enable_subreaper()
    tag = _new_tag()
    child_env = dict(env if env is not None else os.environ)
    child_env[TAG_VARIABLE] = tag
    return _popen([os.fspath(a) for a in argv], env=child_env, **popen), tag


def _popen(args: list[str], **popen: Any) -> subprocess.Popen:
    """Start a child in its own session, registered in :data:`_starting` while it is being
    started and in :data:`_leaders` from the moment it is started, in one step.

    A sweep cannot tell a child being started from an escapee by looking at it: between fork
    and ``exec`` the child holds waza's descriptors (another child's pipes among them) and
    lets go of them one by one. So a sweep judges a child it does not know only once every
    start that was under way when it saw the child is over (:func:`_sweep`): by then the
    child is a leader, or it is not one of waza's starts."""
    token = object()
    with _state_lock:
        _starting.add(token)
    try:
        proc = subprocess.Popen(args, start_new_session=True, close_fds=True, **popen)
    except BaseException:
        with _state_lock:
            _starting.discard(token)
        raise
    with _state_lock:
        _starting.discard(token)
        _leaders.add(proc.pid)
        _past_leaders.add(proc.pid)
    return proc


def end(proc: subprocess.Popen, tag: str) -> None:
    """Kill the group of a child of :func:`start` while its leader still reserves the
    group id, reap the leader, then kill and reap what is left of its group, its session
    or its tagged descendants (a daemon an assertion started, say)."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    with _state_lock:
        _leaders.discard(proc.pid)
    _sweep_for(proc.pid, tag)


def _start_error(argv0: str, cwd, exc: OSError) -> ProcessStartError:
    if cwd is not None and exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        return ProcessStartError(argv0, f"working directory {os.fspath(cwd)!r} is not usable ({exc.strerror})", exc)
    if isinstance(exc, FileNotFoundError):
        if os.sep in argv0 and os.path.exists(argv0):
            return ProcessStartError(argv0, "its interpreter (the #! line) was not found", exc)
        if os.sep in argv0:
            return ProcessStartError(argv0, "no such file", exc)
        return ProcessStartError(argv0, "command not found (is it installed and on PATH?)", exc)
    if isinstance(exc, PermissionError):
        return ProcessStartError(argv0, "permission denied (is it executable?)", exc)
    return ProcessStartError(argv0, exc.strerror or str(exc), exc)


class _Stream:
    __slots__ = ("fd", "buf", "cap", "truncated", "tail")

    def __init__(self, fd: int, cap: int, tail: bool = False):
        self.fd = fd
        self.buf = bytearray()
        self.cap = max(0, cap)
        self.truncated = False
        self.tail = tail


class _Supervisor:
    """One selector loop driving one child; see :func:`run`."""

    def __init__(self, proc, argv, input_bytes, timeout, max_stdout, max_stderr, kill_on_overflow, cancel,
                 stderr_tail=False):
        self.proc = proc
        self.argv = tuple(argv)
        self.t0 = time.monotonic()
        self.deadline = self.t0 + timeout if timeout else None
        self.kill_on_overflow = kill_on_overflow
        self.cancel = cancel
        self.timed_out = self.cancelled = self.overflowed = False
        self.group_killed = False
        self.swept = False
        self.tag = ""
        #: inodes of the pipes to the child: a descendant that still holds one is the child's
        self.pipe_inodes = frozenset(os.fstat(p.fileno()).st_ino for p in (proc.stdin, proc.stdout, proc.stderr)
                                     if p is not None)
        self.exited = threading.Event()
        self.exit_time: float | None = None
        self.sel = selectors.DefaultSelector()
        self.streams: dict[int, _Stream] = {}
        for pipe, cap, tail in ((proc.stdout, max_stdout, False), (proc.stderr, max_stderr, stderr_tail)):
            fd = pipe.fileno()
            os.set_blocking(fd, False)
            self.streams[fd] = _Stream(fd, cap, tail)
            self.sel.register(fd, selectors.EVENT_READ, "out")
        self.out_fd = proc.stdout.fileno()
        self.stdin_fd: int | None = None
        self.input = memoryview(input_bytes or b"")
        self.input_pos = 0
        if proc.stdin is not None:
            self.stdin_fd = proc.stdin.fileno()
            os.set_blocking(self.stdin_fd, False)
            if self.input:
                self.sel.register(self.stdin_fd, selectors.EVENT_WRITE, "in")
            else:
                self._close_stdin()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.pidfd: int | None = None
        self.waiter: threading.Thread | None = None
        self._watch_exit()
        self.cancel_token: int | None = None
        self.poll_cancel = False
        if isinstance(cancel, CancelEvent):
            self.cancel_token = cancel._subscribe(self._wake)
        elif cancel is not None:
            self.poll_cancel = True
        # in the main thread a wait is bounded, so a signal another thread received is handled
        self.in_main_thread = threading.current_thread() is threading.main_thread()

    # -- exit notification ------------------------------------------------------

    def _watch_exit(self) -> None:
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None and _USE_PIDFD:
            try:
                self.pidfd = pidfd_open(self.proc.pid)
            except OSError:
                self.pidfd = None
        if self.pidfd is not None:
            self.sel.register(self.pidfd, selectors.EVENT_READ, "exit")
            return
        self.waiter = threading.Thread(target=self._wait_exit, name=f"waza-wait-{self.proc.pid}", daemon=True)
        self.waiter.start()

    def _wait_exit(self) -> None:
        try:
            if hasattr(os, "waitid"):
                # WNOWAIT: learn of the exit without reaping, so the group id stays
                # reserved until the main loop has signalled the group.
                os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
            else:  # pragma: no cover - macOS: reaps here; the group kill then races pid reuse
                self.proc.wait()
        except ChildProcessError:
            pass
        self.exited.set()
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self.wake_w, b"x")
        except OSError:  # pipe full (a wake-up is pending anyway) or closed
            pass

    # -- killing ----------------------------------------------------------------

    def _kill_group(self) -> None:
        if self.group_killed:
            return
        self.group_killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _stop(self, reason: str) -> None:
        if self.timed_out or self.cancelled or self.overflowed:
            return
        setattr(self, reason, True)
        self._kill_group()

    # -- I/O ----------------------------------------------------------------------

    def _close_stdin(self) -> None:
        if self.stdin_fd is None:
            return
        try:
            self.sel.unregister(self.stdin_fd)
        except (KeyError, ValueError):
            pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.stdin_fd = None

    def _write_stdin(self) -> None:
        assert self.stdin_fd is not None  # only called while stdin is registered
        try:
            n = os.write(self.stdin_fd, self.input[self.input_pos : self.input_pos + _CHUNK])
        except BlockingIOError:
            return
        except OSError as exc:  # EPIPE: the child closed stdin, which it may do
            if exc.errno not in (errno.EPIPE, errno.EINVAL):
                raise
            self._close_stdin()
            return
        self.input_pos += n
        if self.input_pos >= len(self.input):
            self._close_stdin()

    def _read(self, fd: int) -> None:
        stream = self.streams[fd]
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if not data:
            self._close_stream(fd)
            return
        if stream.tail:  # a sliding window over the last ``cap`` bytes; never an overflow
            stream.buf += data
            excess = len(stream.buf) - stream.cap
            if excess > 0:
                del stream.buf[:excess]
                stream.truncated = True
            return
        room = stream.cap - len(stream.buf)
        if room > 0:
            stream.buf += data[:room]
        if len(data) > room:
            stream.truncated = True
            if self.kill_on_overflow:
                self._stop("overflowed")

    def _close_stream(self, fd: int) -> None:
        try:
            self.sel.unregister(fd)
        except (KeyError, ValueError):
            pass
        self.streams[fd].fd = -1

    def _open_streams(self) -> bool:
        return any(s.fd != -1 for s in self.streams.values())

    def _on_exit(self) -> None:
        if self.exit_time is not None:
            return
        self.exit_time = time.monotonic()
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
        # The leader is a zombie now (not reaped): its group id is still reserved.
        self._kill_group()
        self._close_stdin()
        self._sweep()

    def _sweep(self) -> None:
        if not self.swept:
            self.swept = True
            _sweep_for(self.proc.pid, self.tag, self.pipe_inodes)

    # -- main loop ----------------------------------------------------------------

    def wait(self) -> ProcResult:
        try:
            self._loop()
        except BaseException:
            # KeyboardInterrupt or a bug: never leave a child group behind.
            self._kill_group()
            raise
        finally:
            self._finish()
        ret = self.proc.returncode
        end = self.exit_time if self.exit_time is not None else time.monotonic()
        out = self.streams[self.out_fd]
        err = next(s for fd, s in self.streams.items() if fd != self.out_fd)
        return ProcResult(
            argv=self.argv,
            returncode=ret if ret is not None else -signal.SIGKILL,
            stdout=bytes(out.buf),
            stderr=bytes(err.buf),
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            timed_out=self.timed_out,
            cancelled=self.cancelled,
            overflowed=self.overflowed,
            duration_ms=int((end - self.t0) * 1000),
        )

    def _loop(self) -> None:
        """Serve the pipes until the leader exited and its output is drained (or the drain
        time is up), stopping the group on cancel or deadline on the way."""
        while not self._drained(time.monotonic()):
            for key, _mask in self.sel.select(self._select_timeout(time.monotonic())):
                self._on_ready(key.data, key.fd)
            if self.exited.is_set():
                self._on_exit()
            if self._cancelled_after_exit():
                return
            self._stop_if_due()

    def _drained(self, now: float) -> bool:
        """The leader has exited and no stream is open, or the drain time after the exit is up."""
        return self.exit_time is not None and (not self._open_streams() or now >= self.exit_time + DRAIN_SECONDS)

    def _select_timeout(self, now: float) -> float | None:
        """How long one select may block: until the drain time, the deadline or the next
        cancel poll, whichever comes first, and at most :data:`~waza_core.signals.MAIN_WAIT_SECONDS`
        in the main thread; forever when none applies."""
        waits = []
        if self.exit_time is not None:
            waits.append(self.exit_time + DRAIN_SECONDS - now)
        elif self.deadline is not None and not self.group_killed:
            waits.append(self.deadline - now)
        if self.poll_cancel and not self.group_killed:
            waits.append(_EVENT_POLL_SECONDS)
        if self.in_main_thread:
            waits.append(MAIN_WAIT_SECONDS)
        return max(0.0, min(waits)) if waits else None

    def _on_ready(self, tag: str, fd: int) -> None:
        """One ready file: an output pipe, stdin, the exit notification or the wake pipe."""
        if tag == "out":
            self._read(fd)
        elif tag == "in":
            self._write_stdin()
        elif tag == "exit":
            self._on_exit()
        elif tag == "wake":
            try:
                while os.read(self.wake_r, 512):
                    pass
            except BlockingIOError:
                pass

    def _cancelled_after_exit(self) -> bool:
        """A cancel that arrives after the leader finished ends the drain (not a cancel)."""
        return self.cancel is not None and self.cancel.is_set() and self.exit_time is not None

    def _stop_if_due(self) -> None:
        """Kill the group when cancelled, or when the deadline passed before the leader exited."""
        if self.cancel is not None and self.cancel.is_set():
            self._stop("cancelled")
        if self.deadline is not None and self.exit_time is None and time.monotonic() >= self.deadline:
            self._stop("timed_out")

    def _finish(self) -> None:
        if self.cancel_token is not None:
            self.cancel._unsubscribe(self.cancel_token)
        self._close_stdin()
        if self.exit_time is None:
            # Leaving early (an exception): the group was killed; make sure the
            # leader is gone before reaping.
            self._kill_group()
        self.proc.wait()  # reap (the leader has exited or was SIGKILLed)
        with _state_lock:
            _leaders.discard(self.proc.pid)
        self._sweep()  # also when leaving early: what escaped is killed now
        if self.waiter is not None:
            self.waiter.join()
        if self.pidfd is not None:
            os.close(self.pidfd)
        self.sel.close()
        for pipe in (self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        os.close(self.wake_r)
        os.close(self.wake_w)


#: tests switch this off to exercise the waiter-thread path on Linux
_USE_PIDFD = True


# -- descendants that escaped the group (see the module doc) ---------------------

#: the environment variable that marks every process started through :func:`run`
TAG_VARIABLE = "WAZA_PROCESS_TAG"
#: how long a sweep may take at most (a process in uninterruptible sleep is left)
SWEEP_SECONDS = 2.0
_PR_SET_CHILD_SUBREAPER = 36
_SESSION = f"{os.getpid()}.{os.urandom(4).hex()}"
_state_lock = threading.Lock()
_tag_counter = [0]
_leaders: set[int] = set()  # children of run() not reaped yet: never swept
_starting: set[object] = set()  # a token per child being started (_popen)
_past_leaders: set[int] = set()  # for kill_leftovers
_subreaper: list[bool] = []
#: inode of a pipe only this process holds (close-on-exec): a child of waza that has not
#: reached ``exec`` yet still holds it (see :func:`_unborn`)
_birthmark: list[int] = []


def _new_tag() -> str:
    with _state_lock:
        _tag_counter[0] += 1
        return f"{_SESSION}.{_tag_counter[0]}"


def enable_subreaper() -> bool:
    """Make this process a child subreaper (Linux); True when it is one. Idempotent."""
    with _state_lock:
        if not _subreaper:
            ok = False
            if sys.platform.startswith("linux"):
                try:
                    # deferred: ctypes adds ~19.2 ms to importing this module
                    import ctypes

                    libc = ctypes.CDLL(None, use_errno=True)
                    ok = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
                except (OSError, AttributeError):
                    ok = False
            _subreaper.append(ok)
            if ok:
                read_end, write_end = os.pipe()  # close-on-exec, as every fd Python opens
                os.close(write_end)
                _birthmark.append(os.fstat(read_end).st_ino)
        return _subreaper[0]


def _children() -> list[int]:
    """Pids of this process's children (those it started and those re-parented to it)."""
    me = os.getpid()
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return []
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{me}/task/{tid}/children", "rb") as fh:
                found.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            return _children_by_scan(me)
    return found


def _children_by_scan(me: int) -> list[int]:  # pragma: no cover - kernels without .../children
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(int(name))
            if info is not None and info[1] == me:
                out.append(int(name))
    return out


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgid, sid) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def _has_tag(pid: int, tag: str, prefix: bool = False) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:
        return False
    needle = f"{TAG_VARIABLE}={tag}".encode()
    if prefix:
        return needle in env
    return (b"\0" + needle + b"\0") in (b"\0" + env + b"\0")


def _sweep(match) -> int:
    """Kill and reap every re-parented child for which ``match(pid, stat)`` holds, until
    none is left or :data:`SWEEP_SECONDS` passed; returns how many were found."""
    if not _subreaper or not _subreaper[0]:
        return 0
    deadline = time.monotonic() + SWEEP_SECONDS
    pending: set[int] = set()
    seen_while: dict[int, frozenset] = {}  # a child not judged yet: the starts under way when seen
    found = 0
    while True:
        children = _children()
        with _state_lock:  # after the listing: a listed child whose start is over is a leader by now
            skip = set(_leaders)
            starting = frozenset(_starting)
        new = undecided = False
        for pid in children:
            if pid in skip or pid in pending:
                continue
            if seen_while.setdefault(pid, starting) & starting:
                undecided = True  # perhaps one of those starts (see _popen): judged when they are over
                continue
            info = _stat(pid)
            if info is None or _unborn(pid) or not match(pid, info):
                continue
            found += 1
            new = True
            pending.add(pid)
            if info[0] != "Z":
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else
                done = pid
            if done:
                pending.discard(pid)
        if (not pending and not new and not undecided) or time.monotonic() >= deadline:
            return found
        time.sleep(0.002 if pending or undecided else 0)


def _sweep_for(leader: int, tag: str, pipes: frozenset[int] = frozenset()) -> int:
    """After ``leader`` exited: what is left of its group, session, tagged descendants
    (``tag``, when the child's environment carries one) and descendants that still hold
    one of the pipes waza gave the leader (``pipes``, their inodes)."""
    return _sweep(lambda pid, info: info[2] == leader or info[3] == leader
                  or (bool(tag) and _has_tag(pid, tag)) or (bool(pipes) and _holds_pipe(pid, pipes)))


def _unborn(pid: int) -> bool:
    """Whether ``pid`` is a child this process is starting right now: forked, not yet
    past ``exec``, so it still holds every descriptor of waza, the pipes of the other
    children included, and would look like their descendant to a sweep. A sweep in
    another thread killed such children under load (a grader ended by SIGKILL within
    milliseconds of its start); the birthmark pipe tells them apart."""
    return bool(_birthmark) and _holds_pipe(pid, frozenset(_birthmark))


def _holds_pipe(pid: int, inodes: frozenset[int]) -> bool:
    """Whether ``pid`` has one of the pipes ``inodes`` open (``/proc/PID/fd`` links read
    ``pipe:[INODE]``): the supervisor's own mark of a child's descendants, which needs
    nothing in their environment."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
        except OSError:
            continue
        if link.startswith("pipe:[") and link[6:-1].isdigit() and int(link[6:-1]) in inodes:
            return True
    return False


def kill_everything() -> None:
    """Kill every child process group :func:`run` is supervising, now (a forced exit:
    their supervisors may never get to it). Safe from a signal handler: no lock."""
    for pid in list(_leaders):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def kill_leftovers(every_child: bool = False) -> int:
    """Kill and reap every re-parented descendant of any child :func:`run` started: call
    when waza is done, since nothing it started may outlive it. ``every_child``
    (the CLI, on its way out) kills every child left, even one that cleared its
    environment; a library caller keeps the children it started itself."""
    with _state_lock:
        past = set(_past_leaders)
    return _sweep(lambda pid, info: every_child or info[2] in past or info[3] in past
                  or _has_tag(pid, _SESSION + ".", prefix=True))
