"""Typed results: the classes, the one encoder, the one tolerant decoder, and the JSON Schema."""

from __future__ import annotations

import json

import pytest

from waza_core.model import GraderResult
from waza_core.results import stats
from waza_core.results.codec import decode_results, encode_results, read_results, results_to_json
from waza_core.results.model import (
    ResultsDocument,
    RunConfig,
    RunResult,
    SessionDigest,
    Summary,
    TaskResult,
)
from waza_core.suite.schema import plain_validator


def _grader(name: str, score: float, error: dict | None = None) -> GraderResult:
    return GraderResult(identifier=name, type="text", score=score, passed=score == 1.0, feedback="f",
                        weight=2.0, details={"k": 1}, duration_ms=3, error=error)


def _run(n: int, status: str, **kw) -> RunResult:
    return RunResult(run_number=n, attempts=1, status=status, duration_ms=7,
                     validations={"g": _grader("g", 1.0 if status == "passed" else 0.0)},
                     session_digest=SessionDigest(tool_call_count=1, tools_used=["bash"],
                                                  tool_calls=[{"name": "bash"}], usage={"input_tokens": 1},
                                                  session_id="s"),
                     final_output="out", transcript=[{"type": "message"}], outcome={"ok": True}, tool_events=[],
                     host_lifecycle={}, command_invocations=[], mcp_invocations=[], user_input_requests=[],
                     skill_invocations=[],
                     usage={"input_tokens": 1}, session_id="s", workspace_dir="/ws", worker="local", **kw)


def every_field_document() -> ResultsDocument:
    """A document in which the classes write every field they can write (the fields of
    schema 1.1-1.5 that the suite features add live in the ``extra`` dicts)."""
    runs = [_run(1, "passed"), _run(2, "error", error_msg="boom")]
    runs[1].validations["h"] = _grader("h", 0.0, error={"kind": "timeout", "message": "slow"})
    runs[0].extra["checkpoints"] = [{"after_turn": 1, "status": "error", "stopped": True, "validations": {
        "g": _grader("g", 0.0, error={"kind": "timeout", "message": "slow"}).to_json()}}]
    runs[0].extra["cached"] = True  # the result cache's marks travel in `extra` (waza_core/run/result_cache.py)
    runs[0].extra["over_max_run_cost"] = True  # --max-spend's marks too (waza_core/run/budget.py)
    runs[1].extra["skipped_for_budget"] = True
    runs[1].extra["triage"] = {"category": "grader_defect", "reason": "grader 'h' (timeout): slow"}  # results/triage.py
    task = TaskResult(test_id="t", display_name="T", status=stats.task_status(runs), runs=runs,
                      stats=stats.task_stats(runs), tags=["a"],
                      extra={"cached": True, "golden": True, "group": "m",
                             "skill_impact": {"pass_rate_with_skills": 1.0, "pass_rate_baseline": 0.5, "delta": 0.5,
                                              "percent_change": 100.0, "pairwise": {}},
                             "triage": {"category": "infrastructure", "reason": "a task with no runs has this"}})
    summary = stats.summarize([task], 12)
    ci = {"lower": 0.1, "upper": 0.9, "mean": 0.5, "confidence_level": 0.95}
    summary.extra = {"cached_runs": 1, "groups": [{"name": "m", "passed": 0, "total": 1, "avg_score": 0.5}],
                     "statistics": {"bootstrap_ci": stats.bootstrap([0.5, 1.0]), "success_rate_ci": ci,
                                    "pass_hat_k": [0.5, 0.25]},
                     "triage": {"infrastructure": 0, "grader_defect": 1, "agent_failure": 0, "vacuous": 0}}
    metric = {"identifier": "trigger_accuracy", "value": 1.0, "threshold": 0.9, "passed": True, "weight": 1.0,
              "details": {}}
    trigger = {"prompt": "p", "confidence": "medium", "should_trigger": True, "did_trigger": True, "error_msg": "",
               "final_output": "o", "transcript": [], "tool_calls": [], "session_id": "s"}
    counts = {"true_positives": 1, "false_positives": 0, "true_negatives": 0, "false_negatives": 0, "errors": 0,
              "precision": 1.0, "recall": 1.0, "f1": 1.0, "accuracy": 1.0}
    return ResultsDocument(
        eval_id="run-1", skill="s", eval_name="e", timestamp="2025-01-01T00:00:00Z", waza_version="0.1.0",
        config=RunConfig(runs_per_test=2, model_id="m", engine_type="mock", timeout_sec=30, judge_model="j",
                         max_attempts=1, parallel=False, workers=4, skip_graders=False, regraded=True),
        summary=summary, tasks=[task], incomplete=False, metrics={"trigger_accuracy": metric},
        extra={"trigger_metrics": counts, "trigger_results": [trigger], "is_baseline": True,
               "baseline_outcome": {"eval_id": "run-0"}, "models": ["m"], "metadata": {},
               "spend": {"max_spend": 1.0, "max_run_cost": 0.25, "worst_case_source": "max_run_cost",
                         "spent_usd": 0.5, "charged_usd": 0.75, "unknown_cost_runs": 1, "runs_skipped": 0,
                         "runs_over_max_run_cost": 0, "stopped": False, "reason": None},
               "audit": {"vacuous_tasks": ["t"], "vacuous_graders": [{"task_id": "t", "grader": "g"}],
                         "not_audited": [{"task_id": "t", "grader": "j", "reason": "prompt grader"}],
                         "tasks_audited": 1, "executor": "null"},
               "judge_agreement": _judge_agreement(),
               "baseline_from": {"file": "base.json", "sha256": "0" * 64, "part": "baseline_outcome",
                                 "eval_id": "run-0", "timestamp": "2025-01-01T00:00:00Z", "tasks_compared": 1,
                                 "tasks_only_in_run": 0, "tasks_only_in_file": 0, "compared_success_rate": 1.0,
                                 "compared_baseline_success_rate": 0.0, "warnings": ["a warning"]},
               "skill_impact_significance": _significance()},
    )


