"""``--reporter html:PATH``: one self-contained static HTML file.

The page needs no network at all: its CSS and script are inline, the data is JSON in
``<script type="application/json">`` elements the script reads, and a
Content-Security-Policy forbids every request (``default-src 'none'``) and every script
but the page's own (by hash). Text from suites, agents and graders only ever reaches
the page through ``textContent``, and the JSON escapes ``<``, ``>`` and ``&``, so agent
output cannot inject markup or script.

Built to open at once whatever the size of the run: first comes a small index (one
entry per task: status, score, pass rate, trial spread, feedback), then the script,
which shows the summary and the first page of the task table; then each task's runs as
its own JSON element, as the results file has them, parsed only when a task is opened.
Of a saved file, those are the file's own bytes (see ``ResultsView.outline``): no
output or transcript is decoded or encoded again.

It shows the summary, a per-task table that sorts and filters, each run's output,
transcript, tool events and grader feedback, the trial spread of flaky tasks and,
for a ``waza optimize`` report.json, the candidates side by side.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import IO, Any

import msgspec

from waza_core import Reporter, ResultsView, describe_significance, hookimpl


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    folder = resources.files("waza_reporters") / "html_assets"
    return (folder / "report.css").read_text("utf-8"), (folder / "report.js").read_text("utf-8")


def _escape(text: str) -> str:
    """``html.escape`` without importing the ``html`` package (and its entity tables) at start-up."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#x27;"))


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def json_island(data: Any) -> bytes:
    """UTF-8 JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&``.

    Text with a lone surrogate (hostile or broken agent output) cannot be UTF-8: then
    the JSON is written with ``\\u`` escapes for everything outside ASCII. A number
    JSON cannot carry (NaN, infinity) becomes null rather than breaking the page.
    """
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:
        return json_island(_finite(data))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json_island_ascii(data)


def fast_island(data: Any) -> bytes:
    """:func:`json_island` through msgspec, several times faster for a large index; a value
    msgspec cannot encode (a lone surrogate, an object that is not JSON) goes the slow way."""

    try:
        raw = msgspec.json.encode(data)
    except (TypeError, ValueError):
        return json_island(data)
    return raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def json_island_ascii(data: Any) -> bytes:
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("ascii")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n… ({len(value) - limit} more characters cut; see the results file)"
    return value


def _num(value: Any) -> float | None:
    """A finite JSON number as a float; None for anything else (bools, NaN, text)."""
    kind = type(value)
    return float(value) if kind is int or (kind is float and value - value == 0.0) else None


def _judge_agreement(block: Any) -> dict[str, Any] | None:
    """``waza grade --repeat K``: what the page's "Judge agreement" table shows; None without it."""
    if not isinstance(block, dict) or not isinstance(block.get("graders"), dict):
        return None
    keys = ("type", "percent_agreement", "alpha", "alpha_reason", "alpha_ci", "score_alpha", "runs_compared",
            "runs_unanimous", "judgment_errors", "unstable")
    return {"repeat": _num(block.get("repeat")), "min_alpha": _num(block.get("min_alpha")),
            "graders": [{"name": str(name), **{k: _finite(g.get(k)) for k in keys}}
                        for name, g in block["graders"].items() if isinstance(g, dict)]}


