"""The cancel event of a run: one ``threading.Event`` that also wakes whoever waits on it.

Its own module because both the child processes (:mod:`waza_core.procs`, which kills a running
group when it is set) and grading (:mod:`waza_core.grading.grade`, which subscribes a grader's
own event to the run's) use it, and grading must not import ``subprocess`` and ``selectors``
for it: ``waza validate`` imports grading but starts no process. Public as
``waza_core.CancelEvent`` (and still importable from :mod:`waza_core.procs`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CancelEvent(threading.Event):
    """A ``threading.Event`` whose :meth:`set` also wakes every :func:`waza_core.procs.run` using it.

    Share one per suite run: setting it (e.g. on Ctrl-C) kills every running child
    group at once. A plain ``threading.Event`` works too, but is only checked
    every 0.1 s.
    """

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._cb_lock = threading.Lock()
        self._next = 0

    def set(self) -> None:
        super().set()
        with self._cb_lock:
            callbacks = list(self._callbacks.values())
            for callback in callbacks:
                try:
                    callback()
                except Exception:  # pragma: no cover - callbacks only write to a pipe
                    pass

    def _subscribe(self, callback: Callable[[], None]) -> int:
        with self._cb_lock:
            self._next += 1
            self._callbacks[self._next] = callback
            token = self._next
        if self.is_set():
            callback()
        return token

    def _unsubscribe(self, token: int) -> None:
        # Holding the lock guarantees no callback of ours is still running once
        # this returns, so the caller may close the pipe the callback writes to.
        with self._cb_lock:
            self._callbacks.pop(token, None)
