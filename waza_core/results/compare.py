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
from waza_core.results.stream import StreamedResults, open_stream

BUCKETS = ("0", "1", "2", "3+")
ALPHA = 0.05  # the level of compare's significance verdict (first file against the last)


def _delta(values: list[float | int | None]) -> float | int | None:
    first, last = values[0], values[-1]
    return None if first is None or last is None else last - first


def build_report(files: list[str], docs: list[Any]) -> dict[str, Any]:
    """The report of ``docs`` (full documents, or streamed ones: ``tasks`` may be any
    iterable). Each document's tasks are read once and each task is kept only as its row
    of figures (:func:`_task_figures`), so the memory of a compare of two files of 500,000
    runs is their bytes and one row per task, not the documents."""
    summaries = [_summary_of(d) for d in docs]
    report: dict[str, Any] = {
        "files": files,
        "models": [_config_of(d).get("model_id") or "" for d in docs],
        "aggregate_scores": [float(s["aggregate_score"]) for s in summaries],
        "success_rates": [float(s["success_rate"]) for s in summaries],
    }
    report["aggregate_score_delta"] = report["aggregate_scores"][-1] - report["aggregate_scores"][0]
    report["success_rate_delta"] = report["success_rates"][-1] - report["success_rates"][0]
    order: dict[str, str] = {}
    indexes: list[dict[str, tuple]] = []
    counts: list[dict[str, tuple[int, int]]] = []  # what the significance test reads of each task
    tools: list[dict[str, Any]] = []
    tokens: list[int | None] = []
    for d in docs:
        index: dict[str, tuple] = {}
        passed_graded: dict[str, tuple[int, int]] = {}
        metrics = _ToolMetrics()
        total_tokens: int | None = None
        for t in _tasks_of(d):
            order.setdefault(t["test_id"], t["display_name"])
            figures = _task_figures(t)
            index.setdefault(t["test_id"], figures)
            metrics.add(t)
            passed_graded.update(paired.task_counts({"tasks": [t]}))
            if figures[3] is not None:
                total_tokens = (total_tokens or 0) + figures[3]
        indexes.append(index)
        counts.append(passed_graded)
        tools.append(metrics.result())
        tokens.append(total_tokens)
    deltas = []
    for tid, name in order.items():
        found = [ix.get(tid) for ix in indexes]
        # waza counts a task without stats as 0.0; a task missing from a file is null here
        scores = [None if f is None else 0.0 if f[0] is None else f[0] for f in found]
        rates = [None if f is None else 0.0 if f[1] is None else f[1] for f in found]
        task_tokens = [f[3] if f else None for f in found]
        durations = [f[4] if f else None for f in found]
        deltas.append({
            "task_id": tid, "display_name": name, "scores": scores, "pass_rates": rates,
            "statuses": [f[2] if f else "n/a" for f in found],
            "score_delta": _delta(scores), "pass_rate_delta": _delta(rates),
            "tokens": task_tokens, "token_delta": _delta(task_tokens),
            "durations_ms": durations, "duration_delta_ms": _delta(durations),
        })
    report["task_deltas"] = deltas
    report["total_tests"] = [int(s["total_tests"]) for s in summaries]
    report["durations_ms"] = [int(s["duration_ms"]) for s in summaries]
    report["duration_delta_ms"] = report["durations_ms"][-1] - report["durations_ms"][0]
    report["tool_metrics"] = tools
    report["tokens"] = tokens
    report["token_delta"] = _delta(report["tokens"])
    # beyond waza: is the change from the first file to the last more than noise? (tasks paired)
    report["significance"] = paired.compare(_counted(counts[0]), _counted(counts[-1]), ALPHA)
    return report


_PASSED, _FAILED = {"status": "passed"}, {"status": "failed"}


def _counted(counts: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """A document of only what :func:`~waza_core.results.significance.task_counts` reads:
    each task's passed and graded runs (shared run objects: a few bytes a run)."""
    return {"tasks": [{"test_id": tid, "runs": [_PASSED] * passed + [_FAILED] * (graded - passed)}
                      for tid, (passed, graded) in counts.items()]}


def _summary_of(doc: Any) -> dict[str, Any]:
    return doc.header["summary"] if isinstance(doc, StreamedResults) else doc["summary"]


def _config_of(doc: Any) -> dict[str, Any]:
    return doc.header["config"] if isinstance(doc, StreamedResults) else doc["config"]


def _tasks_of(doc: Any) -> Any:
    return doc.tasks() if isinstance(doc, StreamedResults) else doc["tasks"]


def _task_figures(task: dict[str, Any]) -> tuple:
    """(score, pass rate, status, tokens, average duration) of one task: what compare keeps of it."""
    return (reading.task_score(task), reading.task_pass_rate(task), task["status"],
            reading.tokens_of(task["runs"]), _avg_duration(task))


def _avg_duration(task: dict[str, Any]) -> int | None:
    stats = task.get("stats") or {}
    avg = reading.number(stats.get("avg_duration_ms"))
    if avg is not None:
        return int(avg)
    runs = task["runs"]
    return int(sum(r["duration_ms"] for r in runs) / len(runs)) if runs else None


class _ToolMetrics:
    """waza's TOOL USE figures of one file (``tool_events``, results 1.1+), task by task."""

    def __init__(self) -> None:
        self.hist = dict.fromkeys(BUCKETS, 0)
        self.total = self.successful = self.with_tools = self.grader_tasks = self.grader_passes = self.tasks = 0

    def add(self, task: dict[str, Any]) -> None:
        self.tasks += 1
        calls = 0
        for run in task["runs"]:
            events = run.get("tool_events")
            if isinstance(events, list):
                calls += len(events)
                self.successful += sum(1 for e in events if isinstance(e, dict) and e.get("success") is True)
        self.hist[BUCKETS[min(calls, 3)]] += 1
        self.with_tools += calls > 0
        self.total += calls
        verdicts = [v.get("passed") is True for run in task["runs"] for v in run["validations"].values()
                    if v.get("type") == "tool_calls"]
        if verdicts:
            self.grader_tasks += 1
            self.grader_passes += all(verdicts)

    def result(self) -> dict[str, Any]:
        n, total = self.tasks, self.total
        return {
            "total_calls": total, "tasks_with_tools": self.with_tools,
            "avg_calls_per_task": total / n if n else 0.0,
            "success_rate": self.successful / total if total else 0.0,
            "selection_accuracy": self.grader_passes / self.grader_tasks if self.grader_tasks else 0.0,
            "call_count_histogram": self.hist,
        }


def tool_metrics(doc: dict[str, Any]) -> dict[str, Any]:
    """waza's TOOL USE figures of one file (``tool_events``, results 1.1+)."""
    metrics = _ToolMetrics()
    for task in _tasks_of(doc):
        metrics.add(task)
    return metrics.result()


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


def load_all(paths: list[str]) -> list[Any]:
    """Each file streamed (:mod:`waza_core.results.stream`: bounded memory), or read whole
    when only the full, tolerant reading takes it; an optimizer report is refused as
    :func:`~waza_core.results.reading.read_results` refuses it."""
    docs: list[Any] = []
    for path in paths:
        streamed = open_stream(path)
        docs.append(streamed if streamed is not None else read_results(path))
    return docs
