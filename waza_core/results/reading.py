"""Reading saved results files for ``waza report``, ``gate`` and ``compare``.

These commands must read every results file waza (Go) ever wrote (``schemaVersion``
absent, or any 1.x) as well as ours, including hand-made ones that carry only a few
fields (waza's grader-challenge samples have no ``summary``). The file goes through
the core's one tolerant decoder (:func:`waza_core.results.codec.decode_results`: a
field of the wrong type takes its default with a warning) and back to plain JSON,
then :func:`normalize` fills what these readers need: a missing ``summary`` is
computed from the tasks, a missing task status from its runs. What it refuses: a
file that is not JSON, not an object, has no ``tasks`` list, or declares another
major schema version (waza points at ``waza migrate`` then; so do we).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from waza_core.errors import WazaError
from waza_core.lazy_re import LazyPattern

SUPPORTED_MAJOR = 1
_VERSION = LazyPattern(r"^(\d+)\.(\d+)$")
OPTIMIZER_REPORT_KIND = "waza.optimizer-report"


#: most decoder warnings printed per file (the rest are counted)
MAX_WARNINGS = 5


def decode(doc: dict[str, Any], where: str, warnings: list[str] | None = None) -> dict[str, Any]:
    """Through the core's tolerant decoder and back to plain JSON; its warnings go to stderr.

    A file that waza for Python wrote (it has ``waza_version``) skips the round trip: our
    encoder wrote it, and :func:`normalize` alone already tolerates any shape (a property
    test holds it to that). The round trip costs about twice the JSON parsing, which
    matters for a 20,000-run report. The decoder's warnings go to ``warnings`` when given,
    else to stderr.
    """
    check_schema_version(doc, where)
    if not isinstance(doc.get("tasks"), list):
        raise WazaError(f"{where} has no 'tasks' list: is it a waza results file?")
    if isinstance(doc.get("waza_version"), str):
        return doc

    from waza_core.results.codec import decode_results, results_to_json  # only now: its import costs start-up

    collect = warnings is not None
    warnings = warnings if collect else []
    out = results_to_json(decode_results(doc, warnings))
    if "summary" not in doc:
        out.pop("summary", None)  # computed by normalize, from the tasks
    if collect:
        return out
    for line in warnings[:MAX_WARNINGS]:
        sys.stderr.write(f"waza: warning: {where}: {line}\n")
    if len(warnings) > MAX_WARNINGS:
        sys.stderr.write(f"waza: warning: {where}: … and {len(warnings) - MAX_WARNINGS} more\n")
    return out


def check_schema_version(doc: dict[str, Any], where: str) -> None:
    version = doc.get("schemaVersion")
    if version is None:
        return  # waza: a missing schemaVersion means the current one
    m = _VERSION.match(version) if isinstance(version, str) else None
    if m is None:
        raise WazaError(f"{where}: schemaVersion {version!r} is malformed; expected MAJOR.MINOR such as '1.5'")
    if int(m.group(1)) != SUPPORTED_MAJOR:
        raise WazaError(f"{where}: schemaVersion {version!r} is not supported: this waza reads "
                        f"{SUPPORTED_MAJOR}.x results files (see `waza migrate` of the waza that wrote it)")


def normalize(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """Fill what the readers need, in place: tasks, runs, statuses, stats and summary."""
    check_schema_version(doc, where)
    tasks = doc.get("tasks")
    if not isinstance(tasks, list):
        raise WazaError(f"{where} has no 'tasks' list: is it a waza results file?")
    doc["tasks"] = [_task(t, i) for i, t in enumerate(tasks) if isinstance(t, dict)]
    if not isinstance(doc.get("config"), dict):
        doc["config"] = {}
    summary = doc.get("summary")
    if not isinstance(summary, dict):
        doc["summary"] = summarize(doc["tasks"])
    elif not all(_is_number(summary.get(key)) for key in SUMMARY_KEYS):  # a summary with gaps
        for key, value in summarize(doc["tasks"]).items():
            if not _is_number(summary.get(key)):
                summary[key] = value
    for key in ("eval_name", "skill"):
        if not isinstance(doc.get(key), str):
            doc[key] = ""
    return doc


def _task(task: dict[str, Any], index: int) -> dict[str, Any]:
    if not isinstance(task.get("test_id"), str) or not task["test_id"]:
        name = task.get("display_name")
        task["test_id"] = name if isinstance(name, str) and name else f"task-{index + 1}"
    if not isinstance(task.get("display_name"), str) or not task["display_name"]:
        task["display_name"] = task["test_id"]
    runs = task.get("runs")
    task["runs"] = [_run(r, i) for i, r in enumerate(runs if isinstance(runs, list) else []) if isinstance(r, dict)]
    if not isinstance(task.get("status"), str):
        task["status"] = _status_from_runs(task["runs"])
    if not isinstance(task.get("stats"), dict):
        task["stats"] = None
    task["golden"] = task.get("golden") is True
    return task


def _run(run: dict[str, Any], index: int) -> dict[str, Any]:
    if not _is_number(run.get("run_number")):
        run["run_number"] = index + 1
    if not isinstance(run.get("status"), str):
        run["status"] = "n/a"
    validations = run.get("validations")
    if not isinstance(validations, dict):
        run["validations"] = {}
    elif not all(isinstance(v, dict) for v in validations.values()):
        run["validations"] = {k: v for k, v in validations.items() if isinstance(v, dict)}
    if not _is_number(run.get("duration_ms")):
        run["duration_ms"] = 0
    for key in ("session_digest", "usage"):
        if key in run and not isinstance(run[key], dict):
            run[key] = None
    for key in ("tool_events", "transcript"):
        if key in run and run[key] is not None and not isinstance(run[key], list):
            run[key] = None
    for key in ("final_output", "error_msg"):
        if key in run and run[key] is not None and not isinstance(run[key], str):
            run[key] = text(run[key])
    return run


def _status_from_runs(runs: list[dict]) -> str:
    statuses = {r["status"] for r in runs}
    if not runs or statuses <= {"n/a", "skipped"}:
        return "n/a"
    if "error" in statuses:
        return "error"
    return "passed" if statuses == {"passed"} else "failed"


#: the summary fields :func:`summarize` computes
SUMMARY_KEYS = ("total_tests", "succeeded", "failed", "errors", "skipped", "success_rate", "aggregate_score",
                "duration_ms")


def summarize(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary fields the readers use, computed from the tasks (for files without one)."""
    total = len(tasks)
    count = {s: sum(1 for t in tasks if t["status"] == s) for s in ("passed", "failed", "error")}
    scores = [task_score(t) for t in tasks]
    known = [s for s in scores if s is not None]
    return {
        "total_tests": total,
        "succeeded": count["passed"],
        "failed": count["failed"],
        "errors": count["error"],
        "skipped": total - sum(count.values()),
        "success_rate": count["passed"] / total if total else 0.0,
        "aggregate_score": sum(known) / total if total else 0.0,
        "duration_ms": sum(int(r["duration_ms"]) for t in tasks for r in t["runs"]),
    }


