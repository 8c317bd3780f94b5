"""Run workspaces: a fresh private folder for each run, removed on a background thread.

Its own module so that a command that prepares a suite without running it (``waza validate``)
does not import it; :meth:`waza_core.run.prepared.PreparedSuite.start` does. What making and
removing folders needs (``tempfile``, ``shutil``, ``queue``: ~11 M instructions, ~3 ms) and the
removing thread come with the first workspace a run takes: a suite whose runs need none (mock
runs graded on their output, most large suites) starts neither.
"""

from __future__ import annotations

import os
import threading

from waza_core.errors import WazaError


def _remove_workspace(ws: str) -> None:
    try:
        os.rmdir(ws)  # the common case under mock: nothing was written
    except OSError:
        import shutil  # deferred: a workspace something was written into (see the module's docstring)

        shutil.rmtree(ws, ignore_errors=True)


class Workspaces:
    """Makes a fresh workspace folder per run and removes used ones on a background thread.

    Folder removal is a slow system call on some disks (0.1 ms and more); it releases
    the GIL, so doing it beside the run loop takes it off the critical path. (Making
    folders ahead on a thread was tried and measured slower: handing a folder over
    between threads costs more than the ``mkdir``.) ``close`` waits until every used
    folder is gone.
    """

    def __init__(self, keep: bool = False) -> None:
        self.trash = None  # the removing thread's queue, from the first take() on
        self.janitor: threading.Thread | None = None
        self._starting = threading.Lock()  # runs on a thread pool may take their first at once
        self.keep = keep  # --keep-workspaces: never removed, not even after an interrupt
        self.live: set[str] = set()  # taken and not handed back: removed at close
        self.closed = False

    def _start(self) -> None:
        # deferred: see the module's docstring
        import queue

        with self._starting:
            if self.janitor is None and not self.closed:  # after close() a run removes its own
                self.trash = queue.SimpleQueue()
                janitor = threading.Thread(target=self._remove, name="waza-janitor", daemon=True)
                janitor.start()
                self.janitor = janitor

    def _remove(self) -> None:
        while (ws := self.trash.get()) is not None:
            _remove_workspace(ws)

    def take(self) -> str:
        if self.janitor is None:
            self._start()
        import tempfile  # deferred: see the module's docstring (a no-op after the first)

        try:
            ws = tempfile.mkdtemp(prefix="waza-ws-")  # 0700, whatever the umask
        except OSError as exc:
            raise WazaError(f"cannot create a run workspace in {tempfile.gettempdir()}: {exc.strerror}; "
                            "set TMPDIR to a writable folder") from None
        if not self.keep:
            self.live.add(ws)
        return ws

    def remove(self, ws: str) -> None:
        self.live.discard(ws)
        if self.closed:  # a run abandoned at an interrupt finishing late: remove it now
            _remove_workspace(ws)
        else:
            self.trash.put(ws)

    def close(self) -> None:
        """Wait until every used workspace is removed; also remove those of runs that
        never handed theirs back (left behind at an interrupt)."""
        with self._starting:  # no janitor starts after this
            self.closed = True
            janitor, self.janitor = self.janitor, None
        if janitor is not None:
            self.trash.put(None)
            janitor.join()
        for ws in list(self.live):
            self.live.discard(ws)
            _remove_workspace(ws)
