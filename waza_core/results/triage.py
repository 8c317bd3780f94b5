"""Failure triage: who is at fault when a run did not pass, and what to do next.

A red result means three very different things: the harness or the agent process could
not run, a grader is broken, or the agent's work was judged and failed. A green one can
mean nothing at all, when the task passes with no agent (``waza run --audit``). Every
run that did not pass, and every pass the audit found vacuous, gets one category,
decided only from what the results already record (docs/triage.md has the table):

==================  ===========================================================
``infrastructure``  status ``error`` with no grader error: the executor failed or
                    timed out, the agent could not start, a ``before_task`` hook
                    failed (a task with no runs), a worker was lost; also a grader
                    stopped because the run was interrupted (kind ``cancelled``)
``grader_defect``   a grader could not judge (``validations[].error``: exception,
                    timeout, start_failed, schema_file, ...): the agent was not judged
``agent_failure``   status ``failed``: every grader judged and one said no; or a
                    checkpoint with ``on_failure: stop`` failed (its graders judged)
``vacuous``         status ``passed``, but the task passes with no agent (the audit)
==================  ===========================================================

Runs that were not graded (``n/a``: ``--skip-graders``, skipped for budget) have no
category: they are counted as skipped, not as failures.

The category is written as ``runs[].triage = {"category", "reason"}`` (and
``tasks[].triage`` for a task that has no runs), the counts as ``summary.triage``; both
only when there is something to say, so a green run's file is unchanged. Reports read
the stored field and work it out the same way for files that have none (waza (Go),
older files).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

INFRASTRUCTURE = "infrastructure"
GRADER_DEFECT = "grader_defect"
AGENT_FAILURE = "agent_failure"
VACUOUS = "vacuous"
#: in the order reports list them: what blocks a verdict first
CATEGORIES = (INFRASTRUCTURE, GRADER_DEFECT, AGENT_FAILURE, VACUOUS)

TITLES = {
    INFRASTRUCTURE: "infrastructure",
    GRADER_DEFECT: "grader defect",
    AGENT_FAILURE: "agent failure",
    VACUOUS: "vacuous pass",
}

NEXT_ACTION = {
    INFRASTRUCTURE: "fix the harness, executor, hook or time limit and run again; the agent was not judged",
    GRADER_DEFECT: "fix the grader; the agent was not judged",
    AGENT_FAILURE: "read the agent's work and the failing graders: fix the skill or prompt "
                   "(or the task, if its expectation is wrong)",
    VACUOUS: "add a check that only the agent's work can satisfy: the task passes with no agent at all",
}

#: grader error kinds that say the run was interrupted, not that the grader is broken
INTERRUPTED_KINDS = frozenset({"cancelled"})
#: at most this many characters of a reason
REASON_LIMIT = 500


def _clip(text: str) -> str:
    """One line (a reason is shown on one line of every report), at most REASON_LIMIT characters."""
    text = _one_line(text)
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT - 3] + "..."


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n") if "\n" in text or "\r" in text else text


def decide(status: Any, error_msg: Any, grader_errors: list[tuple[str, str, str]],
           failed_graders: list[str], vacuous: bool, stopped_at: Any = None) -> dict[str, str] | None:
    """The category and a one-line reason of one run, or None (a real pass, not graded).

    ``grader_errors``: (grader name, error kind, message) of each grader that could not
    judge; ``failed_graders``: the names of the graders that judged and said no;
    ``stopped_at``: the checkpoint entry (``runs[].checkpoints[]``) that stopped the
    conversation (``on_failure: stop``), whose graders then decide instead."""
    if status == "passed":
        return {"category": VACUOUS, "reason": "the task passes with no agent (waza run --audit)"} if vacuous else None
    if status not in ("failed", "error"):
        return None  # n/a, skipped: not graded, counted as skipped
    if isinstance(stopped_at, dict) and not grader_errors and status == "error":
        errors, failed = _graders_of(stopped_at.get("validations"))
        where = f"checkpoint after_turn={stopped_at.get('after_turn')}"
        found = decide("failed" if not errors else "error", None, errors, failed, False)
        if found is not None and found["category"] != INFRASTRUCTURE:
            return {"category": found["category"], "reason": _clip(f"{where}: {found['reason']}")}
    broken = [e for e in grader_errors if e[1] not in INTERRUPTED_KINDS]
    if broken:
        name, kind, message = broken[0]
        more = f" (and {len(broken) - 1} more grader error(s))" if len(broken) > 1 else ""
        return {"category": GRADER_DEFECT, "reason": _clip(f"grader {name!r} ({kind}): {message}{more}")}
    if status == "error" or grader_errors:
        if error_msg:
            why = str(error_msg)
        elif grader_errors:
            why = "the run was interrupted while it was graded"
        else:
            why = "the run did not complete"
        return {"category": INFRASTRUCTURE, "reason": _clip(why)}
    shown = ", ".join(repr(n) for n in failed_graders[:5]) + (", ..." if len(failed_graders) > 5 else "")
    return {"category": AGENT_FAILURE,
            "reason": _clip(f"graded and failed: {shown}" if shown else "graded and failed")}


def _graders_of(validations: Any) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(grader errors, failed grader names) of a ``validations`` object as JSON."""
    errors, failed = [], []
    for name, v in (validations.items() if isinstance(validations, dict) else ()):
        if not isinstance(v, dict):
            continue
        err = v.get("error")
        if isinstance(err, dict):
            errors.append((str(name), str(err.get("kind", "")), str(err.get("message", ""))))
        elif v.get("passed") is not True:
            failed.append(str(name))
    return errors, failed