def _significance() -> dict:
    """The paired test's object as an A/B run writes it (every key it can write)."""
    from waza_core.results.significance import compare

    before = {"tasks": [{"test_id": t, "runs": [{"status": "failed"}]} for t in "ab"]}
    after = {"tasks": [{"test_id": t, "runs": [{"status": "passed"}]} for t in "ab"]}
    return compare(before, after, 0.05)


def _judge_agreement() -> dict:
    """``waza grade --repeat``'s block, with more split runs than it lists (every key written)."""
    from waza_core.results.agreement import agreement_block, grader_agreement

    split = [{"task": "t", "run": i, "verdicts": [{"passed": True, "score": 1.0}, {"passed": False, "score": 0.0}]}
             for i in range(1, 53)]
    return agreement_block(2, 0.667, {"judge": grader_agreement("prompt", split, 0.667)})


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _walk(schema: dict, node: dict, value, path: str, written: dict, declared: dict) -> None:
    """Collect, per object of the schema (a path without indices), the keys written and declared."""
    node = _resolve(schema, node)
    if isinstance(value, dict) and "properties" in node:
        declared[path] = set(node["properties"])
        written.setdefault(path, set()).update(value)
        for k, v in value.items():
            if k in node["properties"]:
                _walk(schema, node["properties"][k], v, f"{path}.{k}", written, declared)
    elif isinstance(value, dict) and isinstance(node.get("additionalProperties"), dict):
        for v in value.values():
            _walk(schema, node["additionalProperties"], v, f"{path}{{}}", written, declared)
    elif isinstance(value, list) and "items" in node:
        for v in value:
            _walk(schema, node["items"], v, f"{path}[]", written, declared)