# -- accessors shared by gate, compare and the reporters ------------------------------

def _is_number(value: Any) -> bool:
    """An int or a finite float of JSON: not a bool, not NaN or infinity (which Python's
    JSON reader takes from ``NaN``, ``Infinity`` or ``1e999`` and no JSON writer could put
    back). ``type`` rather than ``isinstance``: this runs for every field of every run."""
    kind = type(value)
    return kind is int or (kind is float and value - value == 0.0)


def number(value: Any, default: float | None = None) -> float | None:
    return float(value) if _is_number(value) else default


def run_score(run: Mapping[str, Any]) -> float | None:
    """Mean of the grader scores of one run (waza's run score); None when ungraded."""
    total, count = 0, 0
    for v in run.get("validations", {}).values():
        score = v.get("score")
        if _is_number(score):
            total += score
            count += 1
    return total / count if count else None


def task_score(task: Mapping[str, Any]) -> float | None:
    """``stats.avg_score``, or the mean run score when the file has no stats."""
    stats = task.get("stats") or {}
    if _is_number(stats.get("avg_score")):
        return float(stats["avg_score"])
    scores = [s for s in (run_score(r) for r in task.get("runs", ())) if s is not None]
    return sum(scores) / len(scores) if scores else None


def task_pass_rate(task: Mapping[str, Any]) -> float | None:
    stats = task.get("stats") or {}
    if _is_number(stats.get("pass_rate")):
        return float(stats["pass_rate"])
    graded = [r for r in task.get("runs", ()) if r["status"] not in ("n/a", "skipped")]
    return sum(1 for r in graded if r["status"] == "passed") / len(graded) if graded else None


def task_flaky(task: Mapping[str, Any]) -> bool:
    stats = task.get("stats") or {}
    if isinstance(stats.get("flaky"), bool):
        return stats["flaky"]
    rate = task_pass_rate(task)
    return rate is not None and 0 < rate < 1


def run_tokens(run: dict[str, Any]) -> int | None:
    """Input + output tokens of one run, from whichever field the writer used."""
    digest = run.get("session_digest")
    if not isinstance(digest, dict):
        digest = None
    for usage in (run.get("usage"), digest and digest.get("usage")):
        if isinstance(usage, dict):
            tokens = _sum_numbers(usage.get("input_tokens"), usage.get("output_tokens"))
            if tokens is not None:
                return tokens
            if _is_number(usage.get("total_tokens")):
                return int(usage["total_tokens"])
    if digest is not None:  # waza 1.0 files: tokens_in / tokens_out / tokens_total
        if _is_number(digest.get("tokens_total")):
            return int(digest["tokens_total"])
        return _sum_numbers(digest.get("tokens_in"), digest.get("tokens_out"))
    return None


def _sum_numbers(a: Any, b: Any) -> int | None:
    """``int(a + b)`` of whichever of the two is a number; None when neither is."""
    a_num, b_num = _is_number(a), _is_number(b)
    if not (a_num or b_num):
        return None
    return int((a if a_num else 0) + (b if b_num else 0))


def tokens_of(runs: list[dict[str, Any]]) -> int | None:
    known = [t for t in (run_tokens(r) for r in runs) if t is not None]
    return sum(known) if known else None


def failed_graders(run: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, validation) of every grader that did not pass, in name order."""
    return sorted(((k, v) for k, v in run.get("validations", {}).items() if v.get("passed") is not True),
                  key=lambda kv: kv[0])


def text(value: Any) -> str:
    """A field shown to a person: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
