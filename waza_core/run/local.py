"""The ``local`` backend: run units in this process, one after another or on a thread pool.

Sequential (``parallel`` off or one worker): units run in submission order, each
to the end before the next starts, so fail-fast stops before the next task's first
run. When the driver needs no run before the next starts (``BackendJob.batch_finished``:
no fail-fast, no ``after_task`` hook, no spending cap, no journal or other run observer, no
result cache), fast runs are handed over a few at a time (:data:`BATCH_RUNS`,
:data:`BATCH_SECONDS`, :data:`FAST_RUN_SECONDS`); at an interrupt the driver takes those not
handed over yet with :meth:`~waza_core.run.backend.Backend.take_finished`.

Parallel: a pool of ``workers`` threads fed a few units ahead; results come back
as runs finish. Units are taken from the plan as they are needed, never all at once.
Every run records ``worker: local``.

Ctrl-C lands in the driver's thread (the one iterating :meth:`LocalBackend.results`):
the pool is shut down without waiting and the prepared suite's cancel event kills
every child process group, so in-flight runs end at once. Any other exception of a
run (a workspace that cannot be filled) stops the others and waits for those in
flight, so no run outlives the backend.
"""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Iterable, Iterator

from waza_core.run.backend import Backend, BackendJob, CompletedRun
from waza_core.run.plan import RunUnit
from waza_core.run.unit import LOCAL_WORKER, run_unit
from waza_core.signals import MAIN_WAIT_SECONDS

#: a sequential run of fast runs hands them to the driver in batches of at most this many...
BATCH_RUNS = 32
#: ...that all finished within this long of the batch's start...
BATCH_SECONDS = 0.02
#: ...once this many runs in a row (BATCH_RUNS) each took less than this. A slower run ends
#: the batch it is in and the batching until BATCH_RUNS fast runs in a row again: a suite of
#: real agents never batches. Runs of the mock executor (~50 us each) go in batches of 32:
#: running 32, then aggregating and writing 32, keeps each stage's code and data in the
#: processor's caches, ~15-20% of a warm run's time
FAST_RUN_SECONDS = 0.002

TYPE_CHECKING = False
if TYPE_CHECKING:  # concurrent.futures is imported by a parallel run only (see LocalBackend)
    from concurrent.futures import Future


class LocalBackend(Backend):
    name = "local"

    def __init__(self, job: BackendJob) -> None:
        super().__init__(job)
        self.prepared = job.prepared
        self.threaded = job.parallel and job.workers > 1
        self.todo: Iterator[RunUnit] = iter(())  # not submitted to a thread yet, made as needed
        #: sequential, batched: runs finished and not handed to the driver yet
        self.ready: collections.deque[CompletedRun] = collections.deque()
        self.pending: dict[Future, RunUnit] = {}  # threaded: on the pool, not yielded yet
        #: runs handed to the pool at once: enough to keep every thread busy, few enough that
        #: a 100,000-run plan does not become 100,000 futures
        self.window = 2 * job.workers + 4
        self.pool = None
        if self.threaded:
            # deferred: concurrent.futures (and the logging module it imports, ~4 ms of every
            # start) for a parallel run only
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=job.workers, thread_name_prefix="waza-run")

    def submit(self, units: Iterable[RunUnit]) -> None:
        self.todo = itertools.chain(self.todo, units)

    def results(self) -> Iterator[CompletedRun]:
        if self.pool is None:
            yield from self._sequential()
        else:
            yield from self._threaded()

    def _sequential(self) -> Iterator[CompletedRun]:
        prepared = self.prepared
        if not self.job.batch_finished:  # the driver reads each run before the next starts
            while (unit := next(self.todo, None)) is not None:
                yield CompletedRun(unit, run_unit(prepared, unit, LOCAL_WORKER))
            return
        clock, ready = time.monotonic, self.ready
        fast = 0  # runs in a row that took less than FAST_RUN_SECONDS each
        while True:
            until = clock() + BATCH_SECONDS
            size = BATCH_RUNS if fast >= BATCH_RUNS else 1
            try:
                while len(ready) < size and (unit := next(self.todo, None)) is not None:
                    began = clock()
                    ready.append(CompletedRun(unit, run_unit(prepared, unit, LOCAL_WORKER)))
                    ended = clock()
                    fast = fast + 1 if ended - began < FAST_RUN_SECONDS else 0
                    if not fast or ended >= until:
                        break
            except BaseException:
                while ready:  # the runs that finished are the driver's, also when interrupted
                    yield ready.popleft()
                raise
            if not ready:
                return
            while ready:
                yield ready.popleft()

    def take_finished(self) -> list[CompletedRun]:
        finished = list(self.ready)
        self.ready.clear()
        return finished

    def _fill(self) -> None:
        pool, prepared = self.pool, self.prepared
        assert pool is not None
        while len(self.pending) < self.window and (unit := next(self.todo, None)) is not None:
            self.pending[pool.submit(run_unit, prepared, unit, LOCAL_WORKER)] = unit

    def _threaded(self) -> Iterator[CompletedRun]:
        from concurrent.futures import FIRST_COMPLETED, wait  # deferred: imported with the pool (__init__)

        pool = self.pool
        assert pool is not None
        try:
            self._fill()
            while self.pending:
                # bounded: a signal delivered to a pool thread is handled here (signals.py)
                done, _ = wait(self.pending, timeout=MAIN_WAIT_SECONDS, return_when=FIRST_COMPLETED)
                for fut in done:
                    unit = self.pending.pop(fut)
                    yield CompletedRun(unit, fut.result())
                self._fill()
        except KeyboardInterrupt:
            self.interrupt()
            raise
        except BaseException:
            # A run could not even start (e.g. its workspace could not be filled), or the
            # driver stopped reading: stop the others, and let those in flight finish
            # before the workspaces are closed, so none is left behind.
            self.prepared.cancel.set()
            self.todo = iter(())
            pool.shutdown(wait=True, cancel_futures=True)
            raise

    def cancel(self) -> int:
        outstanding = len(self.pending) + sum(1 for _ in self.todo)  # the rest is dropped
        for fut in self.pending:
            fut.cancel()
        self.pending = {f: u for f, u in self.pending.items() if not f.cancelled()}
        return outstanding

    def interrupt(self) -> None:
        self.prepared.cancel.set()
        self.todo = iter(())
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self.pool is not None:
            # interrupted: the runs in flight are waited for (a bounded time) by
            # PreparedSuite.close, after the executor was told to stop
            self.pool.shutdown(wait=not self.prepared.cancel.is_set())
