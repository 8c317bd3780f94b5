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


def json_island(data: Any) -> bytes:
    """UTF-8 JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&``.

    Text with a lone surrogate (hostile or broken agent output) cannot be UTF-8: then
    the JSON is written with ``\\u`` escapes for everything outside ASCII.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json_island_ascii(data)


def json_island_ascii(data: Any) -> bytes:
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("ascii")


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n… ({len(value) - limit} more characters cut; see the results file)"
    return value


#: the run fields the page uses (a file may lack any of them)
RUN_FIELDS = ("run_number", "status", "attempts", "duration_ms", "validations", "final_output", "error_msg",
              "transcript", "tool_events", "usage", "cached")
#: token counters of waza 1.0 files, kept from the session digest when a run has no usage
DIGEST_TOKENS = ("usage", "tokens_in", "tokens_out", "tokens_total")


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
        out.write(page.encode("utf-8", "replace"))  # a lone surrogate in a name: "?" in <title>
        out.write(b'<script id="waza-data" type="application/json">')
        out.write(json_island(data))
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
        feedback: dict[str, None] = {}
        durations = []
        for r in runs:
            if r.get("error_msg"):
                feedback.setdefault(str(r["error_msg"]), None)
            for name, v in (r.get("validations") or {}).items():
                if isinstance(v, dict) and v.get("passed") is not True:
                    feedback.setdefault(f"{name}: {v.get('feedback') or 'failed'}", None)
            d = r.get("duration_ms")
            if isinstance(d, (int, float)) and not isinstance(d, bool):
                durations.append(d)
        tags = task.get("tags")
        return {
            "id": task.get("test_id"), "name": task.get("display_name"), "status": task.get("status"),
            "score": ResultsView.task_score(task), "pass_rate": ResultsView.task_pass_rate(task),
            "flaky": ResultsView.task_flaky(task), "golden": bool(task.get("golden")),
            "cached": bool(task.get("cached")),
            "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
            "duration_ms": sum(durations) / len(durations) if durations else None,
            "feedback": _cut("\n".join(sorted(feedback)), 2000),
            "runs": [self._run(r, limit) for r in runs],
        }

    @staticmethod
    def _run(run: dict[str, Any], limit: int) -> dict[str, Any]:
        """The fields of a run the page shows, as the results file has them (the page reads
        both our files and waza's); long outputs and errors are cut. Transcripts and tool
        events are kept whole, as in the results file: checking every entry of 20,000
        runs cost more than the rest of the report."""
        out = {k: run[k] for k in RUN_FIELDS if k in run}
        for key in ("final_output", "error_msg"):
            value = out.get(key)
            if isinstance(value, str) and len(value) > limit:
                out[key] = _cut(value, limit)
            elif value is not None and not isinstance(value, str):
                out[key] = json.dumps(value, default=str)
        digest = run.get("session_digest")
        if isinstance(digest, dict):
            if "tool_events" not in out and isinstance(digest.get("tool_calls"), list):
                out["tool_events"] = digest["tool_calls"]  # older files: the digest's tool calls
            if "usage" not in out or not isinstance(out["usage"], dict):
                out["session_digest"] = {k: digest[k] for k in DIGEST_TOKENS if k in digest}
        return out

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
