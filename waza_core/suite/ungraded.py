"""Nothing checked is never a pass: a task that nothing grades is a load error.

waza (Go) runs a task with no grader and reports it ``passed`` (score 0.00): a suite with a
misspelt ``graders`` key, or one whose ``expected`` holds only keys that are never scored
(``outcomes``, ``behavior``, ...), goes green whatever the agent does. Here such a task
refuses to load (``waza validate``/``run``/``grade``/``audit`` exit 2, naming the task and
its ``file:line``) unless the suite says it wants it: ``allow_ungraded: true`` at the top
of ``eval.yaml`` (every task) or in the task file (that task).

What grades a task:

* a global grader of ``eval.yaml`` (it grades every task, as in waza's example suites);
* a task grader, or a scored ``expected`` check (``output_contains``,
  ``output_not_contains``, ``output_contains_any``: they become graders at load);
* a checkpoint with ``on_failure: stop``: its failure ends the run as ``error``. A
  ``continue`` checkpoint only records its result (the final graders alone decide), so it
  does not count.

Disabled tasks (``enabled: false``) never run and are not checked.
"""

from __future__ import annotations

from pathlib import Path

from waza_core.model import GraderSpec, TaskSpec
from waza_core.paths import display_path
from waza_core.suite.problems import Problems

#: the opt-out key, at the top of eval.yaml or in a task file
OPT_OUT_KEY = "allow_ungraded"
#: at most this many ungraded tasks are named one by one; the rest are counted
MAX_NAMED = 20

_FIX = (f"add graders: (or expected.output_contains) so a run can fail, or set {OPT_OUT_KEY}: true in the task "
        "file (or at the top of eval.yaml) if a run without a verdict is what you want")


def graded(task: TaskSpec) -> bool:
    """Whether something can fail ``task``'s runs besides the eval's global graders."""
    if task.graders:
        return True
    return any(cp.on_failure == "stop" and cp.graders for cp in task.checkpoints)


def check(eval_file: Path, data: dict, global_graders: list[GraderSpec], tasks: list[TaskSpec],
          problems: Problems) -> None:
    """Add a load error for each enabled task that nothing grades (see the module doc)."""
    if global_graders or data.get(OPT_OUT_KEY) is True:
        return
    if isinstance(data.get("tasks_from"), str) and tasks:
        problems.add(eval_file, f"no grader: the {len(tasks)} task(s) of tasks_from are graded only by the "
                     f"eval's graders, and it has none, so every run would pass; add graders: to eval.yaml, or "
                     f"set {OPT_OUT_KEY}: true at its top if a run without a verdict is what you want",
                     None, (), "tasks_from")
        return
    bare = [t for t in tasks if t.enabled and not graded(t) and _raw_get(t, OPT_OUT_KEY) is not True]
    for t in bare[:MAX_NAMED]:
        problems.add(t.file, f"task {t.id!r} has no grader and no scored expected check{_unscored_note(t)}, so it "
                     f"would pass whatever the agent does; {_FIX}", None, ("id",))
    if len(bare) > MAX_NAMED:
        problems.add(eval_file, f"... and {len(bare) - MAX_NAMED} more task(s) without a grader "
                     f"(first unnamed: {display_path(bare[MAX_NAMED].file)})")


def _raw_get(task: TaskSpec, key: str):
    raw = task.raw
    return raw.get(key) if isinstance(raw, dict) else None


def _unscored_note(task: TaskSpec) -> str:
    """Why an ``expected`` block or checkpoints did not count, when the task has them."""
    notes = []
    expected = _raw_get(task, "expected")
    if isinstance(expected, dict) and expected:
        keys = ", ".join(sorted(k for k in expected if expected[k] is not None))
        notes.append(f"expected ({keys}) is not scored: only output_contains, output_not_contains and "
                     "output_contains_any are")
    if task.checkpoints:
        notes.append("its checkpoints use on_failure: continue, which only records a result")
    return f" ({'; '.join(notes)})" if notes else ""