def _stopped_checkpoint(checkpoints: Any) -> dict | None:
    if isinstance(checkpoints, list):
        return next((c for c in checkpoints if isinstance(c, dict) and c.get("stopped")), None)
    return None


def of_run(run, vacuous: bool = False) -> dict[str, str] | None:
    """:func:`decide` for a typed :class:`~waza_core.results.model.RunResult`."""
    errors, failed = [], []
    for name, v in run.validations.items():
        if v.error:
            errors.append((name, str(v.error.get("kind", "")), str(v.error.get("message", ""))))
        elif not v.passed:
            failed.append(name)
    return decide(run.status, run.error_msg, errors, failed, vacuous, _stopped_checkpoint(run.extra.get("checkpoints")))


def of_run_json(run: Mapping[str, Any], vacuous: bool = False) -> dict[str, str] | None:
    """The category of a run as a results file has it: its ``triage`` field when written,
    else worked out as :func:`decide` does (files of waza (Go), older files)."""
    stored = run.get("triage")
    if isinstance(stored, dict) and stored.get("category") in CATEGORIES:
        return stored
    errors, failed = _graders_of(run.get("validations"))
    return decide(run.get("status"), run.get("error_msg"), errors, failed, vacuous,
                  _stopped_checkpoint(run.get("checkpoints")))


def of_runless_task(status: Any, error_msg: Any) -> dict[str, str] | None:
    """A task that did not pass and has no runs: its ``before_task`` hook failed (or no
    run could be made), so the harness is at fault."""
    if status not in ("failed", "error"):
        return None
    return {"category": INFRASTRUCTURE, "reason": _clip(str(error_msg or "the task has no runs"))}


def annotate_task(entry, vacuous: bool = False) -> list[str]:
    """Write the category of every run of a finished :class:`TaskResult` (``runs[].triage``;
    ``triage`` of the task when it has no runs), replacing an older one; the categories."""
    if not entry.runs:
        found = of_runless_task(entry.status, entry.extra.get("error_msg"))
        _put(entry.extra, found)
        return [found["category"]] if found else []
    out = []
    for run in entry.runs:
        if run.status == "passed" and not vacuous:  # the common case, at no cost (100,000-task runs)
            if "triage" in run.extra:
                del run.extra["triage"]
            continue
        found = of_run(run, vacuous)
        _put(run.extra, found)
        if found:
            out.append(found["category"])
    return out


