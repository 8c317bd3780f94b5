"""The one place where results values become JSON and JSON becomes results values.

Encoding (``*_to_json``, :func:`encode_results`) writes the fields of
:mod:`waza_core.results.model` in a fixed order, then each value's ``extra`` fields.

Decoding (:func:`decode_results`, :func:`read_results`) is tolerant, because it reads
files of every waza (Go) version (``schemaVersion`` absent, 1.0 to 1.5), our own, and
hand-edited ones: a missing field takes its default, an unknown field is kept in
``extra``, a field of the wrong type takes its default with a warning naming its path,
and an entry that cannot be a task or a run at all (not an object, no ``test_id``) is
left out with a warning. Only a file that is not JSON, or not an object with a
``tasks`` list, is an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError
from waza_core.model import GraderResult
from waza_core.results.io import load_results
from waza_core.results.jsonbytes import dumps
from waza_core.results.model import (
    ResultsDocument,
    RunConfig,
    RunResult,
    SessionDigest,
    Summary,
    TaskResult,
)
from waza_core.untrusted import RUN_STATUSES, UntrustedInput

# -- encoding -------------------------------------------------------------------------


def _with_extra(out: dict[str, Any], extra: dict) -> dict[str, Any]:
    if extra:
        for k, v in extra.items():
            if k not in out:
                out[k] = v
    return out


def run_to_json(r: RunResult) -> dict[str, Any]:
    d = r.session_digest
    out = {
        "run_number": r.run_number,
        "attempts": r.attempts,
        "status": r.status,
        "duration_ms": r.duration_ms,
        "validations": {name: v.to_json() for name, v in r.validations.items()},
        "session_digest": _with_extra({
            "tool_call_count": d.tool_call_count,
            "tools_used": d.tools_used,
            "tool_calls": d.tool_calls,
            "errors": d.errors,
            "usage": d.usage,
            "session_id": d.session_id,
        }, d.extra),
        "final_output": r.final_output,
        "transcript": r.transcript,
        "outcome": r.outcome,
        "tool_events": r.tool_events,
        "host_lifecycle": r.host_lifecycle,
        "command_invocations": r.command_invocations,
        "user_input_requests": r.user_input_requests,
        "skill_invocations": r.skill_invocations,
        "usage": r.usage,
        "session_id": r.session_id,
        "workspace_dir": r.workspace_dir,
    }
    if r.mcp_invocations is not None:  # waza (Go) has no such field: written only when recorded
        out["mcp_invocations"] = r.mcp_invocations
    if r.worker is not None:
        out["worker"] = r.worker
    if r.error_msg is not None:
        out["error_msg"] = r.error_msg
    return _with_extra(out, r.extra)


def task_to_json(t: TaskResult) -> dict[str, Any]:
    out: dict[str, Any] = {"test_id": t.test_id, "display_name": t.display_name}
    if t.tags is not None:
        out["tags"] = t.tags
    out["status"] = t.status
    out["runs"] = [run_to_json(r) for r in t.runs]
    out["stats"] = t.stats
    return _with_extra(out, t.extra)


def summary_to_json(s: Summary) -> dict[str, Any]:
    return _with_extra({
        "total_tests": s.total_tests,
        "succeeded": s.succeeded,
        "failed": s.failed,
        "errors": s.errors,
        "skipped": s.skipped,
        "success_rate": s.success_rate,
        "aggregate_score": s.aggregate_score,
        "weighted_score": s.weighted_score,
        "min_score": s.min_score,
        "max_score": s.max_score,
        "std_dev": s.std_dev,
        "duration_ms": s.duration_ms,
        "usage": s.usage,
    }, s.extra)


def config_to_json(c: RunConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if c.runs_per_test is not None:
        out["runs_per_test"] = c.runs_per_test
    out["model_id"] = c.model_id
    out["engine_type"] = c.engine_type
    out["timeout_sec"] = c.timeout_sec
    for key in ("judge_model", "max_attempts", "parallel", "workers", "skip_graders", "regraded"):
        value = getattr(c, key)
        if value is not None:
            out[key] = value
    return _with_extra(out, c.extra)


def header_to_json(doc: ResultsDocument) -> dict[str, Any]:
    """Every top-level field but ``tasks`` and ``incomplete``, in file order."""
    out: dict[str, Any] = {}
    if doc.schema_version is not None:
        out["schemaVersion"] = doc.schema_version
    out["eval_id"] = doc.eval_id
    out["skill"] = doc.skill
    out["eval_name"] = doc.eval_name
    out["timestamp"] = doc.timestamp
    if doc.waza_version is not None:
        out["waza_version"] = doc.waza_version
    out["config"] = config_to_json(doc.config)
    if doc.summary is not None:
        out["summary"] = summary_to_json(doc.summary)
    out["metrics"] = doc.metrics
    return out


def results_to_json(doc: ResultsDocument) -> dict[str, Any]:
    """The whole document as plain JSON values."""
    out = header_to_json(doc)
    out["tasks"] = [task_to_json(t) for t in doc.tasks]
    out["incomplete"] = doc.incomplete
    return _with_extra(out, doc.extra)


def encode_results(doc: ResultsDocument) -> bytes:
    """The bytes of a results file (:func:`waza_core.results.jsonbytes.dumps`: indented
    when small, compact when large)."""
    return dumps(results_to_json(doc))


# -- decoding -------------------------------------------------------------------------


def read_results(path: str | Path, warnings: list[str] | None = None) -> ResultsDocument:
    """Read a results file, with a clear one-line error for a missing, special (FIFO),
    malformed or too deeply nested one (:func:`waza_core.results.io.load_results`)."""
    return decode_results(load_results(path), warnings)


def decode_results(obj: Any, warnings: list[str] | None = None) -> ResultsDocument:
    """A results document from parsed JSON. Problems are appended to ``warnings``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("tasks"), list):
        raise WazaError("not a waza results document: no 'tasks' list")
    if isinstance(obj.get("schemaVersion"), str):  # any 1.x (or none) reads; another major does not
        # deferred: waza_core.suite.versions adds ~9.4 ms to importing this module
        from waza_core.suite.versions import VersionError, check_results

        try:
            check_results(obj["schemaVersion"])
        except VersionError as exc:
            raise WazaError(str(exc)) from None
    d = _Decoder(warnings if warnings is not None else [])
    fields, extra = d.fields(obj, _DOC_FIELDS, "", _DOC_NESTED)
    tasks = []
    for i, entry in enumerate(obj["tasks"]):
        task = d.task(entry, f"tasks[{i}]")
        if task is not None:
            tasks.append(task)
    config = d.config(obj.get("config"), "config")
    summary = d.summary(obj["summary"], "summary") if "summary" in obj else None
    return ResultsDocument(config=config, summary=summary, tasks=tasks, extra=extra, **fields)


