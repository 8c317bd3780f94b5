"""``--reporter markdown:PATH``: a summary for ``$GITHUB_STEP_SUMMARY`` and pull-request comments.

A headline with the verdict, one line of figures, then a table of tasks (problems
first): status, score, pass rate over the trials, a flaky mark and the failing
graders' feedback. Everything that comes from a suite, an agent or a grader is
escaped, so it renders as the text it is: no HTML, no markdown syntax, no table
break from a ``|`` or a newline, no ``@mention`` that pings someone, no control
characters. Long feedback and long tables are cut (options below) so the summary
stays under GitHub's comment size limit (65,536 characters).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import IO, Any

from waza_core import Reporter, ResultsView, describe_significance, escape_markdown, hookimpl

MARK = {"passed": "✅ passed", "failed": "❌ failed", "error": "⚠️ error", "n/a": "➖ n/a", "skipped": "➖ skipped"}
ORDER = {"error": 0, "failed": 1, "n/a": 3, "skipped": 3, "passed": 4}
escape = escape_markdown


def _pct(value: Any) -> str:
    return f"{value * 100:.1f}%" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


class MarkdownReporter(Reporter):
    name = "markdown"
    summary = "a markdown summary for $GITHUB_STEP_SUMMARY and pull-request comments"
    suffix = ".md"
    option_help = {
        "max_rows": "most task rows in the table; the rest are counted below it (default 100)",
        "max_feedback": "most characters of feedback per task (default 300)",
        "title": "the headline instead of 'waza: <eval name>'",
    }
    int_options = {"max_rows": (100, 1), "max_feedback": (300, 1)}

    def write(self, results: ResultsView, out: IO[bytes]) -> None:
        lines = (self.lines(results) + skill_impact_lines(results.header)
                 + judge_agreement_lines(results.header.get("judge_agreement")))
        out.write("\n".join(lines).encode("utf-8") + b"\n")

    def lines(self, results: ResultsView) -> list[str]:
        max_rows = self.option_int("max_rows")
        max_feedback = self.option_int("max_feedback")
        header, s = results.header, results.summary
        config = header.get("config") or {}
        total = s.get("total_tests", 0)
        bad = (s.get("failed") or 0) + (s.get("errors") or 0)
        verdict = "❌" if bad or header.get("incomplete") else "✅"
        title = self.options.get("title") or f"waza: {header.get('eval_name') or header.get('skill') or 'results'}"
        out = [f"## {verdict} {escape(title, 200)}", ""]
        figures = [f"**{s.get('succeeded', 0)}/{total}** tasks passed",
                   f"success rate **{_pct(s.get('success_rate'))}**",
                   f"aggregate score **{_num(s.get('aggregate_score'))}**"]
        if s.get("failed"):
            figures.append(f"{s['failed']} failed")
        if s.get("errors"):
            figures.append(f"{s['errors']} errored")
        if s.get("skipped"):
            figures.append(f"{s['skipped']} not graded")
        out.append(" · ".join(figures))
        about = [f"model {escape(config.get('model_id') or '(default)', 80)}",
                 f"executor {escape(config.get('engine_type') or '?', 40)}"]
        if config.get("runs_per_test"):
            about.append(f"{config['runs_per_test']} trial(s) per task")
        cached = s.get("cached_runs")
        if isinstance(cached, int) and cached:
            about.append(f"{cached} run(s) from the cache")
        if header.get("incomplete"):
            about.append("**incomplete run**")
        out += ["", " · ".join(about), ""]
        tally = ResultsView.triage_tally(header.get("audit"))
        counted = _Counted(tally.watch(results.tasks()))
        # the first max_rows in sorted order, kept as the tasks stream by (nsmallest is
        # sorted()[:n], stable): a file of 500,000 runs is never held whole
        shown = heapq.nsmallest(max_rows, counted, key=lambda t: (ORDER.get(t.get("status"), 2), t.get("test_id", "")))
        out += triage_section(tally, header.get("audit"))
        if not shown:
            return out + ["_No tasks._"]
        out += ["| Status | Task | Score | Pass rate | Flaky | Failing graders |",
                "|---|---|---:|---:|:---:|---|"]
        for task in shown:
            out.append(self._row(task, max_feedback))
        if counted.total > len(shown):
            problems = counted.problems - sum(1 for t in shown if t.get("status") in ("failed", "error"))
            out += ["", f"_… and {counted.total - len(shown)} more task(s) ({problems} failed or errored) not shown._"]
        return out

    def _row(self, task: dict, max_feedback: int) -> str:
        runs = task.get("runs") or []
        passed = sum(1 for r in runs if r.get("status") == "passed")
        graded = sum(1 for r in runs if r.get("status") not in ("n/a", "skipped"))
        rate = f"{passed}/{graded}" if graded else "–"
        flaky = "⚠️ flaky" if ResultsView.task_flaky(task) else ""
        name = task.get("display_name") or task.get("test_id")
        label = escape(name, 120)
        if task.get("test_id") and task.get("test_id") != name:
            label += f"<br><sub>{escape(task['test_id'], 120)}</sub>"
        if task.get("golden"):
            label += " ⭐"
        return (f"| {MARK.get(task.get('status'), escape(task.get('status'), 20))} | {label} | "
                f"{_num(ResultsView.task_score(task))} | {rate} | {flaky} | "
                f"{escape(chr(10).join(_feedback(task)), max_feedback)} |")


def triage_section(tally: Any, audit: Any) -> list[str]:
    """``### Failure triage``: runs per category, the next action, the tasks (and the audit's
    findings under ``waza run --audit``); nothing when every run passed for real."""
    out: list[str] = []
    groups = tally.groups()
    if groups:
        out += ["### Failure triage", "", "| Category | Runs | Tasks | Next action |", "|---|---:|---|---|"]
        for g in groups:
            names = ", ".join(escape(tid, 80) for tid, _ in g["shown"][:10])
            if g["tasks"] > min(len(g["shown"]), 10):
                names += f" … (+{g['tasks'] - min(len(g['shown']), 10)})"
            out.append(f"| **{g['title']}** | {g['runs']} | {names} | {escape(g['action'], 300)} |")
        out.append("")
    if isinstance(audit, dict):
        vacuous = [str(t) for t in audit.get("vacuous_tasks") or []]
        graders = [g for g in audit.get("vacuous_graders") or [] if isinstance(g, dict)]
        line = (f"**Audit** (do-nothing agent, {audit.get('tasks_audited', 0)} task(s)): "
                + (f"{len(vacuous)} vacuous task(s): {escape(', '.join(vacuous[:20]), 1000)}" if vacuous
                   else "no task passes with no agent"))
        if graders:
            line += (f" · {len(graders)} vacuous grader(s): "
                     + escape(", ".join(f"{g.get('task_id')}/{g.get('grader')}" for g in graders[:20]), 1000))
        out += [line, ""]
    return out


class _Counted:
    """The tasks, passed through, counting them and the failed or errored ones."""

    def __init__(self, tasks: Iterator[dict]) -> None:
        self.tasks = tasks
        self.total = self.problems = 0

    def __iter__(self) -> Iterator[dict]:
        for task in self.tasks:
            self.total += 1
            self.problems += task.get("status") in ("failed", "error")
            yield task


def _feedback(task: dict) -> list[str]:
    """The failing graders' feedback over all runs, each distinct line once."""
    seen: dict[str, None] = {}
    for run in task.get("runs") or []:
        if run.get("error_msg"):
            seen.setdefault(f"run {run.get('run_number', '?')}: {run['error_msg']}", None)
        for name, v in ResultsView.failed_graders(run):
            seen.setdefault(f"{name}: {v.get('feedback') or 'failed'}", None)
    return list(seen)


