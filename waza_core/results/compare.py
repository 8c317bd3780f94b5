"""``waza compare A.json B.json [...]``: per-task and summary deltas between results files.

The JSON report has waza's keys (``cmd/waza/cmd_compare.go``): ``files``, ``models``,
``aggregate_scores``, ``success_rates``, ``aggregate_score_delta``,
``success_rate_delta``, ``task_deltas`` (``task_id``, ``display_name``, ``scores``,
``pass_rates``, ``statuses``, ``score_delta``, ``pass_rate_delta``), ``total_tests``,
``durations_ms``, ``duration_delta_ms`` and ``tool_metrics``. Deltas are last file
minus first. Ours in addition: ``tokens``/``token_delta`` (suite), and per task
``tokens``, ``durations_ms``, ``token_delta``, ``duration_delta_ms``.

A trap of waza fixed: a task missing from one file is a NaN there, which Go's JSON
encoder refuses (``waza compare --format json`` then fails); we write ``null`` (and
``n/a`` as its status, as waza does).
"""

from __future__ import annotations

from typing import Any

from waza_core.results import reading
from waza_core.results import significance as paired
from waza_core.results.load import read_results
from waza_core.results.markdown_text import escape_markdown, terminal_text

BUCKETS = ("0", "1", "2", "3+")
ALPHA = 0.05  # the level of compare's significance verdict (first file against the last)


def _delta(values: list[float | int | None]) -> float | int | None:
    first, last = values[0], values[-1]
    return None if first is None or last is None else last - first


def build_report(files: list[str], docs: list[dict[str, Any]]) -> dict[str, Any]:
    report: dict[str, Any] = {
        "files": files,
        "models": [d["config"].get("model_id") or "" for d in docs],
        "aggregate_scores": [float(d["summary"]["aggregate_score"]) for d in docs],
        "success_rates": [float(d["summary"]["success_rate"]) for d in docs],
    }
    report["aggregate_score_delta"] = report["aggregate_scores"][-1] - report["aggregate_scores"][0]
    report["success_rate_delta"] = report["success_rates"][-1] - report["success_rates"][0]
    order: dict[str, str] = {}
    for d in docs:
        for t in d["tasks"]:
            order.setdefault(t["test_id"], t["display_name"])
    indexes = [{t["test_id"]: t for t in d["tasks"]} for d in docs]
    deltas = []
    for tid, name in order.items():
        found = [ix.get(tid) for ix in indexes]
        scores = [reading.task_score(t) if t else None for t in found]
        rates = [reading.task_pass_rate(t) if t else None for t in found]
        # waza counts a task without stats as 0.0; a task missing from a file is null here
        scores = [s if s is not None or t is None else 0.0 for s, t in zip(scores, found, strict=True)]
        rates = [r if r is not None or t is None else 0.0 for r, t in zip(rates, found, strict=True)]
        tokens = [reading.tokens_of(t["runs"]) if t else None for t in found]
        durations = [_avg_duration(t) if t else None for t in found]
        deltas.append({
            "task_id": tid, "display_name": name, "scores": scores, "pass_rates": rates,
            "statuses": [t["status"] if t else "n/a" for t in found],
            "score_delta": _delta(scores), "pass_rate_delta": _delta(rates),
            "tokens": tokens, "token_delta": _delta(tokens),
            "durations_ms": durations, "duration_delta_ms": _delta(durations),
        })
    report["task_deltas"] = deltas
    report["total_tests"] = [int(d["summary"]["total_tests"]) for d in docs]
    report["durations_ms"] = [int(d["summary"]["duration_ms"]) for d in docs]
    report["duration_delta_ms"] = report["durations_ms"][-1] - report["durations_ms"][0]
    report["tool_metrics"] = [tool_metrics(d) for d in docs]
    report["tokens"] = [reading.tokens_of([r for t in d["tasks"] for r in t["runs"]]) for d in docs]
    report["token_delta"] = _delta(report["tokens"])
    # beyond waza: is the change from the first file to the last more than noise? (tasks paired)
    report["significance"] = paired.compare(docs[0], docs[-1], ALPHA)
    return report


def _avg_duration(task: dict[str, Any]) -> int | None:
    stats = task.get("stats") or {}
    avg = reading.number(stats.get("avg_duration_ms"))
    if avg is not None:
        return int(avg)
    runs = task["runs"]
    return int(sum(r["duration_ms"] for r in runs) / len(runs)) if runs else None


