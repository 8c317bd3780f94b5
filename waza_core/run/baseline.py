"""A/B runs (``baseline: true`` or ``waza run --baseline``): the suite with and without skills.

As in waza (Go) ``runBaselineComparison``:

* a suite without ``config.skill_directories`` and without ``config.required_skills``
  has nothing to take away: a warning, and one ordinary run;
* otherwise the suite runs twice with the same model and options: first as written,
  then with no skill folders at all (``config.skill_directories`` and every task's
  ``skill_directories`` become empty) and no ``required_skills`` check;
* the result is the first run's document plus ``is_baseline: true``,
  ``baseline_outcome`` (the whole second document) and, per task, ``skill_impact``
  ``{pass_rate_with_skills, pass_rate_baseline, delta, percent_change}`` where
  ``percent_change = delta / max(pass_rate_baseline, 0.01) * 100``;
* the two runs must cover the same tasks (an error otherwise);
* ``waza run`` exits 1 when the skills did not raise the suite's success rate
  (``success_rate <= baseline's``), 0 when they did, whatever the task verdicts.

Beyond waza (Go): ``skill_impact_significance``, the paired, task-clustered test of
:mod:`waza_core.results.significance` (the one of ``waza gate --significance`` and ``waza
compare``), with-skills against without, at :data:`ALPHA`: the mean per-task change, its
interval and "significant improvement" / "within noise" / ... in words. It informs; the
exit code stays waza's rule. ``waza run --baseline-from FILE`` (:mod:`waza_core.run.stored_baseline`)
takes the without-skills side from a stored file instead of running it.

Difference from waza (Go), a fix: waza (Go) clears only the suite-level skill folders,
so a task with its own ``skill_directories`` kept its skills in the "without" run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.model import Suite
from waza_core.results import significance as paired
from waza_core.results.model import ResultsDocument, TaskResult

#: the level of the A/B significance verdict (as ``waza compare``'s)
ALPHA = 0.05


def has_skills(suite: Suite) -> bool:
    return bool(suite.config.skill_directories or suite.config.required_skills)


def without_skills(suite: Suite) -> Suite:
    """The suite of the second pass: no skill folders, no required skills."""
    return attrs.evolve(suite, config=attrs.evolve(suite.config, skill_directories=(), required_skills=()))


def pass_rate(task: TaskResult) -> float:
    """waza (Go) ``computePassRate``: the task's pass rate, else passed runs / runs."""
    if task.stats is not None:
        return float(task.stats.get("pass_rate", 0.0))
    if not task.runs:
        return 0.0
    return sum(1 for r in task.runs if r.status == "passed") / len(task.runs)


def skill_impact(with_task: TaskResult, without_task: TaskResult) -> dict[str, float]:
    return impact_of(pass_rate(with_task), pass_rate(without_task))


def impact_of(with_rate: float, base_rate: float) -> dict[str, float]:
    """waza (Go) ``SkillImpactMetric`` of one task from its two pass rates."""
    delta = with_rate - base_rate
    return {"pass_rate_with_skills": with_rate, "pass_rate_baseline": base_rate, "delta": delta,
            "percent_change": delta / max(base_rate, 0.01) * 100.0}


def merge(with_skills: ResultsDocument, without: ResultsDocument) -> ResultsDocument:
    """The with-skills document carrying the baseline run and each task's skill impact."""
    # deferred: waza_core.results.codec adds ~17.0 ms to importing this module
    from waza_core.results.codec import results_to_json

    by_id = {t.test_id: t for t in without.tasks}
    for task in with_skills.tasks:
        other = by_id.get(task.test_id)
        if other is None:
            raise WazaError(f"baseline mismatch: task {task.test_id!r} present in skills-enabled but not baseline")
        task.extra["skill_impact"] = skill_impact(task, other)
    extra = {t.test_id for t in without.tasks} - {t.test_id for t in with_skills.tasks}
    if extra:
        raise WazaError(f"baseline mismatch: task {sorted(extra)[0]!r} present in baseline but not skills-enabled")
    with_skills.extra["is_baseline"] = True
    with_skills.extra["baseline_outcome"] = results_to_json(without)
    with_skills.extra["skill_impact_significance"] = impact_significance(with_skills, paired.statuses_of(without))
    return with_skills