def decode_run(obj: Any, where: str = "run", warnings: list[str] | None = None) -> RunResult | None:
    """One run entry (a journal line, say); None when it is not an object."""
    return _Decoder(warnings if warnings is not None else []).run(obj, where, 1)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: kind -> (check, what to call it in a warning)
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int": (_is_int, "an integer"),
    "count": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "positive": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "num": (_is_num, "a number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
}

# (json key, attribute, kind, nullable, default when absent or wrong)
_DOC_FIELDS = (
    ("schemaVersion", "schema_version", "str", True, None),
    ("eval_id", "eval_id", "str", False, ""),
    ("skill", "skill", "str", False, ""),
    ("eval_name", "eval_name", "str", False, ""),
    ("timestamp", "timestamp", "str", False, ""),
    ("waza_version", "waza_version", "str", True, None),
    ("metrics", "metrics", "dict", False, {}),
    ("incomplete", "incomplete", "bool", False, False),
)
_DOC_NESTED = ("config", "summary", "tasks")

_CONFIG_FIELDS = (
    ("runs_per_test", "runs_per_test", "positive", True, None),
    ("model_id", "model_id", "str", False, ""),
    ("engine_type", "engine_type", "str", False, ""),
    ("timeout_sec", "timeout_sec", "count", False, 0),
    ("judge_model", "judge_model", "str", True, None),
    ("max_attempts", "max_attempts", "int", True, None),
    ("parallel", "parallel", "bool", True, None),
    ("workers", "workers", "int", True, None),
    ("skip_graders", "skip_graders", "bool", True, None),
    ("regraded", "regraded", "bool", True, None),
)

_SUMMARY_FIELDS = (
    ("total_tests", "total_tests", "count", False, 0),
    ("succeeded", "succeeded", "count", False, 0),
    ("failed", "failed", "count", False, 0),
    ("errors", "errors", "count", False, 0),
    ("skipped", "skipped", "count", False, 0),
    ("success_rate", "success_rate", "num", False, 0.0),
    ("aggregate_score", "aggregate_score", "num", False, 0.0),
    ("weighted_score", "weighted_score", "num", False, 0.0),
    ("min_score", "min_score", "num", False, 0.0),
    ("max_score", "max_score", "num", False, 0.0),
    ("std_dev", "std_dev", "num", False, 0.0),
    ("duration_ms", "duration_ms", "count", False, 0),
    ("usage", "usage", "dict", True, None),
)