def tool_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """waza's TOOL USE figures of one file (``tool_events``, results 1.1+)."""
    hist = dict.fromkeys(BUCKETS, 0)
    total = successful = with_tools = grader_tasks = grader_passes = 0
    for task in doc["tasks"]:
        calls = 0
        for run in task["runs"]:
            events = run.get("tool_events")
            if isinstance(events, list):
                calls += len(events)
                successful += sum(1 for e in events if isinstance(e, dict) and e.get("success") is True)
        hist[BUCKETS[min(calls, 3)]] += 1
        with_tools += calls > 0
        total += calls
        verdicts = [v.get("passed") is True for run in task["runs"] for v in run["validations"].values()
                    if v.get("type") == "tool_calls"]
        if verdicts:
            grader_tasks += 1
            grader_passes += all(verdicts)
    n = len(doc["tasks"])
    return {
        "total_calls": total, "tasks_with_tools": with_tools,
        "avg_calls_per_task": total / n if n else 0.0,
        "success_rate": successful / total if total else 0.0,
        "selection_accuracy": grader_passes / grader_tasks if grader_tasks else 0.0,
        "call_count_histogram": hist,
    }


def has_tool_data(report: dict[str, Any]) -> bool:
    return any(m["total_calls"] > 0 for m in report["tool_metrics"])


# -- rendering ------------------------------------------------------------------------

def _f(value: Any, spec: str, missing: str = "n/a") -> str:
    return missing if value is None else format(value, spec)


def render_table(r: dict[str, Any]) -> str:
    n = len(r["files"])
    rule, thin = "=" * 70, "-" * 70
    out = [rule, " COMPARISON REPORT", rule, ""]
    out += [f"  [{i + 1}] {terminal_text(f)}  (model: {terminal_text(r['models'][i])})"
            for i, f in enumerate(r["files"])]
    out += ["", thin, " AGGREGATE", thin]
    head = f"  {'Metric':<20}" + "".join(f"  [{i + 1}]      " for i in range(n)) + "  Delta"

    def row(label: str, values: list, spec: str, delta: Any, dspec: str, suffix: str = "") -> str:
        cells = "".join(f"  {_f(v, spec) + suffix:<9}" for v in values)
        return f"  {label:<20}{cells}  {_f(delta, dspec)}{suffix if delta is not None else ''}"

    out += [head,
            row("Score", r["aggregate_scores"], ".4f", r["aggregate_score_delta"], "+.4f"),
            row("Success Rate", [v * 100 for v in r["success_rates"]], ".1f", r["success_rate_delta"] * 100, "+.1f",
                "%"),
            row("Duration (ms)", r["durations_ms"], "d", r["duration_delta_ms"], "+d"),
            row("Tokens", r["tokens"], "d", r["token_delta"], "+d"), ""]
    if r.get("significance"):
        out += [f"  {terminal_text(paired.describe(r['significance']))}", ""]
    if has_tool_data(r):
        tm = r["tool_metrics"]
        out += [thin, " TOOL USE", thin,
                row("Total calls", [m["total_calls"] for m in tm], "d",
                    tm[-1]["total_calls"] - tm[0]["total_calls"], "+d"),
                row("Tasks w/ tools", [m["tasks_with_tools"] for m in tm], "d",
                    tm[-1]["tasks_with_tools"] - tm[0]["tasks_with_tools"], "+d"),
                row("Avg calls/task", [m["avg_calls_per_task"] for m in tm], ".2f",
                    tm[-1]["avg_calls_per_task"] - tm[0]["avg_calls_per_task"], "+.2f"),
                row("Success rate", [m["success_rate"] * 100 for m in tm], ".1f",
                    (tm[-1]["success_rate"] - tm[0]["success_rate"]) * 100, "+.1f", "%"),
                row("Selection accuracy", [m["selection_accuracy"] * 100 for m in tm], ".1f",
                    (tm[-1]["selection_accuracy"] - tm[0]["selection_accuracy"]) * 100, "+.1f", "%")]
        for b in BUCKETS:
            out.append(row(f"Tasks w/ {b} calls", [m["call_count_histogram"][b] for m in tm], "d",
                           tm[-1]["call_count_histogram"][b] - tm[0]["call_count_histogram"][b], "+d"))
        out.append("")
    out += [thin, " PER-TASK DELTAS", thin,
            f"  {'Task':<25}" + "".join(f"  [{i + 1}] Score" for i in range(n)) + "  Delta     Pass rate Δ"]
    for t in r["task_deltas"]:
        name = terminal_text(t["display_name"])
        name = name[:22] + "..." if len(name) > 25 else name
        delta = t["score_delta"]
        icon = " " if delta is None or delta == 0 else ("↑" if delta > 0 else "↓")
        scores = "".join(f"  {_f(s, '.4f'):<9}" for s in t["scores"])
        rate = _f(None if t["pass_rate_delta"] is None else t["pass_rate_delta"] * 100, "+.1f")
        out.append(f"  {name:<25}{scores}  {icon}{_f(delta, '+.4f'):<9} {rate}{'%' if rate != 'n/a' else ''}")
    return "\n".join(out) + "\n\n"


