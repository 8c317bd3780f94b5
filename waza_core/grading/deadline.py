"""Every grader gets a time limit: a grader that runs past it is a grader error.

How a limit is enforced depends on what the grader declares (``Grader.bounded``):

* **bounded graders** (the built-ins: text, expectations, program...) are called in
  the run's own thread, at no extra cost. Their own limits do the real work (RE2
  regexes are linear; a program is killed at its timeout). A process-wide
  **watchdog** thread backs them up: when a call passes its deadline it raises
  :class:`GraderTimeout` inside that thread (``PyThreadState_SetAsyncExc``), again
  every second until the call ends. That stops a pure-Python loop at its next
  bytecode.
* **other graders** (plugins, unless they declare ``bounded = True``) run on a
  helper thread while the run's thread waits at most the limit plus
  :data:`GRACE_SECONDS`. Past that the run **moves on**: the grader's result is a
  ``timeout`` error, its cancel event is set, :class:`GraderTimeout` is raised in its
  thread as above, and the thread is left behind (a daemon: it cannot keep waza
  from exiting). So even a grader blocked in C code that released the GIL (a
  ``time.sleep(10**9)``, a socket read without a timeout) cannot hang the run.

What cannot be stopped in-process: C code that holds the GIL and never returns to
Python (Python's ``re`` backtracking, a tight loop in a C extension) freezes the
whole process, signals included. waza's own regexes use RE2 for that reason; a
plugin that runs such code should run it in a child process
(``waza_core.run_process``, which is killed at its timeout). docs/safety.md says so.

On Ctrl-C or SIGTERM, :func:`cancel_all` raises :class:`GradingCancelled` in every
grading call in progress, so busy graders stop at once.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from waza_core.signals import MAIN_WAIT_SECONDS

#: how long past its limit a grader on a helper thread gets before the run moves on
GRACE_SECONDS = 2.0
#: how often the watchdog looks at the calls in progress (limits are in seconds)
TICK_SECONDS = 0.25
#: how often an injected exception is repeated while the call has not ended
REPEAT_SECONDS = 1.0


class GraderTimeout(BaseException):
    """Raised inside a grader that ran past its time limit. A BaseException, so a
    grader's ``except Exception`` does not swallow it."""


class GradingCancelled(BaseException):
    """Raised inside a grader when the whole run is being stopped (Ctrl-C, SIGTERM)."""


class _Call:
    __slots__ = ("thread_id", "deadline", "done", "fired", "cancel", "last", "group")

    def __init__(self, thread_id: int, deadline: float, cancel: threading.Event | None, group: Any) -> None:
        self.thread_id = thread_id
        self.deadline = deadline
        self.done = False
        self.fired: type[BaseException] | None = None
        self.cancel = cancel
        self.last = 0.0
        self.group = group  # the run's cancel event: what cancel_all(group) stops


_lock = threading.Lock()
_calls: dict[int, _Call] = {}
_watchdog: list[threading.Thread] = []


def _inject(call: _Call, exc: type[BaseException]) -> None:
    """Raise ``exc`` in the call's thread (under ``_lock``: never after the call ended)."""
    if call.done:
        return
    call.fired = call.fired or exc
    call.last = time.monotonic()
    if call.cancel is not None:
        call.cancel.set()
    ctypes = sys.modules.get("ctypes")  # imported by _load_ctypes before the lock was taken
    if ctypes is None:
        return  # this Python has no ctypes: the call cannot be stopped; its cancel event is set
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(call.thread_id), ctypes.py_object(exc))


def _load_ctypes() -> None:
    """Import ctypes (what :func:`_inject` raises with) the first time a call must be stopped,
    outside :data:`_lock`: a run whose graders all end in time never imports it (~7.5 M
    instructions of every start). Where it cannot be imported, no call can be stopped
    (their cancel events are still set)."""
    try:  # an import statement, not a look at sys.modules: it waits for another thread's import to end
        import ctypes  # noqa: F401  # deferred: see the docstring
    except ImportError:
        pass


def _watch() -> None:
    while True:
        time.sleep(TICK_SECONDS)
        now = time.monotonic()  # before the copy: see _unregister
        if any([now >= call.deadline for call in list(_calls.values())]):
            _load_ctypes()
        with _lock:
            for call in list(_calls.values()):
                if now >= call.deadline and (call.fired is None or now - call.last >= REPEAT_SECONDS):
                    _inject(call, call.fired or GraderTimeout)


def _ensure_watchdog() -> None:
    if not _watchdog:
        with _lock:
            if not _watchdog:
                t = threading.Thread(target=_watch, name="waza-grading-watchdog", daemon=True)
                t.start()
                _watchdog.append(t)


def _register(seconds: float, cancel: threading.Event | None, thread_id: int | None = None,
              group: Any = None) -> _Call:
    call = _new_call(seconds, cancel, thread_id, group)
    _calls[id(call)] = call  # atomic under the GIL
    return call


def _new_call(seconds: float, cancel: threading.Event | None, thread_id: int | None, group: Any) -> _Call:
    """A call of ``seconds`` from now, not registered yet (the watchdog started)."""
    if not _watchdog:
        _ensure_watchdog()
    return _Call(thread_id or _get_ident(), _monotonic() + seconds, cancel, group)