def _skill_impact(header: dict[str, Any], tasks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """An A/B run: what the page's "Skill impact" section shows (the paired test's line, in
    the words every report uses, where the baseline came from, each task's change); None
    for any other file."""
    sig = header.get("skill_impact_significance")
    if not isinstance(sig, dict):
        return None
    try:
        line = describe_significance(sig)
    except (KeyError, TypeError, ValueError):  # a hand-edited object: say so rather than break the page
        line = "Significance: not shown (the file's skill_impact_significance is incomplete)"
    source = header.get("baseline_from") if isinstance(header.get("baseline_from"), dict) else None
    rows = []
    for t in tasks:
        impact = t.get("skill_impact")
        if isinstance(impact, dict):
            rows.append({"name": t.get("display_name"), "id": t.get("test_id"),
                         "baseline": _num(impact.get("pass_rate_baseline")),
                         "with": _num(impact.get("pass_rate_with_skills")), "delta": _num(impact.get("delta"))})
    return {"verdict": str(sig.get("verdict") or ""), "line": line, "tasks": rows,
            "source": source and {"file": str(source.get("file")), "part": source.get("part"),
                                  "eval_id": source.get("eval_id"), "tasks_compared": source.get("tasks_compared"),
                                  "warnings": [str(w) for w in source.get("warnings") or ()]}}


#: the id of task ``i``'s JSON element is TASK_ID_PREFIX + i
TASK_ID_PREFIX = "waza-task-"


class HtmlReporter(Reporter):
    name = "html"
    summary = "one self-contained HTML page: sortable, filterable tasks, every run's evidence"
    suffix = ".html"
    accepts = frozenset({"results", "optimizer-report"})
    option_help = {
        "max_text": "most characters shown of each output, error, transcript or tool entry before a "
                    "'show all' button (default 20000)",
        "page_size": "task rows per page of the table (default 50)",
        "title": "the page title instead of the eval name",
    }
    int_options = {"max_text": (20000, 1), "page_size": (50, 1)}

    def write(self, results: ResultsView, out: IO[bytes]) -> None:
        task_sources: Iterable[bytes] = ()
        if results.kind == "optimizer-report":
            data = self.optimizer_payload(results.header)
            title = self.options.get("title") or "waza optimize report"
        else:
            light = results.outline()
            if light is not None:  # the file's own bytes for each task
                header, tasks, task_sources = light.document, light.document["tasks"], light.task_sources
            else:  # a document only Python's JSON can carry: encode each task
                header, tasks = results.header, list(results.tasks())
                task_sources = (fast_island(t) for t in tasks)
            data = self.results_payload(header, tasks)
            title = self.options.get("title") or f"waza: {header.get('eval_name') or 'results'}"
        data["page_size"] = self.option_int("page_size")
        data["max_text"] = self.option_int("max_text")
        data["title"] = title
        out.write(self._page_head(title))
        out.write(b'<script id="waza-data" type="application/json">')
        out.write(fast_island(data))
        out.write(f"</script>\n<script>{_assets()[1]}</script>\n".encode("utf-8"))
        chunk: list[bytes] = []
        for i, source in enumerate(task_sources):
            chunk += (f'<script type="application/json" id="{TASK_ID_PREFIX}{i}">'.encode("ascii"), source,
                      b"</script>\n")
            if len(chunk) >= 3000:
                out.write(b"".join(chunk))
                chunk.clear()
        chunk.append(b"</body>\n</html>\n")
        out.write(b"".join(chunk))

    @staticmethod
    def _page_head(title: str) -> bytes:
        css, js = _assets()
        csp = (f"default-src 'none'; script-src {_csp_hash(js)}; style-src {_csp_hash(css)}; "
               "img-src data:; base-uri 'none'; form-action 'none'")
        page = (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            f"<title>{_escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
            "<noscript><p>This report needs JavaScript to show its data (no network access is needed).</p>"
            "</noscript>\n<main id=\"app\" aria-live=\"polite\"></main>\n"
        )
        return page.encode("utf-8", "replace")  # a lone surrogate in a name: "?" in <title>

    # -- results files -------------------------------------------------------------
    def results_payload(self, h: dict[str, Any], tasks: list[dict[str, Any]]) -> dict[str, Any]:
        """The index the page starts from: the header and one small entry per task."""
        config = h.get("config") or {}
        tally = ResultsView.triage_tally(h.get("audit"))
        for t in tasks:
            tally.add(t)
        return {
            "kind": "results",
            "header": {
                "eval_name": h.get("eval_name"), "skill": h.get("skill"), "eval_id": h.get("eval_id"),
                "timestamp": h.get("timestamp"), "waza_version": h.get("waza_version"),
                "schema_version": h.get("schemaVersion"), "incomplete": bool(h.get("incomplete")),
                "model": config.get("model_id"), "engine": config.get("engine_type"),
                "trials": config.get("runs_per_test"), "summary": h.get("summary") or {},
                "triage": tally.groups(), "audit": h.get("audit") if isinstance(h.get("audit"), dict) else None,
                "judge_agreement": _judge_agreement(h.get("judge_agreement")),
                "skill_impact": _skill_impact(h, tasks),
            },
            "tasks": [self._task(t) for t in tasks],
        }

    @staticmethod
    def _task(task: dict[str, Any]) -> dict[str, Any]:
        """One task of the index: what its table row, trial spread and flaky entry show."""
        feedback: dict[str, None] = {}
        duration, timed = 0.0, 0
        tokens = None
        spread = []
        for k, r in enumerate(task.get("runs") or ()):
            if r.get("error_msg"):
                feedback[str(r["error_msg"])] = None
            for name, v in (r.get("validations") or {}).items():
                if v.get("passed") is not True:
                    feedback[f"{name}: {v.get('feedback') or 'failed'}"] = None
            d = _num(r.get("duration_ms"))
            if d is not None:
                duration += d
                timed += 1
            t = ResultsView.run_tokens(r)
            if t is not None:
                tokens = (tokens or 0) + t
            number = r.get("run_number")
            spread.append([number if _num(number) is not None else k + 1, r.get("status"),
                           ResultsView.run_score(r), t])
        tags = task.get("tags")
        return {
            "id": task.get("test_id"), "name": task.get("display_name"), "status": task.get("status"),
            "score": ResultsView.task_score(task), "pass_rate": ResultsView.task_pass_rate(task),
            "flaky": ResultsView.task_flaky(task), "golden": bool(task.get("golden")),
            "cached": bool(task.get("cached")),
            "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
            "duration_ms": duration / timed if timed else None,
            "tokens": tokens,
            "feedback": _cut("\n".join(sorted(feedback)), 2000),
            "runs": spread,
        }

    # -- optimizer reports -----------------------------------------------------------
    def optimizer_payload(self, report: dict[str, Any]) -> dict[str, Any]:
        candidates = [c for c in report.get("candidates") or [] if isinstance(c, dict)]
        evaluations = [e for e in report.get("evaluations") or [] if isinstance(e, dict)]
        qualification = report.get("qualification") if isinstance(report.get("qualification"), dict) else {}
        columns = []
        for c in candidates:
            cid = c.get("id") or ""
            evs = [e for e in evaluations if e.get("candidate_id") == cid]
            files = [f for f in c.get("files") or [] if isinstance(f, dict)]
            columns.append({
                "id": cid, "short": cid[:12], "origin": c.get("origin"), "iteration": c.get("iteration"),
                "parent": (c.get("parent_id") or "")[:12] or None,
                "files": [f.get("path") for f in files], "bytes": sum(int(_num(f.get("bytes")) or 0) for f in files),
                "seed": cid == report.get("seed_candidate_id"), "best": cid == report.get("best_candidate_id"),
                "evaluations": [{"index": e.get("index"), "split": e.get("split"), "role": e.get("role"),
                                 "state": e.get("state"), "score": _num(e.get("score")),
                                 "pass_rate": _num(e.get("pass_rate")), "reason": e.get("reason")} for e in evs],
                "tasks": self._candidate_tasks(evs),
            })
        task_ids: dict[str, None] = {}
        for col in columns:
            for key in col["tasks"]:
                task_ids.setdefault(key, None)
        proposals = [{"iteration": p.get("iteration"), "result": p.get("result"),
                      "candidate": (p.get("candidate_id") or "")[:12] or None,
                      "failure": (p.get("failure") or {}).get("message") if isinstance(p.get("failure"), dict)
                      else None}
                     for p in report.get("proposals") or [] if isinstance(p, dict)]
        failure = report.get("failure") if isinstance(report.get("failure"), dict) else None
        return {
            "kind": "optimizer-report",
            "header": {"outcome": report.get("outcome"), "stop_reason": report.get("stop_reason"),
                       "exit_code": report.get("exit_code"), "target": report.get("target"),
                       "started_at": report.get("started_at"), "duration_ms": report.get("duration_ms"),
                       "waza_version": report.get("waza_version"),
                       "adapter": (report.get("adapter") or {}).get("kind")
                       if isinstance(report.get("adapter"), dict) else None,
                       "failure": failure and {"category": failure.get("category"),
                                               "message": failure.get("message")},
                       "qualification": {k: qualification.get(k) for k in
                                         ("status", "decision", "reason", "seed_score", "candidate_score",
                                          "improvement", "min_improvement")}},
            "candidates": columns,
            "task_ids": sorted(task_ids),
            "proposals": proposals,
        }

    @staticmethod
    def _candidate_tasks(evaluations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """task key ("split/task id") -> the candidate's status, score and failed graders there."""
        out: dict[str, dict[str, Any]] = {}
        for e in evaluations:
            feedback = e.get("feedback") if isinstance(e.get("feedback"), dict) else {}
            for t in feedback.get("tasks") or []:
                if not isinstance(t, dict):
                    continue
                graders = [g.get("name") or g.get("grader") or "?" for g in t.get("failed_graders") or []
                           if isinstance(g, dict)]
                out[f"{e.get('split')}/{t.get('task_id')}"] = {"status": t.get("status"),
                                                               "score": _num(t.get("score")),
                                                               "failed": graders}
        return out


@hookimpl
def waza_register_reporters(register):
    register(HtmlReporter)