def render_markdown(r: dict[str, Any]) -> str:
    n = len(r["files"])
    cols = " | ".join(f"[{i + 1}]" for i in range(n))
    out = ["## waza compare", ""]
    out += [f"- [{i + 1}] {escape_markdown(f)} (model: {escape_markdown(r['models'][i] or 'n/a')})"
            for i, f in enumerate(r["files"])]
    out += ["", f"| Metric | {cols} | Delta |", "|---|" + "---:|" * (n + 1)]

    def row(label: str, values: list, spec: str, delta: Any, dspec: str, suffix: str = "") -> str:
        cells = " | ".join(_f(v, spec) + (suffix if v is not None else "") for v in values)
        return f"| {label} | {cells} | {_f(delta, dspec)}{suffix if delta is not None else ''} |"

    out += [row("Aggregate score", r["aggregate_scores"], ".4f", r["aggregate_score_delta"], "+.4f"),
            row("Success rate", [v * 100 for v in r["success_rates"]], ".1f", r["success_rate_delta"] * 100,
                "+.1f", "%"),
            row("Duration (ms)", r["durations_ms"], "d", r["duration_delta_ms"], "+d"),
            row("Tokens", r["tokens"], "d", r["token_delta"], "+d")]
    if r.get("significance"):
        out += ["", escape_markdown(paired.describe(r["significance"]))]
    if has_tool_data(r):
        tm = r["tool_metrics"]
        out += ["", "### Tool use", "", f"| Metric | {cols} | Delta |", "|---|" + "---:|" * (n + 1),
                row("Total calls", [m["total_calls"] for m in tm], "d",
                    tm[-1]["total_calls"] - tm[0]["total_calls"], "+d"),
                row("Tasks with tools", [m["tasks_with_tools"] for m in tm], "d",
                    tm[-1]["tasks_with_tools"] - tm[0]["tasks_with_tools"], "+d"),
                row("Avg calls per task", [m["avg_calls_per_task"] for m in tm], ".2f",
                    tm[-1]["avg_calls_per_task"] - tm[0]["avg_calls_per_task"], "+.2f"),
                row("Call success rate", [m["success_rate"] * 100 for m in tm], ".1f",
                    (tm[-1]["success_rate"] - tm[0]["success_rate"]) * 100, "+.1f", "%"),
                row("Selection accuracy", [m["selection_accuracy"] * 100 for m in tm], ".1f",
                    (tm[-1]["selection_accuracy"] - tm[0]["selection_accuracy"]) * 100, "+.1f", "%")]
    out += ["", "### Per task", "", f"| Task | {cols} | Score Δ | Pass rate Δ |", "|---|" + "---:|" * (n + 2)]
    for t in r["task_deltas"]:
        cells = " | ".join(f"{_f(s, '.2f', '–')} ({escape_markdown(st, 40)})"
                           for s, st in zip(t["scores"], t["statuses"], strict=True))
        rate = t["pass_rate_delta"]
        out.append(f"| {escape_markdown(t['display_name'], 120)} | {cells} | {_f(t['score_delta'], '+.2f', '–')} | "
                   f"{_f(None if rate is None else rate * 100, '+.1f', '–')}{'%' if rate is not None else ''} |")
    return "\n".join(out) + "\n"


def load_all(paths: list[str]) -> list[dict[str, Any]]:
    return [read_results(p) for p in paths]
