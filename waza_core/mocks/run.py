"""One run's outside world: command mocks, MCP mocks, repositories, working directory
and environment, prepared after the workspace is filled and finished after the agent.

:class:`SuiteMocks` is built once per suite run (before the first run, so a bad
repository ref or a missing MCP SDK is a config error, exit 2); :meth:`SuiteMocks.prepare`
gives each run a :class:`RunInputs` whose ``environment``, ``path_prepend``,
``mcp_servers`` and ``workdir`` go into the ``ExecutionRequest``, and whose
:meth:`RunInputs.finish` returns the evidence (``command_invocations``,
``mcp_invocations``) and the ``expect_calls`` verdict.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import attrs

from waza_core.errors import WazaError
from waza_core.mocks import repos as repo_mod
from waza_core.mocks import TASK_PLAN_KEYS
from waza_core.mocks import spec as mock_spec
from waza_core.mocks.command import CommandMockSession, MockRuntime
from waza_core.mocks.records import MCP_FIELDS, read_records
from waza_core.paths import PathEscape, display_path, resolve_inside

MCP_ENTRY = Path(__file__).with_name("_mcp_entry.py")


@attrs.define
class TaskPlan:
    """What a task's runs need, resolved once."""

    command_mocks: tuple[mock_spec.CommandMock, ...] | None = None  # None: none configured
    repos: tuple = ()  # PinnedRepo
    workdir: str | None = None
    environment: dict = attrs.field(factory=dict)


NO_PLAN = TaskPlan()  # a task without mocks, repositories, workdir or environment (never changed)


class SuiteMocks:
    """Per suite run; see the module docstring. ``mocks_active`` is False for executors
    that run no agent (the ``mock`` executor): their runs get no shims, no MCP servers
    and no ``expect_calls`` check, so a waza suite still runs offline under it."""

    def __init__(self, suite, tasks, mocks_active: bool, executor_name: str = "") -> None:
        self.suite = suite
        self.base = Path(suite.file).parent
        self.mocks_active = mocks_active
        self.executor_name = executor_name
        raw = suite.raw or {}
        #: task id -> its plan; a task that uses none of these keys has none (see plan_of)
        self.plans: dict[str, TaskPlan] = {}
        suite_mocks = raw.get("command_mocks")
        for task in tasks:
            if not suite_mocks and not task.may_hold(*TASK_PLAN_KEYS):
                continue  # none of these keys: no plan (and no decoding of the document)
            inputs = task.raw.get("inputs") or {}
            effective = mock_spec.effective_command_mocks(suite_mocks, task.raw)
            if not (effective or inputs.get("repos") or inputs.get("workdir") or inputs.get("environment")):
                continue
            where = f"task {task.id!r} ({display_path(task.filename)})"
            self.plans[task.id] = TaskPlan(
                command_mocks=mock_spec.parse_command_mocks(effective) if effective else None,
                repos=repo_mod.pin(mock_spec.parse_repos(inputs.get("repos")), self.base, where),
                workdir=mock_spec._clean_rel(inputs["workdir"]) if inputs.get("workdir") else None,
                environment={str(k): str(v) for k, v in (inputs.get("environment") or {}).items()},
            )
        self.mcp_configs = self._mcp_configs(raw.get("mcp_mocks") or [])
        self.ignored = [k for k in ("command_mocks", "mcp_mocks")
                        if not mocks_active and (k == "mcp_mocks" and self.mcp_configs or
                                                 k == "command_mocks" and any(p.command_mocks for p in
                                                                              self.plans.values()))]
        if mocks_active and self.mcp_configs:
            # deferred: importlib.util adds ~0.4 ms to importing this module
            import importlib.util

            if importlib.util.find_spec("mcp") is None:
                raise WazaError(f"{display_path(suite.file)}: mcp_mocks need the MCP Python SDK; install it with "
                                "pip install 'waza[mcp]'")

    def _mcp_configs(self, mocks: list) -> list[dict]:
        """Each mock's tools: its ``fixtures`` folder first, inline ``tools`` over them."""
        # deferred: waza_core.suite.mocks adds ~0.5 ms to importing this module
        from waza_core.suite.mocks import load_mcp_fixtures

        out = []
        for i, mock in enumerate(mocks):
            tools: dict = {}
            if mock.get("fixtures"):
                try:
                    tools.update(load_mcp_fixtures(self.base, mock["fixtures"]))
                except ValueError as exc:
                    raise WazaError(f"{display_path(self.suite.file)}: mcp_mocks[{i}].fixtures: {exc}") from None
            tools.update(mock.get("tools") or {})
            out.append({"name": mock["name"].strip(), "tools": tools})
        return out

    def used(self) -> bool:
        """Whether any run has anything to prepare."""
        return bool(self.mcp_configs or any(p.command_mocks is not None or p.repos or p.workdir or p.environment
                                            for p in self.plans.values()))

    def prepare(self, task, workspace: str | None, cancel=None) -> RunInputs:
        """Place the task's repositories, check its workdir, open its mock session."""
        plan = self.plans.get(task.id, NO_PLAN)
        run = RunInputs(environment=dict(plan.environment), workdir=plan.workdir)
        if workspace is None:
            return run
        try:
            repo_mod.materialize(plan.repos, workspace, cancel)
            if plan.workdir:
                _check_workdir(workspace, plan.workdir)
            if not self.mocks_active or (plan.command_mocks is None and not self.mcp_configs):
                return run
            run.runtime = MockRuntime()  # per run: its shims, session and records, removed after it
            if plan.command_mocks is not None:
                session = run.runtime.open_session(workspace, plan.command_mocks, self.base)
                run.command_session = session
                run.environment.update(session.environment())
                run.path_prepend = session.path_prepend
            if self.mcp_configs:
                run.mcp_dir = Path(tempfile.mkdtemp(prefix="run-", dir=run.runtime.mcp_root()))
                run.mcp_servers = _mcp_servers(self.mcp_configs, run.mcp_dir)
        except BaseException:
            run.finish()
            raise
        return run


