"""What ``waza gate`` saw, beyond waza's aggregate: the tasks that regressed, and whether
the two files can be compared at all.

waza (Go) reports "aggregate pass rate regressed by N percentage points" without naming
a task, and compares any two results files, even of different suites or models. Here
the report adds (new keys; waza's keys and messages are unchanged):

* ``regressed_tasks``: every task of both files whose pass rate dropped, or that passed
  in the baseline and does not now (most dropped first), shown in every format;
* ``mismatches``: the two files name different suites (``eval_name``), different skills,
  different models (``config.model_id``), or share less than :data:`MIN_TASK_OVERLAP` of
  their tasks. Each one is a warning (also written to stderr), or with
  ``--strict-match`` a failure: the gate exits :data:`EXIT_MISMATCH` (3, waza's
  configuration-error code: the inputs cannot be compared, which is neither a regression
  nor a golden failure).
"""

from __future__ import annotations

from typing import Any

from waza_core.results.markdown_text import escape_markdown, terminal_text
from waza_core.results.reading import number

#: below this share of common tasks (of the larger file), the files are different suites
MIN_TASK_OVERLAP = 0.5
#: the gate's exit code when --strict-match refuses the comparison
EXIT_MISMATCH = 3
#: text formats name at most this many regressed tasks; JSON names all of them
MAX_SHOWN = 20


def _rate(task: dict[str, Any]) -> float:
    return number((task.get("stats") or {}).get("pass_rate"), 0.0)


def regressed_tasks(base: dict[str, dict], cur: dict[str, dict]) -> list[dict[str, Any]]:
    """Tasks in both files that got worse: a lower pass rate, or passed before and not now."""
    out = []
    for tid in base.keys() & cur.keys():
        b, c = base[tid], cur[tid]
        b_rate, c_rate = _rate(b), _rate(c)
        lost_pass = b.get("status") == "passed" and c.get("status") != "passed"
        if c_rate < b_rate or lost_pass:
            out.append({"task_id": tid, "display_name": c.get("display_name") or b.get("display_name") or tid,
                        "baseline_status": b.get("status"), "current_status": c.get("status"),
                        "baseline_pass_rate": b_rate, "current_pass_rate": c_rate,
                        "drop_pct": round(max(b_rate - c_rate, 0.0) * 100, 9)})
    out.sort(key=lambda t: (-t["drop_pct"], str(t["task_id"])))
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def mismatches(baseline: dict[str, Any], current: dict[str, Any], base: dict, cur: dict) -> list[dict[str, Any]]:
    """Why the two files may not be the same suite and model (empty when they are)."""
    out = []
    for kind, what, b, c in (
            ("suite", "suite names (eval_name)", _text(baseline.get("eval_name")), _text(current.get("eval_name"))),
            ("skill", "skills", _text(baseline.get("skill")), _text(current.get("skill"))),
            ("model", "models (model_id)", _text(baseline["config"].get("model_id")),
             _text(current["config"].get("model_id")))):
        if b and c and b != c:
            out.append({"kind": kind, "baseline": b, "current": c,
                        "message": f"baseline and current have different {what}: {b!r} vs {c!r}"})
    larger = max(len(base), len(cur))
    common = len(base.keys() & cur.keys())
    if larger and common < MIN_TASK_OVERLAP * larger:
        out.append({"kind": "task_overlap", "baseline": len(base), "current": len(cur), "common": common,
                    "message": f"baseline and current share {common} task id(s) of {len(base)} and {len(cur)} "
                               f"(less than {MIN_TASK_OVERLAP:.0%}): probably different suites"})
    return out