def skill_impact_lines(header: dict[str, Any]) -> list[str]:
    """An A/B run: the paired test's line (the wording of gate and compare) and where the
    baseline came from; [] for any other file."""
    sig = header.get("skill_impact_significance")
    if not isinstance(sig, dict):
        return []
    try:
        line = describe_significance(sig)
    except (KeyError, TypeError, ValueError):
        line = "Significance: not shown (the file's skill_impact_significance is incomplete)"
    out = ["", "### Skill impact", "", f"**{escape(sig.get('verdict') or 'not computed', 40)}** · {escape(line, 600)}"]
    source = header.get("baseline_from")
    if isinstance(source, dict):
        part = "its without-skills pass" if source.get("part") == "baseline_outcome" else "the whole file"
        run_id = escape(source.get("eval_id"), 80)
        out += ["", f"Baseline from {escape(source.get('file'), 200)} ({part}, run {run_id}); "
                    f"{_count(source.get('tasks_compared'))} task(s) compared."]
        out += [f"- ⚠️ {escape(w, 300)}" for w in source.get("warnings") or ()]
    return out


def judge_agreement_lines(block: Any) -> list[str]:
    """``waza grade --repeat K``: a small table of each judge's self-agreement; [] without it."""
    if not isinstance(block, dict) or not isinstance(block.get("graders"), dict):
        return []
    out = ["", "### Judge agreement", "",
           f"_Each judge was asked {_count(block.get('repeat'))} times per run (`waza grade --repeat`); "
           f"stable at Krippendorff's alpha ≥ {_num3(block.get('min_alpha'))}._", ""]
    graders = {k: g for k, g in block["graders"].items() if isinstance(g, dict)}
    if not graders:
        return out + ["_No prompt (judge) grader in the graded tasks: nothing was repeated._"]
    out += ["| Judge | Type | Agreement | Alpha [95% CI] | Score alpha | Unanimous runs | Errors | |",
            "|---|---|---:|---:|---:|---:|---:|---|"]
    for name, g in graders.items():
        if g.get("runs_compared") == 0:
            mark = "not measured"
        else:
            mark = "⚠️ unstable" if g.get("unstable") else "stable"
        alpha = _num3(g.get("alpha"))
        if g.get("alpha") is None and g.get("alpha_reason"):
            alpha += f" ({escape(g['alpha_reason'], 120)})"
        ci = g.get("alpha_ci")
        if isinstance(ci, list) and len(ci) == 2:
            alpha += f" [{_num3(ci[0])}, {_num3(ci[1])}]"
        out.append(f"| {escape(name, 80)} | {escape(g.get('type'), 40)} | {_pct(g.get('percent_agreement'))} | "
                   f"{alpha} | {_num3(g.get('score_alpha'))} | "
                   f"{_count(g.get('runs_unanimous'))}/{_count(g.get('runs_compared'))} | "
                   f"{_count(g.get('judgment_errors'))} | {mark} |")
    return out


def _num3(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


@hookimpl
def waza_register_reporters(register):
    register(MarkdownReporter)