def impact_significance(with_skills: ResultsDocument, without: dict[str, Any]) -> dict[str, Any]:
    """The paired test of the skills' impact: ``without`` (a results document as JSON, or
    only its tasks' run statuses) is the baseline, the with-skills document the current."""
    return paired.compare(without, paired.statuses_of(with_skills), ALPHA)


def run_baseline(run_pass: Callable[[Suite, bool], ResultsDocument], suite: Suite,
                 warn: Callable[[str], None]) -> ResultsDocument:
    """Run the A/B comparison with ``run_pass(suite, skills_off)`` doing one pass."""
    if not has_skills(suite):
        warn("baseline requested but the eval has no skills configured (config.skill_directories and "
             "config.required_skills are empty); running once, without a baseline comparison")
        return run_pass(suite, False)
    with_doc = run_pass(suite, False)
    without_doc = run_pass(without_skills(suite), True)
    return merge(with_doc, without_doc)


def impact_report(doc: ResultsDocument) -> str:
    """The console block of an A/B run (waza Go ``printSkillImpactReport``), plus the
    paired test's line and, with ``--baseline-from``, where the baseline came from."""
    from waza_core.results.console import escape  # one name, one line: a newline in it is shown as \\n

    base = doc.extra.get("baseline_outcome") or {}
    base_summary = base.get("summary") or {}
    s = doc.summary
    if s is None:
        return ""
    source = doc.extra.get("baseline_from") if isinstance(doc.extra.get("baseline_from"), dict) else None
    lines = ["", "SKILL IMPACT"]
    if source is None:
        with_rate, without_rate = s.success_rate, float(base_summary.get("success_rate", 0.0))
        lines += [f"  with skills:    {with_rate * 100:.1f}% ({s.succeeded}/{s.total_tests} tasks passed)",
                  f"  without skills: {without_rate * 100:.1f}% ({base_summary.get('succeeded', 0)}/"
                  f"{base_summary.get('total_tests', 0)} tasks passed)"]
    else:  # the success rates of the tasks both sides ran
        with_rate, without_rate = source["compared_success_rate"], source["compared_baseline_success_rate"]
        n = source["tasks_compared"]
        part = "its without-skills pass" if source["part"] == "baseline_outcome" else "the whole file"
        run_id = escape(str(source.get("eval_id")))
        lines += [f"  baseline from:  {escape(str(source['file']))} ({part}, run {run_id}); {n} task(s) compared",
                  f"  with skills:    {with_rate * 100:.1f}% ({round(with_rate * n)}/{n} compared tasks passed)",
                  f"  baseline:       {without_rate * 100:.1f}% ({round(without_rate * n)}/{n} compared tasks passed)"]
    delta = with_rate - without_rate
    lines.append("  impact:         " + (f"{delta * 100:+.1f} percentage points" if delta else "no change"))
    counts = {"IMPROVED": 0, "REGRESSED": 0, "NEUTRAL": 0}
    for task in doc.tasks:
        impact = task.extra.get("skill_impact")
        if not impact:
            continue
        label = "IMPROVED" if impact["delta"] > 0 else "REGRESSED" if impact["delta"] < 0 else "NEUTRAL"
        counts[label] += 1
        lines.append(f"  {escape(task.display_name):<30} [{label}] {impact['pass_rate_baseline'] * 100:.0f}% -> "
                     f"{impact['pass_rate_with_skills'] * 100:.0f}% ({impact['delta'] * 100:+.0f}pp)")
    verdict = ("POSITIVE IMPACT" if delta > 0 else "NEGATIVE IMPACT" if delta < 0 else "NEUTRAL IMPACT")
    lines.append(f"  verdict: skills have {verdict} ({counts['IMPROVED']} improved, {counts['REGRESSED']} "
                 f"regressed, {counts['NEUTRAL']} unchanged)")
    sig = doc.extra.get("skill_impact_significance")
    if isinstance(sig, dict):
        lines.append(f"  {escape(paired.describe(sig))}")
    return "\n".join(lines) + "\n"