def apply(report: dict[str, Any], baseline: dict[str, Any], current: dict[str, Any], base: dict, cur: dict,
          strict_match: bool) -> None:
    """Add ``regressed_tasks``, ``mismatches`` and ``strict_match`` to a built gate report;
    with ``strict_match`` a mismatch fails it (exit :data:`EXIT_MISMATCH`)."""
    regressed = regressed_tasks(base, cur)
    if regressed:
        report["regressed_tasks"] = regressed
    found = mismatches(baseline, current, base, cur)
    if not found:
        return
    report["mismatches"] = found
    report["strict_match"] = strict_match
    issues = [{"kind": f"mismatch_{m['kind']}", "severity": "error" if strict_match else "warning",
               "message": m["message"] + ("" if strict_match else "; --strict-match makes this a failure")}
              for m in found]
    if strict_match:
        report["failures"] = issues + report.get("failures", [])
        report.update(passed=False, exit_code=EXIT_MISMATCH, verdict="mismatch")
    else:
        report["warnings"] = issues + report.get("warnings", [])


def _line(t: dict[str, Any]) -> str:
    return (f"{t['task_id']} ({t['display_name']}): pass rate {t['baseline_pass_rate'] * 100:.1f}% -> "
            f"{t['current_pass_rate'] * 100:.1f}%, {t['baseline_status']} -> {t['current_status']}")


def _more(tasks: list) -> list[str]:
    return [f"... and {len(tasks) - MAX_SHOWN} more (--format json lists all)"] if len(tasks) > MAX_SHOWN else []


def human_lines(report: dict[str, Any]) -> list[str]:
    """The regressed tasks, for the human format."""
    tasks = report.get("regressed_tasks") or []
    if not tasks:
        return []
    return ["", f"Regressed tasks ({len(tasks)}):"] + [f"- {terminal_text(_line(t))}" for t in tasks[:MAX_SHOWN]] \
        + [f"- {m}" for m in _more(tasks)]


def human_banner(report: dict[str, Any]) -> list[str]:
    """A loud first block when the files may not be comparable."""
    if not report.get("mismatches"):
        return []
    head = "MISMATCH (--strict-match): not compared" if report.get("strict_match") else \
        "WARNING: these files may not be comparable"
    return ["", f"!! {head}:"] + [f"!!   {terminal_text(m['message'])}" for m in report["mismatches"]]


def markdown_banner(report: dict[str, Any]) -> list[str]:
    """A mismatch alert, right under the title."""
    if not report.get("mismatches"):
        return []
    kind = "CAUTION" if report.get("strict_match") else "WARNING"
    return ["", f"> [!{kind}]", "> These files may not be comparable:"] + \
        [f"> - {escape_markdown(m['message'])}" for m in report["mismatches"]]


def markdown_lines(report: dict[str, Any]) -> list[str]:
    """The regressed tasks as a markdown table."""
    out: list[str] = []
    tasks = report.get("regressed_tasks") or []
    if tasks:
        out += ["", f"### Regressed tasks ({len(tasks)})", "",
                "| Task | Baseline | Current |", "|---|---:|---:|"]
        out += [f"| {escape_markdown(str(t['task_id']))} ({escape_markdown(str(t['display_name']))}) | "
                f"{t['baseline_pass_rate'] * 100:.1f}% {escape_markdown(str(t['baseline_status']))} | "
                f"{t['current_pass_rate'] * 100:.1f}% {escape_markdown(str(t['current_status']))} |"
                for t in tasks[:MAX_SHOWN]]
        out += _more(tasks)
    return out


def actions_lines(report: dict[str, Any], escape) -> list[str]:
    """One ``::warning`` per regressed task (the mismatches are already in warnings/failures)."""
    return [f"::warning title=Waza gate: regressed task::{escape(_line(t))}"
            for t in (report.get("regressed_tasks") or [])[:MAX_SHOWN]]


def stderr_warning(report: dict[str, Any]) -> str:
    """What the CLI writes to stderr about a mismatch (every format), or ''."""
    found = report.get("mismatches") or []
    if not found:
        return ""
    verb = "error" if report.get("strict_match") else "warning"
    return "".join(f"waza: {verb}: gate: {m['message']}\n" for m in found) + (
        "" if report.get("strict_match") else "waza: warning: gate: pass --strict-match to fail on this\n")
