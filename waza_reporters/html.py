"""``--reporter html:PATH``: one self-contained static HTML file.

The page needs no network at all: its CSS and script are inline, the data is one
JSON island the script reads, and a Content-Security-Policy forbids every request
(``default-src 'none'``) and every script but the page's own (by hash). Text from
suites, agents and graders only ever reaches the page through ``textContent``, and
the JSON island escapes ``<``, ``>`` and ``&``, so agent output cannot inject markup
or script. Tables are paged, so a 20,000-run report opens at once.

It shows the summary, a per-task table that sorts and filters, each run's output,
transcript, tool events and grader feedback, the trial spread of flaky tasks and,
for a ``waza optimize`` report.json, the candidates side by side.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import lru_cache
from importlib import resources
from typing import IO, Any

from waza_core import Reporter, ResultsView, hookimpl


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    folder = resources.files("waza_reporters") / "html_assets"
    return (folder / "report.css").read_text("utf-8"), (folder / "report.js").read_text("utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def json_island(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&``.

    ``ensure_ascii`` also turns lone surrogates from hostile text into escapes, so the
    page always encodes as UTF-8.
    """
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n… ({len(value) - limit} more characters cut; see the results file)"
    return value


def _cut_list(items: Any, limit: int) -> Any:
    """A transcript or tool-event list with each long string cut (kept structured)."""
    if not isinstance(items, list):
        return items
    out = []
    for item in items:
        if isinstance(item, dict):
            out.append({k: _cut(v if isinstance(v, (str, int, float, bool)) or v is None
                                else json.dumps(v, ensure_ascii=False, default=str), limit)
                        for k, v in item.items()})
        else:
            out.append(_cut(item if isinstance(item, str) else json.dumps(item, default=str), limit))
    return out


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class HtmlReporter(Reporter):
    name = "html"
    summary = "one self-contained HTML page: sortable, filterable tasks, every run's evidence"
    suffix = ".html"
    accepts = frozenset({"results", "optimizer-report"})
    option_help = {
        "max_text": "most characters kept of each output, transcript or tool text (default 20000)",
        "page_size": "task rows per page of the table (default 50)",
        "title": "the page title instead of the eval name",
    }

    def check_options(self) -> list[str]:
        problems = super().check_options()
        for key, default in (("max_text", 20000), ("page_size", 50)):
            try:
                self.option_int(key, default, minimum=1)
            except ValueError as exc:
                problems.append(str(exc))
        return problems

    def write(self, results: ResultsView, out: IO[bytes]) -> None:
        css, js = _assets()
        if results.kind == "optimizer-report":
            data = self.optimizer_payload(results.header)
            title = self.options.get("title") or "waza optimize report"
        else:
            data = self.results_payload(results)
            title = self.options.get("title") or f"waza: {results.header.get('eval_name') or 'results'}"
        data["page_size"] = self.option_int("page_size", 50, minimum=1)
        data["title"] = title
        csp = (f"default-src 'none'; script-src {_csp_hash(js)}; style-src {_csp_hash(css)}; "
               "img-src data:; base-uri 'none'; form-action 'none'")
        page = (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
            "<noscript><p>This report needs JavaScript to show its data (no network access is needed).</p>"
            "</noscript>\n<main id=\"app\" aria-live=\"polite\"></main>\n"
        )
        out.write(page.encode("utf-8"))
        out.write(b'<script id="waza-data" type="application/json">')
        out.write(json_island(data).encode("ascii"))
        out.write(f"</script>\n<script>{js}</script>\n</body>\n</html>\n".encode("utf-8"))

    # -- results files -------------------------------------------------------------
    def results_payload(self, results: ResultsView) -> dict[str, Any]:
        limit = self.option_int("max_text", 20000, minimum=1)
        h = results.header
        config = h.get("config") or {}
        return {
            "kind": "results",
            "header": {
                "eval_name": h.get("eval_name"), "skill": h.get("skill"), "eval_id": h.get("eval_id"),
                "timestamp": h.get("timestamp"), "waza_version": h.get("waza_version"),
                "schema_version": h.get("schemaVersion"), "incomplete": bool(h.get("incomplete")),
                "model": config.get("model_id"), "engine": config.get("engine_type"),
                "trials": config.get("runs_per_test"), "summary": results.summary,
            },
            "tasks": [self._task(t, limit) for t in results.tasks()],
        }

    def _task(self, task: dict[str, Any], limit: int) -> dict[str, Any]:
        runs = task.get("runs") or []
        durations = [d for d in (_num(r.get("duration_ms")) for r in runs) if d is not None]
        tokens = [self._tokens(r) for r in runs]
        known_tokens = [t for t in tokens if t is not None]
        feedback: dict[str, None] = {}
        for r in runs:
            if r.get("error_msg"):
                feedback.setdefault(str(r["error_msg"]), None)
            for name, v in ResultsView.failed_graders(r):
                feedback.setdefault(f"{name}: {v.get('feedback') or 'failed'}", None)
        tags = task.get("tags")
        return {
            "id": task.get("test_id"), "name": task.get("display_name"), "status": task.get("status"),
            "score": ResultsView.task_score(task), "pass_rate": ResultsView.task_pass_rate(task),
            "flaky": ResultsView.task_flaky(task), "golden": bool(task.get("golden")),
            "cached": bool(task.get("cached")),
            "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
            "duration_ms": sum(durations) / len(durations) if durations else None,
            "tokens": sum(known_tokens) if known_tokens else None,
            "feedback": _cut("\n".join(feedback), 2000),
            "runs": [self._run(r, t, limit) for r, t in zip(runs, tokens, strict=True)],
        }

    @staticmethod
    def _tokens(run: dict[str, Any]) -> int | None:
        usage = run.get("usage") if isinstance(run.get("usage"), dict) else \
            (run.get("session_digest") or {}).get("usage")
        if isinstance(usage, dict):
            parts = [_num(usage.get(k)) for k in ("input_tokens", "output_tokens")]
            if any(p is not None for p in parts):
                return int(sum(p for p in parts if p is not None))
        digest = run.get("session_digest") or {}
        total = _num(digest.get("tokens_total")) if isinstance(digest, dict) else None
        return int(total) if total is not None else None

    def _run(self, run: dict[str, Any], tokens: int | None, limit: int) -> dict[str, Any]:
        validations = []
        for name, v in sorted((run.get("validations") or {}).items()):
            validations.append({"name": name, "type": v.get("type"), "passed": v.get("passed") is True,
                                "score": _num(v.get("score")), "feedback": _cut(v.get("feedback"), limit)})
        digest = run.get("session_digest") or {}
        tool_events = run.get("tool_events")
        if tool_events is None and isinstance(digest, dict):
            tool_events = digest.get("tool_calls")  # older files: the digest's tool calls
        return {
            "number": run.get("run_number"), "status": run.get("status"), "score": ResultsView.run_score(run),
            "attempts": run.get("attempts"), "duration_ms": _num(run.get("duration_ms")), "tokens": tokens,
            "error": _cut(run.get("error_msg"), limit),
            "output": _cut(run.get("final_output"), limit),
            "transcript": _cut_list(run.get("transcript"), limit),
            "tool_events": _cut_list(tool_events, limit),
            "validations": validations,
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