def _put(extra: dict, found: dict[str, str] | None) -> None:
    if found is None:
        extra.pop("triage", None)
    else:
        extra["triage"] = found


def put_counts(summary, counts: Mapping[str, int]) -> None:
    """``summary.triage``: runs per category (every category named), only when one is not 0."""
    if summary is None:
        return
    if any(counts.get(c) for c in CATEGORIES):
        summary.extra["triage"] = {c: int(counts.get(c, 0)) for c in CATEGORIES}
    else:
        summary.extra.pop("triage", None)


def vacuous_task_ids(audit: Any) -> frozenset[str]:
    """The ``vacuous_tasks`` of a results file's ``audit`` field (none when absent)."""
    if isinstance(audit, dict) and isinstance(audit.get("vacuous_tasks"), list):
        return frozenset(str(t) for t in audit["vacuous_tasks"])
    return frozenset()


def annotate_document(doc) -> None:
    """The categories and counts of a whole :class:`ResultsDocument` (``waza grade``)."""
    vacuous = vacuous_task_ids(doc.extra.get("audit"))
    counts: Counter[str] = Counter()
    for task in doc.tasks:
        counts.update(annotate_task(task, task.test_id in vacuous))
    put_counts(doc.summary, counts)


# -- reading: what every report shows ------------------------------------------------------

class Tally:
    """Runs per category and the tasks of each, gathered while a report reads the tasks
    one by one (``watch``), so a streamed file is read once."""

    #: task ids kept per category (the rest are counted)
    KEEP = 20

    def __init__(self, vacuous: Iterable[str] = ()) -> None:
        self.vacuous = frozenset(vacuous)
        self.runs: Counter[str] = Counter()
        self.tasks: dict[str, list[tuple[str, str]]] = {c: [] for c in CATEGORIES}
        self.task_counts: Counter[str] = Counter()

    def add(self, task: Mapping[str, Any]) -> None:
        tid = str(task.get("test_id", ""))
        runs = task.get("runs") if isinstance(task.get("runs"), list) else []
        found: list[dict[str, str]] = []
        if not runs:
            stored = task.get("triage")
            one = stored if isinstance(stored, dict) and stored.get("category") in CATEGORIES \
                else of_runless_task(task.get("status"), task.get("error_msg"))
            if one:
                found.append(one)
        for run in runs:
            if isinstance(run, dict):
                one = of_run_json(run, tid in self.vacuous)
                if one:
                    found.append(one)
        seen: set[str] = set()
        for one in found:
            cat = one["category"]
            self.runs[cat] += 1
            if cat not in seen:
                seen.add(cat)
                self.task_counts[cat] += 1
                if len(self.tasks[cat]) < self.KEEP:
                    self.tasks[cat].append((tid, str(one.get("reason", ""))))

    def watch(self, tasks: Iterable[Mapping[str, Any]]):
        for task in tasks:
            self.add(task)
            yield task

    def __bool__(self) -> bool:
        return any(self.runs.values())

    def groups(self) -> list[dict[str, Any]]:
        """One entry per category that has runs, in :data:`CATEGORIES` order:
        ``{category, title, action, runs, tasks, shown: [(task id, reason)]}``."""
        return [{"category": c, "title": TITLES[c], "action": NEXT_ACTION[c], "runs": self.runs[c],
                 "tasks": self.task_counts[c], "shown": list(self.tasks[c])}
                for c in CATEGORIES if self.runs[c]]


def new_tally(audit: Any = None) -> Tally:
    """An empty :class:`Tally`; ``audit`` is a results file's ``audit`` field (or None)."""
    return Tally(vacuous_task_ids(audit))


def tally_of(tasks: Iterable[Mapping[str, Any]], audit: Any = None) -> Tally:
    tally = Tally(vacuous_task_ids(audit))
    for task in tasks:
        tally.add(task)
    return tally