def _kept_from_waza(node) -> set[str]:
    """Names of schema properties described as "read and kept" (fields of waza (Go) files)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and "read and kept" in sub.get("description", ""):
                found.add(name)
        for v in node.values():
            found |= _kept_from_waza(v)
    elif isinstance(node, list):
        for v in node:
            found |= _kept_from_waza(v)
    return found


def test_the_schema_and_the_classes_name_the_same_fields():
    from waza_core.suite.schema import load as load_schema

    schema = load_schema("results")
    doc = results_to_json(every_field_document())
    written: dict[str, set] = {}
    declared: dict[str, set] = {}
    _walk(schema, schema, doc, "", written, declared)
    assert {".tasks[].runs[]", ".tasks[].runs[].validations{}", ".tasks[].stats", ".summary", ".config",
            ".tasks[].runs[].session_digest", ".tasks[]"} <= set(declared)
    kept = _kept_from_waza(schema)  # fields only waza (Go) writes; we read them and keep them
    assert {"evaluation_usage", "snapshot_path", "tokens_total"} <= kept
    for path, keys in declared.items():
        assert written[path] - keys == set(), f"{path}: written, not in the schema"
        assert keys - kept - written[path] == set(), f"{path}: in the schema, never written"
    errors = list(plain_validator("results").iter_errors(doc))
    assert not errors, errors[0].message


def test_own_documents_round_trip_byte_for_byte():
    data = encode_results(every_field_document())
    warnings: list[str] = []
    again = decode_results(json.loads(data), warnings)
    assert warnings == []
    assert again == every_field_document()
    assert encode_results(again) == data


# Hand-written documents in the shapes waza (Go) writes: no schemaVersion (before 1.0), 1.0, 1.4
# (cached, golden, snapshot_path, evaluation_usage), and nil slices encoded as null.
GO_BEFORE_1_0 = {
    "eval_id": "run-1", "skill": "s", "eval_name": "e", "timestamp": "2025-01-01T00:00:00Z",
    "config": {"runs_per_test": 1, "model_id": "gpt", "engine_type": "copilot-sdk", "timeout_sec": 300},
    "summary": {"total_tests": 1, "succeeded": 1, "failed": 0, "errors": 0, "skipped": 0, "success_rate": 1,
                "aggregate_score": 1, "weighted_score": 1, "min_score": 1, "max_score": 1, "std_dev": 0,
                "duration_ms": 10, "statistics": {"mean": 1}},
    "metrics": {"m": {"identifier": "m", "value": 1, "threshold": 0.5, "passed": True, "weight": 1}},
    "trigger_metrics": {"precision": 1},
    "tasks": [{"test_id": "t", "display_name": "T", "group": "g1", "status": "passed",
               "stats": {"pass_rate": 1, "avg_score": 1, "avg_weighted_score": 1, "is_significant": True},
               "runs": [{"run_number": 1, "attempts": 1, "status": "passed", "duration_ms": 10,
                         "validations": {"v": {"identifier": "v", "type": "code", "score": 1, "weight": 1,
                                               "passed": True, "feedback": "", "duration_ms": 0}},
                         "session_digest": {"tool_call_count": 0, "tools_used": None, "errors": None,
                                            "tokens_in": 5, "total_turns": 2},
                         "transcript": [{"type": "assistant.message"}], "final_output": "hi"}]}],
}
GO_1_0 = {"schemaVersion": "1.0", "eval_id": "r", "skill": "s", "eval_name": "e", "timestamp": "t",
          "config": {"runs_per_test": 1, "model_id": "", "engine_type": "mock", "timeout_sec": 0},
          "metrics": None,
          "tasks": [{"test_id": "x", "display_name": "X", "golden": True, "status": "failed",
                     "runs": [{"run_number": 1, "attempts": 1, "status": "failed", "duration_ms": 0,
                               "validations": {"v": {"identifier": "v", "type": "regex", "score": 0,
                                                     "weight": 1, "passed": False}},
                               "session_digest": {}, "final_output": ""}]}]}
GO_1_4 = {"schemaVersion": "1.4", "eval_id": "r", "skill": "s", "eval_name": "e", "timestamp": "t",
          "config": {"runs_per_test": 1, "model_id": "m", "engine_type": "mock", "timeout_sec": 0},
          "evaluation_usage": {"turns": 3},
          "tasks": [{"test_id": "x", "display_name": "X", "cached": True, "status": "passed",
                     "runs": [{"run_number": 1, "status": "passed", "final_output": "ok",
                               "snapshot_path": "snaps/x.txt", "command_invocations": [{"argv": ["ls"]}],
                               "tool_events": [], "validations": None,
                               "session_digest": {"session_id": "abc", "usage": {"turns": 3}}}]}],
          "a_field_of_1_5": {"kept": True}}


@pytest.mark.parametrize("doc", [GO_BEFORE_1_0, GO_1_0, GO_1_4], ids=["none", "1.0", "1.4"])
def test_waza_go_documents_decode_without_warnings_and_keep_unknown_fields(doc):
    warnings: list[str] = []
    decoded = decode_results(json.loads(json.dumps(doc)), warnings)
    assert warnings == []
    assert decoded.schema_version == doc.get("schemaVersion")
    again = results_to_json(decoded)

    def unknown_kept(orig, new, path=""):
        if isinstance(orig, dict):
            for k, v in orig.items():
                assert k in new, f"{path}.{k} lost"
                if v is not None:
                    unknown_kept(v, new[k], f"{path}.{k}")
        elif isinstance(orig, list):
            for i, (a, b) in enumerate(zip(orig, new, strict=True)):
                unknown_kept(a, b, f"{path}[{i}]")
        else:
            assert orig == new, path

    unknown_kept(doc, again)
    assert decode_results(again) == decoded  # stable from the second encoding on


def test_waza_go_documents_read_through_the_typed_api():
    doc = decode_results(GO_1_4)
    run = doc.tasks[0].runs[0]
    assert run.attempts == 1 and run.validations == {} and run.session_digest.session_id == "abc"
    assert run.evidence().session_id == "abc"  # waza Go keeps it only in the digest
    assert run.extra == {"snapshot_path": "snaps/x.txt"} and doc.tasks[0].extra == {"cached": True}
    assert doc.config.judge_model is None and doc.summary is None
    go = decode_results(GO_BEFORE_1_0)
    assert go.tasks[0].runs[0].session_digest.tools_used == []  # Go's nil slice
    assert go.summary is not None and go.summary.extra == {"statistics": {"mean": 1}}


def test_fields_of_the_wrong_type_take_their_default_with_a_warning_naming_them():
    doc = results_to_json(every_field_document())
    run = doc["tasks"][0]["runs"][0]
    run["duration_ms"] = "slow"
    run["validations"]["g"]["score"] = "high"
    doc["tasks"][0]["stats"]["avg_score"] = "x"
    doc["tasks"].append({"no": "id"})
    doc["tasks"].append(7)
    warnings: list[str] = []
    decoded = decode_results(doc, warnings)
    assert decoded.tasks[0].runs[0].duration_ms == 0
    assert decoded.tasks[0].runs[0].validations["g"].score == 0.0
    assert decoded.tasks[0].stats is None and len(decoded.tasks) == 1
    assert any(w.startswith("tasks[0].runs[0].duration_ms: expected an integer >= 0") for w in warnings)
    assert any(w.startswith("tasks[0].runs[0].validations.g.score: expected a number") for w in warnings)
    assert any(w.startswith("tasks[0].stats:") for w in warnings)
    assert any(w.startswith("tasks[1]:") for w in warnings) and any(w.startswith("tasks[2]:") for w in warnings)


@pytest.mark.parametrize("content,message", [
    (b"{", "is not valid JSON"),
    (b"[]", "has no 'tasks' list"),
    (b'{"tasks": 3}', "has no 'tasks' list"),
])
def test_files_that_are_not_results_are_one_line_errors(tmp_path, content, message):
    from waza_core.errors import WazaError

    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(WazaError, match=message):
        read_results(path)


def test_summary_of_typed_tasks_matches_the_formulas():
    runs = [_run(1, "passed")]
    tasks = [TaskResult(test_id=str(i), display_name="", status=s, runs=runs,
                     stats={"avg_score": a, "avg_weighted_score": a})
             for i, (s, a) in enumerate([("passed", 1.0), ("failed", 0.5), ("error", 0.0), ("n/a", 0.0)])]
    s = stats.summarize(tasks, 5)
    assert s == Summary(total_tests=4, succeeded=1, failed=1, errors=1, skipped=1, success_rate=0.25,
                        aggregate_score=0.375, weighted_score=0.375, min_score=0.0, max_score=1.0,
                        std_dev=pytest.approx(0.41457809), duration_ms=5, usage={"input_tokens": 4})
