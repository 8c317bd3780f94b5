"""``waza gate``: compare current results with a baseline and decide pass / fail / golden-failure.

The algorithm, report keys, verdicts, messages and exit codes are waza's
(``cmd/waza/cmd_gate.go``). Where waza's code and its documentation disagree we follow
the documentation (docs/ci.md lists each point):

- ``--golden-must-pass`` is on by default (the code's default is off);
- a task is golden when *either* file marks it (the code looks at the current file
  only), so a golden task missing from the current results is a golden failure too.

Two traps of waza fixed: the regression is rounded to 9 decimals before it is compared
(``(0.7 - 0.6) * 100`` must not count as more than 10 points), and GitHub Actions
messages escape only ``%``, CR and LF (waza also escapes ``:`` and ``,``, which GitHub
does not unescape in a message, so they showed as ``%3A`` and ``%2C``).

Beyond waza, an optional significance test (``--significance ALPHA``): the change is
weighed against noise by a paired test over tasks (:mod:`waza_core.results.significance`),
and the test then decides what counts as a regression (:func:`_weigh_regression`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from waza_core.results import gate_tasks
from waza_core.results import significance as paired
from waza_core.results.markdown_text import escape_markdown, terminal_text
from waza_core.results.reading import number

EXIT_PASS, EXIT_REGRESSION, EXIT_GOLDEN, EXIT_CONFIG = 0, 1, 2, 3
POLICIES = ("allow", "warn", "fail")
FORMATS = ("human", "json", "markdown", "github-actions")


@attrs.define
class GateOptions:
    baseline_path: str
    current_path: str
    max_regression_pct: float = 0.0
    golden_must_pass: bool = True
    on_new_tasks: str = "allow"
    on_removed_tasks: str = "warn"
    format: str = "human"
    significance_alpha: float | None = None
    strict_match: bool = False


def check_options(opts: GateOptions) -> GateOptions:
    """Trim and lower-case as waza does; raise ValueError with waza's message for a bad value."""
    opts.baseline_path = opts.baseline_path.strip()
    opts.current_path = opts.current_path.strip()
    opts.on_new_tasks = opts.on_new_tasks.strip().lower()
    opts.on_removed_tasks = opts.on_removed_tasks.strip().lower()
    opts.format = opts.format.strip().lower()
    if not opts.baseline_path:
        raise ValueError("--baseline is required")
    if not opts.current_path:
        raise ValueError("--current is required")
    if not opts.max_regression_pct >= 0:  # also refuses NaN
        raise ValueError("--max-regression-pct must be >= 0")
    for flag, value in (("--on-new-tasks", opts.on_new_tasks), ("--on-removed-tasks", opts.on_removed_tasks)):
        if value not in POLICIES:
            raise ValueError(f"{flag}: unsupported policy {value!r}: must be allow, warn, or fail")
    if opts.format not in FORMATS:
        raise ValueError(f"unsupported format {opts.format!r}: must be human, json, markdown, or github-actions")
    if opts.significance_alpha is not None and not 0 < opts.significance_alpha < 1:
        raise ValueError("--significance must be a level between 0 and 1, e.g. 0.05")
    return opts


def _task_entry(task: dict[str, Any], golden: bool | None = None) -> dict[str, Any]:
    stats = task.get("stats") or {}
    entry: dict[str, Any] = {"task_id": task["test_id"], "display_name": task["display_name"]}
    if golden if golden is not None else task.get("golden"):
        entry["golden"] = True
    entry["status"] = task["status"]
    entry["pass_rate"] = number(stats.get("pass_rate"), 0.0)
    return entry


def _index(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["test_id"]: t for t in doc["tasks"]}  # as in waza, a repeated id: the last one counts