def _check_workdir(workspace: str, workdir: str) -> None:

    try:
        target = resolve_inside(workspace, workdir)
    except PathEscape as exc:
        raise WazaError(f"inputs.workdir {workdir!r}: {exc}") from None
    if not target.is_dir():
        raise WazaError(f"inputs.workdir {workdir!r} is not a folder of the workspace (create it with inputs.files, "
                        "the context fixture or an inputs.repos dest)")


def _mcp_servers(configs: list[dict], folder: Path) -> dict[str, dict]:
    """Write each server's configuration; the command line an agent starts it with."""
    calls = folder / "calls"
    calls.mkdir(mode=0o700)
    servers = {}
    for i, config in enumerate(configs):
        path = folder / f"server-{i}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(config, fh)
        servers[config["name"]] = {"command": sys.executable,
                                   "args": ["-I", str(MCP_ENTRY), "--config-file", str(path), "--log-dir", str(calls)],
                                   "env": {}}
    return servers


@attrs.define
class RunInputs:
    """What one run hands the executor, and the mock evidence it leaves."""

    environment: dict = attrs.field(factory=dict)
    path_prepend: tuple[str, ...] = ()
    mcp_servers: dict = attrs.field(factory=dict)
    workdir: str | None = None
    runtime: MockRuntime | None = None
    command_session: CommandMockSession | None = None
    mcp_dir: Path | None = None
    finished: bool = False
    #: why call records were skipped (written by the agent's reach: docs/safety.md)
    skipped: list = attrs.field(factory=list)

    def finish(self) -> tuple[list | None, list | None, str | None]:
        """(command_invocations, mcp_invocations, error): ``None`` evidence when no mock of
        that kind was installed; the error is the first ``expect_calls`` mismatch."""
        if self.finished:
            return None, None, None
        self.finished = True
        commands = problem = mcp = None
        if self.command_session is not None:
            commands, problem = self.command_session.close(self.skipped)
        if self.mcp_dir is not None:
            mcp = read_records(self.mcp_dir / "calls", MCP_FIELDS, self.skipped)
            shutil.rmtree(self.mcp_dir, ignore_errors=True)
        if self.runtime is not None:
            self.runtime.close()
        return commands, mcp, problem
