"""The worker side of the ``ray`` backend: one Ray actor = one run at a time on one CPU.

The driver (:mod:`waza_core.run.ray_backend`) makes one :class:`RunWorker` actor per
CPU it uses. :meth:`RunWorker.setup` runs once per actor: it unpacks the suite bundle
(once per node, see :mod:`waza_core.run.ray_bundle`), moves into the working
directory the bundle names, rebuilds the :class:`~waza_core.run.prepared.PreparedSuite`
from the recipe and starts it (executor, graders), exactly as the driver would. Then
each :meth:`RunWorker.run` is :func:`waza_core.run.unit.run_unit` on that prepared
suite, recording the Ray node id as the run's ``worker``.

The actor is threaded (two threads) so that :meth:`RunWorker.interrupt` can set the
prepared suite's cancel event (which kills every child process group of the run)
while :meth:`RunWorker.run` is busy. :meth:`RunWorker.close` shuts the executor and
graders down and gives the bundle back. Setup problems are returned, not raised, so
the driver can tell "this worker cannot run the suite" (exit 2) from "this worker's
machine went away" (run it elsewhere).

This module imports Ray only inside methods, which run on a worker where Ray runs.
"""

from __future__ import annotations

import os

from waza_core.errors import WazaError
from waza_core.results.model import RunResult
from waza_core.run.plan import RunUnit


class RunWorker:
    """A Ray actor class (wrapped with ``ray.remote`` by the driver)."""

    def __init__(self) -> None:
        self.prepared = None
        self.digest: str | None = None
        self.node_id = "ray"

    def setup(self, spec, box: list) -> tuple[str, str | None]:
        """Unpack, prepare and start; ``(node id, None)``, or ``(node id, why not)``.

        ``box`` holds the bundle's object reference inside a list, so Ray does not
        fetch the bytes for every actor: only the first worker of a node does."""
        # deferred: ray adds ~1452.9 ms to importing this module
        import ray

        # deferred: waza_core.run adds ~136.4 ms to importing this module
        from waza_core.run import ray_bundle

        self.node_id = ray.get_runtime_context().get_node_id()
        try:
            os.environ.update(dict(spec.environment))
            tree = ray_bundle.unpack_once(spec.digest, lambda: ray.get(box[0]))
            self.digest = spec.digest
            os.chdir(tree / spec.cwd)
            prepared = spec.local_recipe(tree).prepare()
            prepared.start()
            self.prepared = prepared
        except WazaError as exc:
            return self.node_id, str(exc)
        except Exception as exc:  # what the driver shows as the reason the worker cannot run
            return self.node_id, f"{type(exc).__name__}: {exc}"
        return self.node_id, None

    def run(self, unit: RunUnit) -> RunResult:
        # deferred: waza_core.run.unit adds ~79.5 ms to importing this module
        from waza_core.run.unit import run_unit

        if self.prepared is None:
            raise WazaError("the Ray worker was not set up")
        return run_unit(self.prepared, unit, self.node_id)

    def interrupt(self) -> None:
        """Stop the run in progress now: kill its child processes, tell graders to stop."""
        if self.prepared is not None:
            self.prepared.cancel.set()

    def close(self) -> str | None:
        """Shut the executor and graders down, give the bundle back; a problem, or None."""
        # deferred: waza_core.run adds ~136.4 ms to importing this module
        from waza_core.run import ray_bundle

        problem = None
        try:
            if self.prepared is not None:
                self.prepared.close()
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        finally:
            self.prepared = None
            if self.digest is not None:
                digest, self.digest = self.digest, None
                try:
                    os.chdir("/")  # leave the tree before it may be removed
                    ray_bundle.release(digest)
                except Exception as exc:
                    problem = problem or f"{type(exc).__name__}: {exc}"
        return problem