def build_report(opts: GateOptions, baseline: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    b_sum, c_sum = baseline["summary"], current["summary"]
    b_cfg, c_cfg = baseline["config"], current["config"]
    report: dict[str, Any] = {
        "passed": True, "exit_code": EXIT_PASS, "verdict": "pass",
        "baseline_file": opts.baseline_path, "current_file": opts.current_path,
        "baseline_success_rate": float(b_sum["success_rate"]), "current_success_rate": float(c_sum["success_rate"]),
        "regression_pct": 0.0, "max_regression_pct": opts.max_regression_pct,
        "golden_must_pass": opts.golden_must_pass,
    }
    drop = round((report["baseline_success_rate"] - report["current_success_rate"]) * 100, 9)
    if drop > 0:
        report["regression_pct"] = drop
    failures: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    if report["regression_pct"] > opts.max_regression_pct:
        failures.append({"kind": "regression", "severity": "error",
                         "message": f"aggregate pass rate regressed by {report['regression_pct']:.2f} percentage "
                                    f"points, exceeding {opts.max_regression_pct:.2f}"})
    base, cur = _index(baseline), _index(current)
    new_tasks = [_task_entry(cur[i]) for i in sorted(cur) if i not in base]
    removed_tasks = [_task_entry(base[i]) for i in sorted(base) if i not in cur]
    for task in new_tasks:
        _apply_policy(warnings, failures, opts.on_new_tasks, "new_task", task)
    for task in removed_tasks:
        _apply_policy(warnings, failures, opts.on_removed_tasks, "removed_task", task)
    golden_failures = []
    if opts.golden_must_pass:
        golden_ids = sorted({i for i, t in cur.items() if t.get("golden")}
                            | {i for i, t in base.items() if t.get("golden")})
        for tid in golden_ids:
            if tid not in cur:
                entry = _task_entry(base[tid], golden=True)
                entry.update(status="n/a", pass_rate=0.0)
                golden_failures.append(entry)
            elif cur[tid]["status"] != "passed":
                golden_failures.append(_task_entry(cur[tid], golden=True))
    if opts.significance_alpha is not None:
        report["significance"] = significance(baseline, current, opts.significance_alpha)
        _weigh_regression(report, failures, warnings, opts.max_regression_pct)
    if golden_failures:
        report["golden_failures"] = golden_failures
    if new_tasks:
        report["new_tasks"] = new_tasks
    if removed_tasks:
        report["removed_tasks"] = removed_tasks
    for task in golden_failures:
        if task["status"] == "n/a" and task["task_id"] not in cur:
            message = (f"golden task {_go_quote(task['display_name'])} ({task['task_id']}) is missing from the "
                       "current results")
        else:
            message = f"golden task {_go_quote(task['display_name'])} ({task['task_id']}) did not pass; " \
                      f"status={task['status']}"
        failures.append({"kind": "golden_failure", "severity": "error", "message": message,
                         "task_id": task["task_id"], "task_name": task["display_name"]})
    if warnings:
        report["warnings"] = warnings
    if failures:
        report["failures"] = failures
    report.update({
        "baseline_task_count": len(baseline["tasks"]), "current_task_count": len(current["tasks"]),
        "new_task_policy": opts.on_new_tasks, "removed_task_policy": opts.on_removed_tasks,
    })
    for side, cfg in (("baseline", b_cfg), ("current", c_cfg)):
        if isinstance(cfg.get("model_id"), str) and cfg["model_id"]:
            report[f"{side}_model"] = cfg["model_id"]
    for side, cfg in (("baseline", b_cfg), ("current", c_cfg)):
        runs = cfg.get("runs_per_test")
        if isinstance(runs, int) and not isinstance(runs, bool) and runs:
            report[f"{side}_runs_per_test"] = runs
    report["baseline_aggregate_score"] = float(b_sum["aggregate_score"])
    report["current_aggregate_score"] = float(c_sum["aggregate_score"])
    if golden_failures:
        report.update(passed=False, exit_code=EXIT_GOLDEN, verdict="golden-failure")
    elif failures:
        report.update(passed=False, exit_code=EXIT_REGRESSION, verdict="fail")
    gate_tasks.apply(report, baseline, current, base, cur, opts.strict_match)
    if "significance" in report:  # keep waza's keys first, ours last
        report["significance"] = report.pop("significance")
    return report


def _weigh_regression(report: dict[str, Any], failures: list, warnings: list, max_pct: float) -> None:
    """With ``--significance`` the paired test decides what counts as a regression: a drop it
    finds within noise is a warning, not a failure; a drop it finds significant fails the gate
    when the mean per-task drop exceeds ``--max-regression-pct``, even if the aggregate success
    rate (tasks whose every trial passed) did not move that much."""
    sig = report["significance"]
    aggregate = bool(failures) and failures[0]["kind"] == "regression"
    if sig.get("p_value") is None:
        return
    drop_pct = -sig["mean_task_delta_pct"]
    if sig["significant"] and drop_pct > max_pct:
        message = (f"pass rate regressed significantly: tasks lost {drop_pct:.2f} percentage points on average "
                   f"({sig['confidence_level'] * 100:.0f}% CI {-sig['ci_high'] * 100:.2f} to "
                   f"{-sig['ci_low'] * 100:.2f}), exceeding {max_pct:.2f}; paired test over "
                   f"{sig['tasks_compared']} tasks p={sig['p_value']:.4f} < alpha {sig['alpha']}")
        if aggregate:
            failures[0]["message"] += f"; {message}"
        else:
            failures.insert(0, {"kind": "regression", "severity": "error", "message": message})
    elif aggregate:
        failures.pop(0)
        words = "within noise" if sig["verdict"] == "within noise" else "not significant"
        warnings.insert(0, {"kind": "regression_not_significant", "severity": "warning",
                            "message": f"aggregate pass rate regressed by {report['regression_pct']:.2f} "
                                       f"percentage points, but the change is {words} (paired test over "
                                       f"{sig['tasks_compared']} tasks p={sig['p_value']:.4f} >= alpha "
                                       f"{sig['alpha']}; {_mde_words(sig)})"})


def _mde_words(sig: dict[str, Any]) -> str:
    mde = sig.get("minimum_detectable_effect_pct")
    if mde is None:
        return f"no change is detectable with {sig['tasks_compared']} tasks"
    return f"minimum detectable effect {mde:.1f} pp"


def _go_quote(text: str) -> str:
    """A Go ``%q`` of a display name, as in waza's messages (JSON quoting is close enough)."""

    return json.dumps(text, ensure_ascii=False)


def _apply_policy(warnings: list, failures: list, policy: str, kind: str, task: dict[str, Any]) -> None:
    if policy == "allow":
        return
    where = "is present only in baseline results" if kind == "removed_task" else "is present only in current results"
    issue = {"kind": kind, "severity": "error" if policy == "fail" else "warning",
             "message": f"task {_go_quote(task['display_name'])} ({task['task_id']}) {where} and policy is {policy}",
             "task_id": task["task_id"], "task_name": task["display_name"]}
    (failures if policy == "fail" else warnings).append(issue)


def significance(baseline: dict[str, Any], current: dict[str, Any], alpha: float) -> dict[str, Any]:
    """Is the change more than noise? The paired, task-clustered test of
    :mod:`waza_core.results.significance` (tasks are the unit; trials of one task are not
    independent evidence). ``significant`` is "the current file regressed" at ``alpha``."""
    return paired.compare(baseline, current, alpha)


# -- rendering ------------------------------------------------------------------------

def render_human(report: dict[str, Any]) -> str:
    status = "PASS" if report["passed"] else report["verdict"].upper()
    lines = [f"Waza gate: {status}", "",
             f"Baseline: {report['baseline_success_rate'] * 100:.1f}% pass rate ({report['baseline_task_count']} "
             f"tasks, model: {terminal_text(report.get('baseline_model') or 'n/a')})",
             f"Current:  {report['current_success_rate'] * 100:.1f}% pass rate ({report['current_task_count']} "
             f"tasks, model: {terminal_text(report.get('current_model') or 'n/a')})",
             f"Regression: {report['regression_pct']:.2f} percentage points "
             f"(max allowed {report['max_regression_pct']:.2f})"]
    if report["golden_must_pass"]:
        lines.append(f"Golden tasks: {len(report.get('golden_failures', []))} failure(s)")
    lines.append(f"Task changes: {len(report.get('new_tasks', []))} new, "
                 f"{len(report.get('removed_tasks', []))} removed")
    sig = report.get("significance")
    if sig:
        lines.append(_significance_line(sig))
    lines[1:1] = gate_tasks.human_banner(report)
    lines += gate_tasks.human_lines(report)
    for title, key in (("Failures", "failures"), ("Warnings", "warnings")):
        if report.get(key):
            lines += ["", f"{title}:"] + [f"- {terminal_text(i['message'])}" for i in report[key]]
    return "\n".join(lines) + "\n"


def _significance_line(sig: dict[str, Any]) -> str:
    return paired.describe(sig)


def render_markdown(report: dict[str, Any]) -> str:
    status = "PASS" if report["passed"] else "FAIL"
    out = [f"## Waza gate: {status}", "",
           "| Metric | Baseline | Current |", "|---|---:|---:|",
           f"| Pass rate | {report['baseline_success_rate'] * 100:.1f}% | "
           f"{report['current_success_rate'] * 100:.1f}% |",
           f"| Aggregate score | {report['baseline_aggregate_score']:.4f} | {report['current_aggregate_score']:.4f} |",
           f"| Tasks | {report['baseline_task_count']} | {report['current_task_count']} |", "",
           f"- Regression: {report['regression_pct']:.2f} percentage points "
           f"(max allowed {report['max_regression_pct']:.2f})",
           f"- New tasks: {len(report.get('new_tasks', []))} (`{report['new_task_policy']}`)",
           f"- Removed tasks: {len(report.get('removed_tasks', []))} (`{report['removed_task_policy']}`)"]
    if report["golden_must_pass"]:
        out.append(f"- Golden failures: {len(report.get('golden_failures', []))}")
    if report.get("significance"):
        out.append(f"- {escape_markdown(_significance_line(report['significance']))}")
    out[1:1] = gate_tasks.markdown_banner(report)
    out += gate_tasks.markdown_lines(report)
    for title, key in (("Failures", "failures"), ("Warnings", "warnings")):
        if report.get(key):
            out += ["", f"### {title}", ""] + [f"- {escape_markdown(i['message'])}" for i in report[key]]
    return "\n".join(out) + "\n"


def escape_actions_message(value: str) -> str:
    """GitHub Actions workflow-command data: only %, CR and LF are escaped (and unescaped
    by GitHub); any other character that is not printable (a terminal escape sequence, a
    bidirectional override, a lone surrogate) is shown as a ``\\x``/``\\u`` escape."""
    return "".join(_ACTIONS_BREAKS.get(part) or terminal_text(part).replace("%", "%25")
                   for part in re.split("([\r\n])", value))


_ACTIONS_BREAKS = {"\r": "%0D", "\n": "%0A"}


def render_github_actions(report: dict[str, Any]) -> str:
    lines = [f"::warning title=Waza gate::{escape_actions_message(i['message'])}" for i in report.get("warnings", [])]
    if report.get("significance"):  # with --significance: the same line as the other formats, as a notice
        line = escape_actions_message(_significance_line(report["significance"]))
        lines.insert(0, f"::notice title=Waza gate::{line}")
    lines += [f"::error title=Waza gate::{escape_actions_message(i['message'])}" for i in report.get("failures", [])]
    lines += gate_tasks.actions_lines(report, escape_actions_message)
    return "".join(line + "\n" for line in lines)
