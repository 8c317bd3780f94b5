"""The run preparer of this package: plugs :mod:`waza_core.mocks.run` into the per-run
seam of :mod:`waza_core.run.setup` (listed in ``waza_core.run.preparers``).

Built once per prepared suite, it pins the tasks' repositories and resolves the MCP
mocks (a bad ref or a missing SDK is a config error before the first run). For each
run it places the repositories, checks the working directory, installs the mocks and
hands the executor ``environment``, ``path_prepend``, ``mcp_servers`` and ``workdir``;
after the executor it puts ``command_invocations`` and ``mcp_invocations`` into the
evidence and turns an ``expect_calls`` mismatch into the run's error, as waza does.
"""

from __future__ import annotations

import sys

from waza_core.mocks import TASK_PLAN_KEYS
from waza_core.model import tasks_that_may_hold


def mocks_and_repos(prepared):
    """The preparer, or None when no task uses any of these keys."""
    raw = prepared.suite.raw if isinstance(prepared.suite.raw, dict) else {}
    if not (raw.get("command_mocks") or raw.get("mcp_mocks")) and not _any_task_may_hold(prepared, TASK_PLAN_KEYS):
        return None  # SuiteMocks would find nothing to do: spared its import (and tempfile, shutil, shlex)
    # deferred: waza_core.mocks.run adds ~87.2 ms to importing this module
    from waza_core.mocks.run import SuiteMocks

    executor = prepared.executor
    active = bool(type(executor).supports_mocks)
    plan = SuiteMocks(prepared.suite, list(prepared.tasks.values()), active, executor.name)
    if not plan.used():
        return None
    if plan.ignored:
        sys.stderr.write(f"waza: note: executor {executor.name!r} runs no agent, so the suite's "
                         f"{' and '.join(plan.ignored)} are not installed (their evidence stays null)\n")

    def prepare(setup) -> None:
        run = plan.prepare(setup.task, setup.workspace_dir, prepared.cancel)
        setup.environment.update(run.environment)
        setup.path_prepend.extend(run.path_prepend)
        setup.mcp_servers.update(run.mcp_servers)
        if run.workdir:
            setup.workdir = run.workdir

        def collect(evidence) -> None:
            commands, mcp, problem = run.finish()
            if run.command_session is not None:
                evidence.command_invocations = commands
            if run.mcp_dir is not None:
                evidence.mcp_invocations = mcp
            if problem and not evidence.error:
                evidence.error = problem
            for reason in run.skipped:  # the agent named the files: prepared.warn escapes them
                prepared.warn(f"task {setup.task.id}: {reason}")

        setup.collect_evidence(collect)
        setup.add_cleanup(run.finish)  # also when the executor raised before collecting

    return prepare


def _any_task_may_hold(prepared, keys: tuple[bytes, ...]) -> bool:
    """Whether any task's document may hold one of ``keys`` (once per run, over every task:
    searched 512 documents at a time, :func:`waza_core.model.tasks_that_may_hold`)."""
    return next(tasks_that_may_hold(list(prepared.by_id.task_specs()), *keys), None) is not None
