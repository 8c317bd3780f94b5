"""Lifecycle hooks: commands run before and after the suite run and each task.

``hooks`` in eval.yaml, as in waza (Go) ``internal/hooks/hooks.go``::

    hooks:
      before_run:  [{command: "./setup.sh", working_directory: scripts, exit_codes: [0, 3], error_on_fail: true}]
      after_run:   [...]
      before_task: [...]
      after_task:  [...]

* ``command`` is split on white space and run directly, **without a shell** (pipes,
  ``&&``, quotes and ``$VAR`` do not work; write a script for those);
  ``working_directory`` is its working directory (a relative one is relative to
  where waza runs, as in waza Go); the hooks of one point run in order.
* An exit code outside ``exit_codes`` (default ``[0]``), a command that cannot start,
  or a hook that runs longer than ``config.timeout_seconds`` (its whole process group
  is then killed; waza (Go) has no limit) is a failure: with ``error_on_fail`` an
  error, otherwise a warning and the run goes on. The hooks after a failed one at the
  same point still run when it only warned, and do not when it was an error.
* ``before_run`` failing with ``error_on_fail`` stops the suite run (exit 2);
  ``after_run`` runs even then, and its failures only warn.
* ``before_task`` runs once per task, before its first run (concurrent trials wait for
  it). Failing with ``error_on_fail`` records the task as ``failed`` with no runs and
  no statistics, and the suite run goes on. ``after_task`` runs once the task's last
  run finished; its failures only warn.
* In an A/B run (``baseline``) the hooks run for each of the two passes, and in a
  multi-model run for each model, as in waza (Go).
* A hook's environment is waza's whole environment, or only the baseline and the names
  ``hooks.env`` in ``.waza.yaml`` allows (:mod:`waza_core.childenv`), read once when
  the hooks are set up (a bad value is an error before anything runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from waza_core.model import Suite
    from waza_core.run.prepared import PreparedSuite
    from waza_core.run.setup import RunPreparer, RunSetup

POINTS = ("before_run", "after_run", "before_task", "after_task")
#: bytes of a hook's output kept for a failure message
OUTPUT_TAIL = 2000
#: ``extra`` marker of a run whose task's before_task hook failed
HOOK_FAILED = "_before_task_failed"


@attrs.frozen
class Hook:
    point: str
    index: int
    command: str
    working_directory: str | None = None
    exit_codes: tuple[int, ...] = ()
    error_on_fail: bool = False

    @property
    def label(self) -> str:
        return f"hook {self.point}[{self.index}]"


class Hooks:
    """The hooks of one suite, run with a time limit and cancellation."""

    def __init__(self, suite: Suite, cancel=None, warn: Callable[[str], None] | None = None) -> None:
        raw = suite.hooks if isinstance(suite.hooks, dict) else {}
        suite_dir = str(suite.file.parent.absolute())
        self.by_point: dict[str, list[Hook]] = {
            point: [Hook(point, i, _expand(h["command"], suite_dir), _expand(h.get("working_directory"), suite_dir),
                         tuple(h.get("exit_codes") or ()), bool(h.get("error_on_fail", False)))
                    for i, h in enumerate(raw.get(point) or ())]
            for point in POINTS}
        self.timeout = float(suite.config.timeout_seconds)
        self.env = hook_environment() if any(self.by_point.values()) else {}
        self.cancel = cancel
        self.warn = warn or (lambda message: None)

    def __bool__(self) -> bool:
        return any(self.by_point.values())

    def has(self, point: str) -> bool:
        return bool(self.by_point[point])

    def run(self, point: str, subject: str = "") -> str | None:
        """Run every hook of ``point`` in order; the error of the first ``error_on_fail``
        hook that failed (the rest are skipped), or None. Plain failures only warn."""
        for hook in self.by_point[point]:
            problem = run_hook(hook, self.timeout, self.cancel, self.env)
            if problem is None:
                continue
            if hook.error_on_fail:
                return problem
            self.warn(f"{problem} (continuing{f'; {subject}' if subject else ''})")
        return None


def _expand(text: str | None, suite_dir: str) -> str | None:
    """``{suite_dir}`` (the folder of eval.yaml) replaced, so a hook script beside the suite
    is found whatever folder waza runs from; an empty value is None."""
    return text.replace("{suite_dir}", suite_dir) if text else None


def hook_environment() -> dict[str, str]:
    """What a hook sees: waza's environment, narrowed by ``.waza.yaml`` ``hooks.env``."""
    # deferred: waza_core.childenv adds ~0.6 ms to importing this module
    from waza_core.childenv import child_environment, project_allow_list

    return child_environment(project_allow_list("hooks"))


def run_hook(hook: Hook, timeout: float, cancel=None, env: dict[str, str] | None = None) -> str | None:
    """Run one hook; a message saying why it failed, or None when it succeeded."""
    # deferred: waza_core.procs adds ~6.6 ms to importing this module
    from waza_core.procs import ProcessStartError, run

    argv = hook.command.split()
    if not argv:
        return f"{hook.label}: empty command"
    cwd = hook.working_directory
    try:
        result = run(argv, cwd=cwd, env=hook_environment() if env is None else env, timeout=timeout,
                     max_stdout=OUTPUT_TAIL, max_stderr=OUTPUT_TAIL, stderr_tail=True, cancel=cancel)
    except ProcessStartError as exc:
        return f"{hook.label}: {exc}"
    output = (result.stdout_text() + result.stderr_text()).strip()
    tail = f": {output[-500:]}" if output else ""
    if result.timed_out:
        return f"{hook.label}: {hook.command!r} timed out after {timeout:g}s (its process group was killed){tail}"
    if result.cancelled:
        return f"{hook.label}: {hook.command!r} was cancelled"
    allowed = hook.exit_codes or (0,)
    if result.returncode not in allowed:
        want = "" if not hook.exit_codes else f" (expected {list(hook.exit_codes)})"
        return f"{hook.label}: {hook.command!r} exited with code {result.returncode}{want}{tail}"
    return None


def task_hooks(prepared: PreparedSuite) -> RunPreparer | None:
    """The preparer that runs ``before_task`` once per task, before its first run."""
    hooks: Hooks | None = getattr(prepared, "hooks", None)
    if hooks is None:
        hooks = prepared.hooks = Hooks(prepared.suite, prepared.cancel)
    if not hooks.has("before_task"):
        return None
    lock = threading.Lock()
    locks: dict[str, threading.Lock] = {}
    outcome: dict[str, str | None] = {}

    def before_task(setup: RunSetup) -> None:
        tid = setup.task.id
        with lock:
            task_lock = locks.setdefault(tid, threading.Lock())
        with task_lock:  # the other trials of the task wait for its hook
            if tid not in outcome:
                outcome[tid] = hooks.run("before_task", f"task {tid!r}")
        if outcome[tid] is not None:
            setup.abort = f"before_task hook failed: {outcome[tid]}"
            setup.result_fields[HOOK_FAILED] = True

    return before_task
