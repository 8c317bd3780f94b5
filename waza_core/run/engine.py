"""The driver of one suite run: plan, prepare, hand the units to a backend, aggregate.

The run flow, one module per stage::

    plan.py       RunOptions -> RunPlan: tasks x trials x model, filters, executor check
    prepared.py   PreparedSuite: executor, graders, input files, run preparers (rebuildable
                  elsewhere from a SuiteRecipe)
    backend.py    Backend: submit units, stream CompletedRun back, cancel, interrupt
    local.py        the ``local`` backend: sequential loop or thread pool
    unit.py       run_unit: ONE run: workspace, preparers, execute, grade -> RunResult
    preparers.py    the per-run features (the seam; see unit.py)
    aggregate.py  Aggregator: runs -> finished tasks, stats, summary -> ResultsDocument
    command.py    ``waza run`` as a library function: load, run, write, exit code

An :class:`Engine` is built once per suite run: building it plans the runs, builds
every grader and the executor once and checks every input file, so a missing
fixture is a config error (exit 2), not a hundred failed runs. :meth:`Engine.run`
returns the typed :class:`~waza_core.results.model.ResultsDocument`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from waza_core.errors import WazaError
from waza_core.grading.build import build_grader
from waza_core.grading.grade import grade_run
from waza_core.model import Suite
from waza_core.results.model import RESULTS_SCHEMA_VERSION, ResultsDocument, exit_code
from waza_core.run import triggers
from waza_core.run.aggregate import Aggregator, task_result
from waza_core.run.backend import BackendJob, CompletedRun
from waza_core.run.backends import make_backend
from waza_core.run.finish import executor_notices
from waza_core.run.hooks import Hooks
from waza_core.run.plan import RunOptions, RunUnit, make_plan, select_tasks
from waza_core.run.recipe import SuiteRecipe, prepare_suite, settings_for

__all__ = ["RESULTS_SCHEMA_VERSION", "Engine", "RunOptions", "RunUnit", "build_grader", "exit_code", "grade_run",
           "select_tasks", "task_result"]


class Engine:
    """Runs one suite once. Build it, then call :meth:`run`.

    ``plugins`` (the ``-p`` list) makes the run rebuildable in another process (a
    :class:`SuiteRecipe`); without it only in-process backends can run it.
    """

    def __init__(self, suite: Suite, registry, options: RunOptions | None = None,
                 plugins: tuple[str, ...] | None = None) -> None:
        self.suite = suite
        self.registry = registry
        self.options = options = options or RunOptions()
        self.plan = plan = make_plan(suite, registry, options)
        settings = settings_for(plan, options)
        self.recipe = None if plugins is None else SuiteRecipe(
            str(suite.file), tuple(plugins), settings, tuple(t.id for t in plan.tasks))
        self.prepared = prepare_suite(suite, registry, settings, list(plan.tasks))
        self.aggregator = Aggregator(plan, options, self.prepared.positions)
        self.aggregator.group_by = suite.config.group_by

        #: lifecycle hooks (the preparer of before_task made them when the suite has any)
        self.hooks = getattr(self.prepared, "hooks", None) or Hooks(suite, self.prepared.cancel)
        self.hooks.warn = self._warn
        #: warnings of this run (hooks that failed without error_on_fail), in order
        self.warnings: list[str] = []
        #: the results of trigger_tests.yaml once they ran (None: not run)
        self.trigger_results: list[dict] | None = None

        for notice in executor_notices(suite, plan.tasks, plan.executor_name, type(self.prepared.executor)):
            self._warn(notice)
        self.incomplete = False
        #: runs finished by an earlier session of this suite run (``--resume``): not run again
        self.prior: Iterable[CompletedRun] = []
        #: called with every run as it finishes, before it is aggregated (``--journal``)
        self.run_observers: list[Callable[[CompletedRun], None]] = []
        # what the console shows before the first run
        self.tasks, self.trials, self.model = list(plan.tasks), plan.trials, plan.model
        self.executor_name = plan.executor_name
        #: a function that may put another backend in front of the chosen one (the result cache)
        self.wrap_backend = None

    @property
    def cancel(self):
        """Set when the run was interrupted (it also kills every running child process group)."""
        return self.prepared.cancel

    @property
    def executor(self):
        """The executor of the runs (replace it before :meth:`run` to inject a test double)."""
        return self.prepared.executor

    @executor.setter
    def executor(self, value) -> None:
        self.prepared.executor = value

    @property
    def finished(self) -> dict:
        return self.aggregator.finished

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.options.on_warning is not None:
            self.options.on_warning(message)

    def run(self) -> ResultsDocument:

        started = time.time()
        t0 = time.perf_counter()
        try:
            problem = self.hooks.run("before_run")
            if problem is not None:
                raise WazaError(f"before_run hook failed: {problem}")
            return self._run(started, t0)
        finally:  # after_run runs even when the run failed, as in waza (Go); it only warns
            problem = self.hooks.run("after_run")
            if problem is not None:
                self._warn(f"after_run hook error: {problem}")

    def _run(self, started: float, t0: float) -> ResultsDocument:
        prepared, plan = self.prepared, self.plan
        # runs handed over in batches only where nothing reads each run as it ends (run/local.py)
        batch_finished = (not plan.fail_fast and not self.hooks.has("after_task") and self.options.budget is None
                          and not self.run_observers and self.wrap_backend is None)
        backend = make_backend(self.options.backend, BackendJob(prepared, self.recipe, plan.parallel, plan.workers,
                                                                dict(self.options.backend_options), batch_finished))
        inner = backend
        local_runs = backend.local_runs
        if self.wrap_backend is not None:
            backend = self.wrap_backend(backend)
        budget = self.options.budget
        if budget is not None:  # in front of everything: a cache hit costs nothing and is never held back
            # deferred: waza_core.run.budget adds ~1.2 ms to importing this module
            from waza_core.run.budget import BudgetBackend

            backend = BudgetBackend(backend, budget)
        try:
            todo = self._take_prior()
            if todo and local_runs:
                prepared.start()
            backend.submit(todo)
            self._collect(backend, inner if batch_finished else None)
            if self.suite.trigger_tests is not None and not self.cancel.is_set():
                self.trigger_results = self._trigger_tests()
        except KeyboardInterrupt:
            backend.interrupt()
            self.incomplete = True
        finally:
            try:
                backend.close()
            finally:
                prepared.close()
        return self.outcome(started, int((time.perf_counter() - t0) * 1000))

    def _take_prior(self) -> list[RunUnit]:
        """Aggregate the runs of :attr:`prior`; the units still to run."""
        units = self.plan.units()
        if not self.prior:
            return units
        todo = {(u.task_id, u.trial, u.model): u for u in units}
        prior, self.prior = self.prior, []  # read once (a resumed journal decodes them one by one)
        budget = self.options.budget
        for run in prior:  # runs of other tasks or trials, and repeats, are left out
            if todo.pop((run.unit.task_id, run.unit.trial, run.unit.model), None) is not None:
                self.aggregator.add(run)
                if budget is not None:  # paid for in the earlier session: counts against the cap
                    budget.record_prior(run.run)
        if todo and self.plan.fail_fast and self.aggregator.saw_failure:
            self.incomplete = True
            return []
        return list(todo.values())

    def _collect(self, backend, batched=None) -> None:
        """Feed the runs to the aggregator as they finish; fail-fast cancels what has not started.
        ``batched``: the backend that hands runs over in batches; at an interrupt the runs it
        finished and had not handed over yet are aggregated too."""
        stream = backend.results()
        observers = self.run_observers
        after_task = self.hooks.has("after_task")
        add = self.aggregator.add
        try:
            for done in stream:
                for observe in observers:
                    observe(done)
                entry = add(done)
                if entry is not None and after_task:
                    problem = self.hooks.run("after_task", f"task {entry.test_id!r}")
                    if problem is not None:
                        self._warn(f"after_task hook error for {entry.test_id!r}: {problem}")
                if self.plan.fail_fast and self.aggregator.saw_failure and backend.cancel():
                    self.incomplete = True
        except KeyboardInterrupt:
            if batched is not None:  # nothing else reads runs when they come in batches: no observer, no hook
                for done in batched.take_finished():  # what the backend finished and still held
                    add(done)
            raise
        finally:
            stream.close()

    def _trigger_tests(self) -> list[dict]:
        """trigger_tests.yaml: fabricated under mock, else each prompt through the executor."""
        # deferred: waza_core.run adds ~3.7 ms to importing this module
        from waza_core.run import triggers

        spec = self.suite.trigger_tests
        if self.plan.executor_name == "mock":
            return triggers.fabricated(spec)
        return triggers.run_prompts(self.prepared, spec, self.plan.model, self.plan.workers)

    def outcome(self, started: float, duration_ms: int) -> ResultsDocument:
        """The results document of the runs finished so far."""

        budget = self.options.budget
        skipped = budget is not None and budget.skipped > 0
        doc = self.aggregator.document(self.suite, started, duration_ms, self.incomplete or skipped)
        triggers.attach(doc, self.suite, self.trigger_results)
        if budget is not None:
            doc.extra["spend"] = budget.account()
        return doc