def _unregister(call: _Call) -> None:
    """End a call; no injection can reach it afterwards.

    Lock-free while the deadline has not passed: the watchdog reads the clock
    *before* it copies the calls, so a scan that still sees this call read a time
    before now, which is before the deadline, and fires nothing. Past the deadline
    the lock orders this against an injection in progress.
    """
    if _monotonic() < call.deadline:
        call.done = True
        _calls.pop(id(call), None)
        return
    with _lock:
        call.done = True
        _calls.pop(id(call), None)


_get_ident = threading.get_ident
_monotonic = time.monotonic


def _clear_pending() -> None:
    """Drop an exception injected into this thread that has not fired yet."""
    ctypes = sys.modules.get("ctypes")  # imported by _load_ctypes before anything was injected
    if ctypes is None:
        return  # nothing can have been injected (see _inject)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), ctypes.py_object())


def cancel_all(group: Any = None) -> int:
    """Raise :class:`GradingCancelled` in every grading call in progress (of ``group``,
    the run's cancel event, when given); how many."""
    _load_ctypes()
    with _lock:
        calls = [c for c in _calls.values() if group is None or c.group is group]
        for call in calls:
            _inject(call, GradingCancelled)
    return len(calls)


def in_thread(fn: Callable[..., Any], seconds: float, group: Any = None, *args: Any) -> tuple[str, Any]:
    """Call ``fn(*args)`` in this thread under the watchdog.

    Returns ``("ok", value)``, ``("timeout", None)``, ``("cancelled", None)`` or
    ``("raised", exception)``; never lets an injected exception escape.
    """
    # Registered inside the try that unregisters it: Ctrl-C, raised in the main thread at any
    # line (also right after a call returned, before its value is stored), must never leave a
    # call registered, which the watchdog would stop once its deadline passed, in whatever this
    # thread does by then
    call = _new_call(seconds, None, None, group)
    outcome: tuple[str, Any]
    try:
        try:
            _calls[id(call)] = call  # atomic under the GIL
            outcome = ("ok", fn(*args))
        finally:
            _unregister(call)
            if call.fired is not None:  # only then can an injection still be pending
                _clear_pending()
    except GraderTimeout:
        outcome = ("timeout", None)
    except GradingCancelled:
        outcome = ("cancelled", None)
    except BaseException as exc:  # noqa: BLE001 - handed to the caller as a value
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            _unregister(call)  # again: the stop may have landed as the finally began
            raise
        outcome = ("raised", exc)
    if call.fired is not None:
        for _ in range(3):  # one last injection may have fired inside the finally
            try:
                _unregister(call)
                _clear_pending()
                break
            except (GraderTimeout, GradingCancelled):
                continue
    return outcome


class _Helper:
    """One daemon thread that runs calls handed to it; abandoned when a call overruns."""

    def __init__(self) -> None:
        import queue  # deferred: a helper thread is made when a grader first needs one, never by validate

        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="waza-grader", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            job()


_idle: list[_Helper] = []
_idle_lock = threading.Lock()


def _wait(event: threading.Event, seconds: float) -> bool:
    """``event.wait(seconds)`` in slices of :data:`~waza_core.signals.MAIN_WAIT_SECONDS`: the
    caller may be the main thread, which must run a signal's handler while it waits (a
    signal the kernel gave the helper thread would otherwise wait for the grader's limit)."""
    end = time.monotonic() + seconds
    while not event.wait(max(0.0, min(MAIN_WAIT_SECONDS, end - time.monotonic()))):
        if time.monotonic() >= end:
            return False
    return True


def on_helper(fn: Callable[[], Any], seconds: float, cancel: threading.Event | None = None,
              group: Any = None) -> tuple[str, Any]:
    """Call ``fn()`` on a helper thread; give up ``GRACE_SECONDS`` after ``seconds``.

    Same return values as :func:`in_thread`. ``cancel`` is set when the call overruns.
    """
    with _idle_lock:
        helper = _idle.pop() if _idle else _Helper()
    box: dict[str, Any] = {}
    finished = threading.Event()
    registered: list[_Call] = []

    def job() -> None:
        call = _register(seconds, cancel, helper.thread.ident, group)
        registered.append(call)
        try:
            try:
                box["outcome"] = ("ok", fn())
            finally:
                _unregister(call)
                if call.fired is not None:  # only then can an injection still be pending
                    _clear_pending()
        except GraderTimeout:
            box["outcome"] = ("timeout", None)
        except GradingCancelled:
            box["outcome"] = ("cancelled", None)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["outcome"] = ("raised", exc)
        finally:
            finished.set()

    helper.jobs.put(job)
    if not _wait(finished, seconds + GRACE_SECONDS):
        _load_ctypes()
        with _lock:  # make sure it is told, then leave it behind
            for call in registered:
                _inject(call, GraderTimeout)
        if cancel is not None:
            cancel.set()
        if not finished.is_set():
            return ("timeout", None)
    with _idle_lock:
        _idle.append(helper)
    return box.get("outcome", ("timeout", None))