def console_block(counts: Mapping[str, Any] | None, shown: Iterable[Mapping[str, Any]], audit: Any = None,
                  verbose: bool = False) -> str:
    """The console summary's FAILURE TRIAGE block and the audit's findings, or ''.

    ``counts``: ``summary.triage`` (every run counted, also when the tasks were streamed
    to disk); ``shown``: the task entries (JSON) the summary lists, whose categories and
    reasons are printed under their group; with ``verbose`` the tracebacks of graders
    that raised follow."""
    shown = [t for t in shown if t.get("test_id")]  # not the summary's count-only stubs
    tally = tally_of(shown, audit)
    counts = counts if isinstance(counts, Mapping) else tally.runs
    vacuous = sorted(vacuous_task_ids(audit))
    lines: list[str] = []
    for c in CATEGORIES:
        runs = counts.get(c) or 0
        if not runs:
            continue
        if not lines:
            lines += ["", "FAILURE TRIAGE (what failed, and what to do next)"]
        lines.append(f"  {TITLES[c]}: {runs} run(s); next: {NEXT_ACTION[c]}")
        listed = tally.tasks[c] or [(t, "passes with no agent") for t in vacuous if c == VACUOUS]
        for tid, reason in listed[:10]:
            lines.append(f"    - {_one_line(tid)}: {_one_line(reason)}")
        if tally.runs[c] < runs and c != VACUOUS:
            lines.append("    ... more in the results file")
    if verbose:
        lines += traceback_lines(shown)
    lines += audit_lines(audit)
    return "\n".join(lines) + "\n" if lines else ""


#: tracebacks printed by ``-v``, at most
TRACEBACKS_SHOWN = 5


def traceback_lines(tasks: Iterable[Mapping[str, Any]]) -> list[str]:
    """The tracebacks kept in grader details (a grader that raised), for ``-v``."""
    out: list[str] = []
    count = 0
    for task in tasks:
        for run in task.get("runs") or ():
            for name, v in ((run.get("validations") or {}).items() if isinstance(run, dict) else ()):
                trace = (v.get("details") or {}).get("traceback") if isinstance(v, dict) else None
                if not isinstance(trace, str) or not trace:
                    continue
                count += 1
                if count > TRACEBACKS_SHOWN:
                    continue
                out += ["", f"TRACEBACK of grader {name!r} (task {task.get('test_id')}, run {run.get('run_number')})"]
                out += ["    " + line for line in trace.rstrip("\n").split("\n")]
    if count > TRACEBACKS_SHOWN:
        out.append(f"... and {count - TRACEBACKS_SHOWN} more traceback(s) in the results file "
                   "(runs[].validations[].details.traceback)")
    return out


def audit_lines(audit: Any) -> list[str]:
    """The audit's findings (``waza run --audit``) for the console, or none."""
    if not isinstance(audit, dict):
        return []
    tasks = [str(t) for t in audit.get("vacuous_tasks") or []]
    graders = [g for g in audit.get("vacuous_graders") or [] if isinstance(g, dict)]
    lines = ["", f"AUDIT (do-nothing agent, {audit.get('tasks_audited', 0)} task(s))"]
    if tasks:
        lines.append(f"  vacuous tasks ({len(tasks)}): pass with no agent: " + ", ".join(tasks[:20])
                     + (", ..." if len(tasks) > 20 else ""))
    else:
        lines.append("  no task passes with no agent")
    if graders:
        shown = ", ".join(f"{g.get('task_id')}/{g.get('grader')}" for g in graders[:20])
        lines.append(f"  vacuous graders ({len(graders)}): pass with no agent: {shown}"
                     + (", ..." if len(graders) > 20 else ""))
    not_audited = [g for g in audit.get("not_audited") or [] if isinstance(g, dict)]
    if not_audited:
        lines.append(f"  not audited ({len(not_audited)}): prompt graders (no judge is called)")
    return lines
