"""The ``ray`` backend: every run (workspace, execute, grade) on a Ray cluster.

``waza run --backend ray [--ray-address ADDR]``. The driver (this process) keeps
everything but the runs: planning, aggregation, the journal, the results file. It

1. connects to the cluster (``--ray-address``, else ``RAY_ADDRESS``, else
   ``.waza.yaml`` ``defaults.rayAddress``; with none, it starts a Ray instance on this
   machine bound to 127.0.0.1), see :func:`connect`;
2. packs the suite folder and what else the runs read into one bundle
   (:mod:`waza_core.run.ray_bundle`) and puts it in Ray's object store once;
3. keeps a pool of :class:`~waza_core.run.ray_worker.RunWorker` actors, one CPU
   each, as many as the cluster has CPUs (checked again every second, so a node
   that joins is used), capped by ``--workers``; actors are spread over the nodes;
4. hands each idle actor the next unit and yields each run as it comes back, so the
   progress line and the journal move as in a local run.

**Faults.** A unit whose actor is lost (its node died, its worker process crashed,
its result was lost with the node) is put back at the front of the queue and run
by another actor; it is retried at most ``max_attempts`` times, then recorded as an
``error`` run saying so. A unit is yielded once, from the one call that returned,
so each run is counted once. A run a lost node was grading may have been graded
there too: a grader with side effects can see such a run twice.
A run that raises (its workspace could not be filled) stops the suite run as it does
locally. A worker that cannot set the suite up (waza or a plugin is not installed
there) is exit 2, with the worker's reason.

**Stopping.** Ctrl-C or SIGTERM on the driver: every actor is told to stop (its
runs' process groups are killed), the driver waits up to :data:`STOP_GRACE_SECONDS`
for them, closes and kills every actor, and the results are written marked
``incomplete``. ``ray.init`` replaces the driver's SIGTERM handler with one that exits
at once; :func:`connect` puts the previous one back (or, when there was none, one
that stops like Ctrl-C).

Nothing here imports Ray when the module loads; ``waza`` without ``--backend ray``
never imports it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from waza_core.childenv import allowed
from waza_core.errors import WazaError
from waza_core.results.model import RunResult
from waza_core.run.backend import Backend, BackendJob, CompletedRun
from waza_core.run.plan import RunUnit

INSTALL_HINT = 'pip install "waza[ray]"'
#: after an interrupt, how long runs in flight get to stop and clean up
STOP_GRACE_SECONDS = 10.0
#: how long closing the actors (executor and graders shut down) may take
CLOSE_SECONDS = 30.0
#: after workers were killed, how long each node waits for them to die before it removes
#: the unpacked suite
SWEEP_SECONDS = 10.0
#: how often the pool size is checked against the cluster's CPUs
POOL_CHECK_SECONDS = 1.0
#: the variable that keeps Ray on the loopback address (see :func:`connect`)
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def check_ray_installed() -> None:
    """Exit 2 with the install command when Ray cannot be imported (without importing it)."""
    # deferred: importlib.util adds ~0.4 ms to importing this module
    import importlib.util

    try:
        found = importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise WazaError(f"--backend ray needs Ray, which is not installed; install it with: {INSTALL_HINT}")


def _import_ray():
    try:
        # deferred: ray is optional; a missing one is handled here
        import ray
    except ImportError as exc:
        raise WazaError(f"--backend ray needs Ray, which cannot be imported ({exc}); "
                        f"install it with: {INSTALL_HINT}") from None
    return ray


def _is_loopback(address: str | None) -> bool:
    if address is None:
        return True
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


def connect(address: str | None):
    """The ``ray`` module, connected: to ``address``, or to a new local instance bound
    to 127.0.0.1 when ``address`` is None. A connection this process already has (a
    notebook's ``ray.init``) is used as it is."""
    if _is_loopback(address):
        # Ray replaces 127.0.0.1 with the machine's network address unless told not to;
        # a local instance or a loopback cluster must stay on the loopback address.
        os.environ[LOOPBACK_ENV] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    # deferred: logging adds ~2.9 ms to importing this module
    import logging

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address is None:  # "local": start one here, whatever RAY_ADDRESS says
        kwargs.update(address="local", _node_ip_address="127.0.0.1", include_dashboard=False)
    else:
        kwargs.update(address=address)
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise WazaError(f"cannot connect to {where}: {exc}") from None
    finally:
        if main:
            _restore_sigterm(previous)
    return ray


def _restore_sigterm(previous) -> None:
    """Undo ``ray.init``'s SIGTERM handler (it exits at once, losing the results)."""
    if previous in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    else:
        signal.signal(signal.SIGTERM, previous)


def _sigterm_as_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def forwarded_environment(prepared) -> dict[str, str]:
    """The driver's variables the workers get: those the executor's and graders' own
    allow-lists name (``environment_allow_list``), and waza's plugin settings."""
    patterns: list[str] = list(prepared.executor.environment_allow_list())
    for grader in prepared.all_graders():
        patterns.extend(grader.environment_allow_list())
    env = allowed(os.environ, patterns)
    # the recipe names every plugin module the driver loaded and every one it disabled
    env["WAZA_PLUGINS"] = env["WAZA_DISABLED_PLUGINS"] = ""
    env["WAZA_DISABLE_PLUGIN_AUTOLOAD"] = os.environ.get("WAZA_DISABLE_PLUGIN_AUTOLOAD", "")
    return env


@attrs.define(eq=False)
class _Slot:
    """One actor of the pool."""

    actor: Any
    node: str | None = None  # known once set up


class RayBackend(Backend):
    name = "ray"
    local_runs = False

    def __init__(self, job: BackendJob) -> None:
        super().__init__(job)
        if job.recipe is None:
            raise WazaError("--backend ray needs a suite loaded from its file (the workers load it again); "
                            "this run has none")
        self.address: str | None = job.options.get("address") or os.environ.get("RAY_ADDRESS") or None
        workers = job.options.get("workers")
        self.cap: int | None = workers if workers else None  # --workers N; 0 or absent: the cluster's CPUs
        self.queue: deque[RunUnit] = deque()
        self.losses: dict[RunUnit, int] = {}
        self.starting: dict[Any, _Slot] = {}  # setup() ref -> slot
        self.idle: list[_Slot] = []
        self.inflight: dict[Any, tuple[_Slot, RunUnit]] = {}  # run() ref -> (slot, unit)
        self.ray = None
        self.bundle_ref = None
        self.spec = None
        self.actor_class = None
        self.next_pool_check = 0.0
        self.stopped = False
        self.log = None
        self.killed_busy = False  # an actor was killed before it gave its copy of the suite back

    # -- the Backend calls ----------------------------------------------------------------
    def submit(self, units: Sequence[RunUnit]) -> None:
        self.queue.extend(units)

    def results(self) -> Iterator[CompletedRun]:
        if not self.queue:
            return
        self._start()
        try:
            yield from self._loop()
        except KeyboardInterrupt:
            self.interrupt()
            raise

    def cancel(self) -> int:
        outstanding = len(self.queue) + len(self.inflight)
        self.queue.clear()
        return outstanding

    def interrupt(self) -> None:
        """Tell every actor to stop its run, wait a little for them, drop the rest."""
        self.queue.clear()
        self.job.prepared.cancel.set()  # the run was interrupted (what the exit code reads)
        if self.stopped or self.ray is None:
            return
        self.stopped = True
        self._stop_inflight()

    def close(self) -> None:
        if self.ray is None:
            return
        ray = self.ray
        try:
            if self.inflight:  # the driver stopped reading (an error): stop the runs first
                self._stop_inflight()
            closing = {s.actor.close.remote(): s for s in self.idle}
            if closing:
                done, _ = ray.wait(list(closing), num_returns=len(closing), timeout=CLOSE_SECONDS)
                for ref in done:
                    closed = closing[ref]
                    self.idle.remove(closed)
                    self._kill(closed, closed=True)
        finally:
            for slot in [*self.idle, *self.starting.values()]:
                self._kill(slot)
            self.idle.clear()
            self.starting.clear()
            self.bundle_ref = None
            if self.killed_busy:
                self._sweep()

    def _sweep(self) -> None:
        """Remove the unpacked suite from every node once the workers killed there are
        gone (a killed worker never gives its copy back; see ray_bundle.sweep)."""
        # deferred: waza_core.run adds ~9.2 ms to importing this module
        from waza_core.run import ray_bundle

        ray = self.ray
        try:
            # deferred: ray.util.scheduling_strategies is optional; a missing one is handled here
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
            task = ray.remote(ray_bundle.sweep).options(num_cpus=0, max_retries=0)
            refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
                    .remote(self.spec.digest, SWEEP_SECONDS) for node in nodes]
            ray.wait(refs, num_returns=len(refs), timeout=SWEEP_SECONDS + CLOSE_SECONDS)
        except Exception as exc:  # a cluster going away: the next run on the node reuses or replaces the copy
            self.log.warning("could not remove the unpacked suite from the Ray nodes", reason=_short(exc))

    # -- start ----------------------------------------------------------------------------
    def _start(self) -> None:
        # deferred: waza_core.log adds ~20.5 ms to importing this module
        from waza_core.log import get_logger
        from waza_core.run import ray_bundle
        from waza_core.suite import project_config

        self.log = get_logger()
        job = self.job
        bundle = ray_bundle.make_bundle(job.recipe, forwarded_environment(job.prepared),
                                        project_file=project_config.find())
        self.ray = ray = connect(self.address)
        cpus = self._cluster_cpus()
        if cpus < 1:
            raise WazaError(f"the Ray cluster{f' at {self.address}' if self.address else ''} has no CPU to run on")
        self.spec = bundle.spec
        self.bundle_ref = ray.put(bundle.data)
        # deferred: waza_core.run.ray_worker is loaded only when a run goes to Ray
        from waza_core.run.ray_worker import RunWorker

        self.actor_class = ray.remote(RunWorker).options(
            num_cpus=1, max_concurrency=2, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD")

    def _cluster_cpus(self) -> int:
        try:
            return int(self.ray.cluster_resources().get("CPU", 0))
        except Exception:  # the GCS is briefly unreachable: keep the pool as it is
            return -1

    # -- the loop -------------------------------------------------------------------------
    def _loop(self) -> Iterator[CompletedRun]:
        ray = self.ray
        while self.queue or self.inflight:
            self._fill_pool()
            self._dispatch()
            waiting = [*self.starting, *self.inflight]
            if not waiting:
                time.sleep(0.2)  # no actor can start now (a node is coming back): look again soon
                continue
            done, _ = ray.wait(waiting, num_returns=1, timeout=0.5, fetch_local=True)
            if done:
                done, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0, fetch_local=True)
            for ref in done:
                if ref in self.starting:
                    self._set_up(ref)
                else:
                    finished = self._finished(ref)
                    if finished is not None:
                        yield finished

    def _fill_pool(self) -> None:
        """As many actors as the cluster has CPUs (capped by --workers and the work left)."""
        now = time.monotonic()
        if now < self.next_pool_check:
            return
        self.next_pool_check = now + POOL_CHECK_SECONDS
        cpus = self._cluster_cpus()
        if cpus < 0:
            return
        target = min(cpus, self.cap or cpus, len(self.queue) + len(self.inflight))
        have = len(self.starting) + len(self.idle) + len(self.inflight)
        for _ in range(target - have):
            slot = _Slot(self.actor_class.remote())
            self.starting[slot.actor.setup.remote(self.spec, [self.bundle_ref])] = slot

    def _dispatch(self) -> None:
        while self.idle and self.queue:
            slot, unit = self.idle.pop(), self.queue.popleft()
            self.inflight[slot.actor.run.remote(unit)] = (slot, unit)

    def _set_up(self, ref) -> None:
        ray = self.ray
        slot = self.starting.pop(ref)
        try:
            node, problem = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the actor died starting (its node went away)
            self.log.warning("a Ray worker could not start; another one will", reason=_short(exc))
            self._kill(slot)
            self.next_pool_check = 0.0
            return
        if problem is not None:
            self._kill(slot)
            raise WazaError(f"a Ray worker on node {node} cannot run this suite: {problem}")
        slot.node = node
        self.idle.append(slot)

    def _finished(self, ref) -> CompletedRun | None:
        ray = self.ray
        slot, unit = self.inflight.pop(ref)
        try:
            run = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the run itself raised: as in a local run
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None
        except ray.exceptions.RayError as exc:  # the actor, its node or the result was lost
            return self._lost(slot, unit, exc)
        self.idle.append(slot)
        return CompletedRun(unit, run)

    def _lost(self, slot: _Slot, unit: RunUnit, exc: BaseException) -> CompletedRun | None:
        """Run ``unit`` elsewhere, or record it as an error once it was lost too often."""
        self._kill(slot)
        self._drop_dead_nodes()
        self.next_pool_check = 0.0
        lost = self.losses[unit] = self.losses.get(unit, 0) + 1
        retries = max(1, unit.max_attempts)
        if lost <= retries:
            self.log.warning("a run was lost with its Ray worker; running it again elsewhere",
                             task=unit.task_id, trial=unit.trial, node=slot.node, retry=f"{lost}/{retries}",
                             reason=_short(exc))
            self.queue.appendleft(unit)
            return None
        message = (f"the run was lost with its Ray worker {lost} times (last on node {slot.node}: "
                   f"{_short(exc)}); not retried again (config.max_attempts: {unit.max_attempts})")
        return CompletedRun(unit, RunResult(run_number=unit.trial, attempts=lost, status="error",
                                            worker=slot.node, error_msg=message))

    def _drop_dead_nodes(self) -> None:
        """Forget the idle actors of nodes the cluster reports dead, so no unit goes there."""
        try:
            alive = {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}
        except Exception:
            return
        for slot in [s for s in self.idle if s.node not in alive]:
            self.idle.remove(slot)
            self._kill(slot)

    def _stop_inflight(self) -> None:
        ray = self.ray
        refs = list(self.inflight)
        for slot in {id(s): s for s, _ in self.inflight.values()}.values():
            try:
                slot.actor.interrupt.remote()
            except Exception:
                pass
        if refs:
            done, _ = ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_SECONDS)
            finished = set(done)
            for ref, (slot, _unit) in list(self.inflight.items()):
                if ref in finished:
                    self.idle.append(slot)  # stopped in time: it can still be closed cleanly
                else:
                    self._kill(slot)
        self.inflight.clear()

    def _kill(self, slot: _Slot, closed: bool = False) -> None:
        """Kill an actor; unless it ``closed`` first (and so gave its copy of the suite
        back), the nodes are swept at the end (see :meth:`_sweep`)."""
        self.killed_busy = self.killed_busy or not closed
        try:
            self.ray.kill(slot.actor, no_restart=True)
        except Exception:
            pass


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first[:200]}"