_TASK_FIELDS = (
    ("display_name", "display_name", "str", False, None),  # default: the test_id
    ("status", "status", "str", False, "n/a"),
    ("stats", "stats", "dict", True, None),
    ("tags", "tags", "list", True, None),
)
_TASK_NESTED = ("test_id", "runs")

_RUN_FIELDS = (
    ("run_number", "run_number", "positive", False, None),  # default: the position
    ("attempts", "attempts", "positive", False, 1),
    ("status", "status", "str", False, "n/a"),
    ("duration_ms", "duration_ms", "count", False, 0),
    ("final_output", "final_output", "str", False, ""),
    ("transcript", "transcript", "list", False, []),
    ("outcome", "outcome", "dict", False, {}),
    ("tool_events", "tool_events", "list", True, None),
    ("host_lifecycle", "host_lifecycle", "dict", True, None),
    ("command_invocations", "command_invocations", "list", True, None),
    ("mcp_invocations", "mcp_invocations", "list", True, None),
    ("user_input_requests", "user_input_requests", "list", True, None),
    ("skill_invocations", "skill_invocations", "list", True, None),
    ("usage", "usage", "dict", True, None),
    ("session_id", "session_id", "str", True, None),
    ("workspace_dir", "workspace_dir", "str", True, None),
    ("worker", "worker", "str", True, None),
    ("error_msg", "error_msg", "str", True, None),
)
_RUN_NESTED = ("validations", "session_digest")

_DIGEST_FIELDS = (
    ("tool_call_count", "tool_call_count", "count", False, 0),
    ("tools_used", "tools_used", "list", False, []),
    ("tool_calls", "tool_calls", "list", False, []),
    ("errors", "errors", "list", False, []),
    ("usage", "usage", "dict", True, None),
    ("session_id", "session_id", "str", True, None),
)

_GRADER_FIELDS = (
    ("identifier", "identifier", "str", False, None),  # default: its key in validations
    ("type", "type", "str", False, ""),
    ("score", "score", "num", False, 0.0),
    ("passed", "passed", "bool", False, False),
    ("feedback", "feedback", "str", False, ""),
    ("weight", "weight", "num", False, 1.0),
    ("details", "details", "dict", False, {}),
    ("duration_ms", "duration_ms", "count", False, 0),
    ("error", "error", "dict", True, None),
)


#: (id of a field table, nested keys) -> every key the table's object knows
_KNOWN: dict[tuple[int, tuple], frozenset[str]] = {}


