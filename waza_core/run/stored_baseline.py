"""``waza run --baseline-from RESULTS.json``: an A/B run that reuses a stored baseline pass.

An A/B run (:mod:`waza_core.run.baseline`) pays for the suite twice, with and without its
skills. While a skill is being improved, the "without" side does not change from one
iteration to the next, so paying for it every time buys nothing (WordPress/wp-bench#50).
``--baseline-from`` runs only the with-skills pass and compares it with a stored file:

* the baseline side is the stored file's ``baseline_outcome`` when it is itself an A/B run
  (its without-skills pass), else the whole file;
* the results file is the one of an A/B run (``is_baseline``, ``baseline_outcome``, per
  task ``skill_impact``: waza's fields), plus ``baseline_from``: which file the baseline
  came from (path as given, sha256, run id and time, which part of it), how many tasks were
  compared, and the warnings below;
* tasks in only one side are no evidence: they get no ``skill_impact``, and the exit code
  (waza's rule: 1 unless the skills raised the success rate) compares the success rates of
  the tasks both sides ran.

Refused before anything runs (exit 2), because the comparison would mean nothing: a file
of another suite (its ``eval_name`` differs), no task in common with this run, or no
graded run of those tasks in the file (it ran with ``--skip-graders``). A different
model, executor or number of trials is a warning, not a refusal: the paired test compares
each task's pass rate, which stays comparable across trial counts, and a deliberate
comparison with another model is legitimate; but the difference is then not the skills'
alone, and the warning (kept in ``baseline_from.warnings``) says so. Graders that differ
on a compared task are warned about after the run for the same reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.results.io import read_bytes
from waza_core.results.load import document_from_bytes
from waza_core.results.model import ResultsDocument
from waza_core.results.reading import OPTIMIZER_REPORT_KIND, decode, normalize, task_pass_rate
from waza_core.results.significance import task_counts
from waza_core.run import baseline

#: which part of the stored file is the baseline side
FROM_AB_RUN, FROM_DOCUMENT = "baseline_outcome", "document"


@attrs.define
class StoredBaseline:
    """The baseline side of ``--baseline-from``, read once before the run."""

    path: str
    document: dict[str, Any]
    part: str
    sha256: str
    eval_id: Any = None
    timestamp: Any = None
    #: test_id -> (passed runs, graded runs) of the baseline side
    counts: dict[str, tuple[int, int]] = attrs.field(factory=dict)
    #: what :func:`check_suite` warned about (every model's run repeats them in its file)
    warnings: list[str] = attrs.field(factory=list)


def load(path: Path) -> StoredBaseline:
    """Read ``path`` (any results file waza reads); its baseline side. Exit 2 on a file that
    is not a results file."""
    where = f"--baseline-from {path}"
    data = read_bytes(path)
    doc = document_from_bytes(data, path)
    if doc.get("kind") == OPTIMIZER_REPORT_KIND:
        raise WazaError(f"{where}: a `waza optimize` report, not a results file")
    part, base = FROM_DOCUMENT, doc
    if doc.get("is_baseline") and isinstance(doc.get("baseline_outcome"), dict):
        part = FROM_AB_RUN
        base = normalize(decode(dict(doc["baseline_outcome"]), f"{path}: baseline_outcome"),
                         f"{path}: baseline_outcome")
    return StoredBaseline(path=str(path), document=base, part=part, sha256=hashlib.sha256(data).hexdigest(),
                          eval_id=doc.get("eval_id"), timestamp=doc.get("timestamp"), counts=task_counts(base))


def check_suite(stored: StoredBaseline, suite_name: str, warn: Callable[[str], None]) -> None:
    """Refuse a file of another suite (before anything runs)."""
    name = stored.document.get("eval_name") or ""
    if stored.document.get("incomplete"):
        _warn(stored.warnings, warn, f"--baseline-from {stored.path}: the stored run is incomplete; only its "
                                     "finished tasks are compared")
    if not name:
        _warn(stored.warnings, warn, f"--baseline-from {stored.path} names no suite (no eval_name); "
                            f"taking it as a run of {suite_name!r}")
    elif name != suite_name:
        raise WazaError(f"--baseline-from {stored.path}: it is a run of suite {name!r}, not of {suite_name!r}; "
                        "a skill-impact comparison across suites means nothing (to set two runs side by side, "
                        "use `waza compare`)")


def check_tasks(stored: StoredBaseline, ids: list[str]) -> None:
    """Refuse (exit 2) when none of the tasks this run selected (``ids``) has a graded run in
    the stored side: checked once the suite is loaded, before anything runs."""
    if any(i in stored.counts for i in ids):
        return
    stored_ids = {str(t.get("test_id")) for t in stored.document.get("tasks") or ()}
    if any(i in stored_ids for i in ids):
        raise WazaError(f"--baseline-from {stored.path}: no run of the tasks this run runs was graded there "
                        "(was it run with --skip-graders? grade it with `waza grade` first)")
    raise WazaError(f"--baseline-from {stored.path}: no task in common with this run (this run: "
                    f"{_some(ids)}; the file: {_some(sorted(stored_ids))}); nothing could be compared")


def check_plan(stored: StoredBaseline, plan, warn: Callable[[str], None]) -> list[str]:
    """Before a model's run: the settings that make the difference not the skills' alone, and
    how many tasks will be compared (warnings, also returned)."""
    warnings: list[str] = []
    ids = [t.id for t in plan.tasks]
    check_tasks(stored, ids)
    common = [i for i in ids if i in stored.counts]
    config = stored.document.get("config") or {}
    for label, theirs, ours in (("model", config.get("model_id"), plan.model),
                                ("executor", config.get("engine_type"), plan.executor_name),
                                ("trials per task", config.get("runs_per_test"), plan.trials)):
        if theirs not in (None, "") and theirs != ours:
            _warn(warnings, warn, f"--baseline-from {stored.path}: its {label} is {theirs!r}, this run's is {ours!r}: "
                                  "the difference is then not the skills' alone")
    only_here, only_there = len(ids) - len(common), len(stored.counts) - len(common)
    if only_here or only_there:
        _warn(warnings, warn, f"--baseline-from {stored.path}: comparing {len(common)} task(s); {only_here} only "
                              f"in this run and {only_there} only in the file are no evidence and are left out")
    return warnings


def merge(with_skills: ResultsDocument, stored: StoredBaseline, warnings: list[str],
          warn: Callable[[str], None]) -> ResultsDocument:
    """The with-skills document as an A/B result against the stored baseline side;
    ``warnings``: those :func:`check_plan` gave for this run."""
    warnings = [*stored.warnings, *warnings]
    by_id = {str(t.get("test_id")): t for t in stored.document.get("tasks") or ()}
    compared, passed_here, passed_there, graders_differ = 0, 0, 0, []
    for task in with_skills.tasks:
        other = by_id.get(task.test_id)
        if other is None or task.test_id not in stored.counts:
            continue
        compared += 1
        passed_here += task.status == "passed"
        passed_there += other.get("status") == "passed"
        task.extra["skill_impact"] = baseline.impact_of(baseline.pass_rate(task), task_pass_rate(other) or 0.0)
        here, there = _grader_names(task), _stored_grader_names(other)
        if here and there and here != there:
            graders_differ.append(task.test_id)
    if graders_differ:
        _warn(warnings, warn, f"--baseline-from {stored.path}: {len(graders_differ)} compared task(s) were graded by "
                            f"other graders there (first: {graders_differ[0]!r}); their pass rates measure "
                            "different things")
    with_skills.extra["is_baseline"] = True
    with_skills.extra["baseline_outcome"] = stored.document
    with_skills.extra["baseline_from"] = {
        "file": stored.path, "sha256": stored.sha256, "part": stored.part,
        "eval_id": stored.eval_id, "timestamp": stored.timestamp,
        "tasks_compared": compared,
        "tasks_only_in_run": sum(1 for t in with_skills.tasks if t.test_id not in stored.counts),
        "tasks_only_in_file": sum(1 for tid in stored.counts if tid not in {t.test_id for t in with_skills.tasks}),
        "compared_success_rate": passed_here / compared if compared else 0.0,
        "compared_baseline_success_rate": passed_there / compared if compared else 0.0,
        "warnings": warnings,
    }
    with_skills.extra["skill_impact_significance"] = baseline.impact_significance(with_skills, stored.document)
    return with_skills


def _grader_names(task) -> frozenset[str]:
    return frozenset(name for run in task.runs for name in (run.validations or {}))


def _stored_grader_names(task: dict[str, Any]) -> frozenset[str]:
    return frozenset(name for run in task.get("runs") or () for name in (run.get("validations") or {}))


def _warn(into: list[str], warn: Callable[[str], None], message: str) -> None:
    into.append(message)
    warn(message)


def _some(ids: list[str], shown: int = 5) -> str:
    if not ids:
        return "no task"
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(repr(i) for i in ids[:shown]) + more
