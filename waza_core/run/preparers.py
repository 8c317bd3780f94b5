"""The features that attach to each run: the run preparers (see :mod:`waza_core.run.setup`).

Each entry of :data:`PREPARER_FACTORIES` is called once per prepared suite (in every
process where runs happen) with the :class:`~waza_core.run.prepared.PreparedSuite`
and returns a preparer, or None when the suite does not use the feature. Preparers
run in this order for every attempt of every run, after the workspace is made and
before the executor runs. To add a feature (command mocks, MCP mocks, git worktrees,
hooks), write ``def my_feature(prepared) -> RunPreparer | None`` in its own module
and add one line here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from waza_core.errors import WazaError
from waza_core.mocks.preparer import mocks_and_repos
from waza_core.run.checkpoints import checkpoints
from waza_core.run.hooks import task_hooks
from waza_core.run.prices import price_costs

if TYPE_CHECKING:
    from collections.abc import Callable

    from waza_core.run.prepared import PreparedSuite
    from waza_core.run.setup import RunPreparer, RunSetup


def task_inputs(prepared: PreparedSuite) -> RunPreparer | None:
    """Copy the task's ``inputs.context.fixture`` (a folder's contents, or one file) and write
    its ``inputs.files``."""
    if not any(p.inputs.files or p.inputs.fixture is not None for p in prepared.by_id.kept.values()):  # bare: none
        return None

    def fill_workspace(setup: RunSetup) -> None:
        inputs = setup.prepared.inputs[setup.task.id]
        ws = setup.workspace_dir
        if ws is None or not (inputs.files or inputs.fixture is not None):
            return
        # deferred: shutil (~2 ms with bz2 and lzma) only when a run copies input files, not
        # when `waza validate` prepares the suite
        import shutil

        try:
            if inputs.fixture is not None and inputs.fixture.is_dir():
                shutil.copytree(inputs.fixture, ws, dirs_exist_ok=True, symlinks=True)
                os.chmod(ws, 0o700)  # copytree gave it the fixture's mode: a workspace stays private
            elif inputs.fixture is not None:  # a single file lands at the workspace root
                shutil.copy2(inputs.fixture, os.path.join(ws, inputs.fixture.name))
            for rel, content in inputs.files:
                dest = os.path.join(ws, rel)
                parent = os.path.dirname(dest)
                if parent != ws:
                    os.makedirs(parent, exist_ok=True)
                with open(dest, "w", encoding="utf-8") as fh:
                    fh.write(content)
        except (OSError, shutil.Error) as exc:
            raise WazaError(f"cannot prepare the workspace {ws} of task {setup.task.id!r}: {exc}") from None

    return fill_workspace


#: every per-run feature, in the order its preparer runs; one line per feature
PREPARER_FACTORIES: list[Callable[[PreparedSuite], RunPreparer | None]] = [
    task_hooks,
    task_inputs,
    mocks_and_repos,  # inputs.repos/workdir/environment, command_mocks, mcp_mocks
    checkpoints,
    price_costs,  # usage.cost_usd from a price table when the executor reported tokens but no cost
]


def run_preparers(prepared: PreparedSuite) -> list[RunPreparer]:
    """The preparers of the features this suite uses."""
    found = (make(prepared) for make in PREPARER_FACTORIES)
    return [p for p in found if p is not None]