class _Decoder:
    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def fields(self, obj: dict, table: tuple, where: str, nested: tuple = ()) -> tuple[dict, dict]:
        """(known fields as attribute kwargs, unknown fields) of one JSON object."""
        out: dict[str, Any] = {}
        for key, attr, kind, nullable, default in table:
            if key not in obj:
                out[attr] = _fresh(default)
                continue
            value = obj[key]
            check, what = _KINDS[kind]
            if value is None:  # null: "not recorded", or waza Go's encoding of an empty list/map
                out[attr] = None if nullable else _fresh(default)
            elif check(value):
                out[attr] = value
            else:
                path = f"{where}.{key}" if where else key
                self.warn(f"{path}: expected {what}, got {_short(value)}; taken as {_short(default)}")
                out[attr] = _fresh(default)
        known = _KNOWN.get((id(table), nested))
        if known is None:  # once per table: this runs for every run of every file read
            known = _KNOWN[(id(table), nested)] = frozenset(nested).union(row[0] for row in table)
        extra = {k: v for k, v in obj.items() if k not in known}
        return out, extra

    def config(self, obj: Any, where: str) -> RunConfig:
        if not isinstance(obj, dict):
            if obj is not None:
                self.warn(f"{where}: expected an object, got {_short(obj)}; taken as empty")
            return RunConfig()
        fields, extra = self.fields(obj, _CONFIG_FIELDS, where)
        return RunConfig(extra=extra, **fields)

    def summary(self, obj: Any, where: str) -> Summary | None:
        if not isinstance(obj, dict):
            self.warn(f"{where}: expected an object, got {_short(obj)}; left out")
            return None
        fields, extra = self.fields(obj, _SUMMARY_FIELDS, where)
        return Summary(extra=extra, **fields)

    def task(self, obj: Any, where: str) -> TaskResult | None:
        if not isinstance(obj, dict) or not isinstance(obj.get("test_id"), str):
            self.warn(f"{where}: {_short(obj)} is not a task with a string 'test_id' as waza writes them; "
                      "left out")
            return None
        fields, extra = self.fields(obj, _TASK_FIELDS, where, _TASK_NESTED)
        if fields["display_name"] is None:
            fields["display_name"] = obj["test_id"]
        stats = fields["stats"]
        if stats is not None and not all(_is_num(stats.get(k, 0.0)) for k in ("avg_score", "avg_weighted_score")):
            self.warn(f"{where}.stats: avg_score and avg_weighted_score must be numbers; taken as null")
            fields["stats"] = None
        if fields["tags"] is not None and not all(isinstance(t, str) for t in fields["tags"]):
            self.warn(f"{where}.tags: expected a list of strings; left out")
            fields["tags"] = None
        runs: list[RunResult] = []
        raw_runs = obj.get("runs")
        if isinstance(raw_runs, list):
            for i, r in enumerate(raw_runs):
                run = self.run(r, f"{where}.runs[{i}]", i + 1)
                if run is not None:
                    runs.append(run)
        elif raw_runs is not None:
            self.warn(f"{where}.runs: expected a list, got {_short(raw_runs)}; taken as []")
        return TaskResult(test_id=obj["test_id"], runs=runs, extra=extra, **fields)

    def run(self, obj: Any, where: str, position: int) -> RunResult | None:
        if not isinstance(obj, dict):
            self.warn(f"{where}: {_short(obj)} is not a run object; left out")
            return None
        fields, extra = self.fields(obj, _RUN_FIELDS, where, _RUN_NESTED)
        if fields["run_number"] is None:
            fields["run_number"] = position
        validations: dict[str, GraderResult] = {}
        raw = obj.get("validations")
        if isinstance(raw, dict):
            for name, v in raw.items():
                result = self.grader_result(v, name, f"{where}.validations.{name}")
                if result is not None:
                    validations[name] = result
        elif raw is not None:
            self.warn(f"{where}.validations: expected an object, got {_short(raw)}; taken as {{}}")
        digest = self.digest(obj.get("session_digest"), f"{where}.session_digest")
        return RunResult(validations=validations, session_digest=digest, extra=extra, **fields)

    def digest(self, obj: Any, where: str) -> SessionDigest:
        if not isinstance(obj, dict):
            if obj is not None:
                self.warn(f"{where}: expected an object, got {_short(obj)}; taken as empty")
            return SessionDigest()
        fields, extra = self.fields(obj, _DIGEST_FIELDS, where)
        return SessionDigest(extra=extra, **fields)

    def grader_result(self, obj: Any, name: str, where: str) -> GraderResult | None:
        if not isinstance(obj, dict):
            self.warn(f"{where}: {_short(obj)} is not a grader result object; left out")
            return None
        fields, extra = self.fields(obj, _GRADER_FIELDS, where)
        if fields["identifier"] is None:
            fields["identifier"] = name
        error = fields["error"]
        if error is not None and not (isinstance(error.get("kind"), str) and isinstance(error.get("message"), str)):
            fields["error"] = {"kind": str(error.get("kind", "unknown")), "message": str(error.get("message", ""))}
        return GraderResult(extra=extra, **fields)


def _fresh(default: Any) -> Any:
    """A new list or dict for each use of a mutable default."""
    if default.__class__ is list:
        return []
    if default.__class__ is dict:
        return {}
    return default


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def decode_run_strictly(obj: Any, where: str) -> RunResult:
    """A run someone else wrote (a journal line, a result-cache entry), checked field by
    field before it joins a results document: every known field of its type (a boolean is
    not an integer), a known status, no field taken as a default. ``obj`` comes from
    :func:`waza_core.untrusted.loads` (finite numbers, 64-bit integers, bounded depth).
    Raises :class:`~waza_core.untrusted.UntrustedInput` naming ``where`` and the field."""
    warnings: list[str] = []
    run = decode_run(obj, where, warnings)
    if run is None:
        raise UntrustedInput(f"{where}: the run is not a JSON object")
    if warnings:
        raise UntrustedInput(warnings[0])
    if run.status not in RUN_STATUSES:
        raise UntrustedInput(f"{where}.status: {_short(run.status)} is not a run status "
                             f"({', '.join(sorted(RUN_STATUSES))})")
    return run
