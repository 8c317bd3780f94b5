"""Results files of every version waza (Go) wrote are read by `waza grade`; another major is refused."""

from __future__ import annotations

import json

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

EVAL = "name: e\nskill: s\nconfig: {executor: mock}\ntasks: [\"tasks/*.yaml\"]\n"
TASK = "id: t\ninputs: {prompt: hi}\ngraders: [{type: text, name: g, config: {contains: [hi]}}]\n"


def go_results(version: str | None) -> dict:
    """A results file in the shape waza (Go) writes at ``version`` (fields of later versions included
    only from that version on)."""
    run = {"run_number": 1, "attempts": 1, "status": "passed", "duration_ms": 5,
           "validations": {"g": {"identifier": "g", "type": "text", "score": 1, "weight": 1, "passed": True,
                                 "feedback": "ok", "duration_ms": 0}},
           "session_digest": {"tool_call_count": 0, "tools_used": None, "errors": None},
           "final_output": "Mock response for: hi"}
    task = {"test_id": "t", "display_name": "t", "status": "passed", "runs": [run],
            "stats": {"pass_rate": 1, "avg_score": 1, "avg_weighted_score": 1, "is_significant": False}}
    summary = {"total_tests": 1, "succeeded": 1, "failed": 0, "errors": 0, "skipped": 0, "success_rate": 1,
               "aggregate_score": 1, "weighted_score": 1, "min_score": 1, "max_score": 1, "std_dev": 0,
               "duration_ms": 9}
    doc = {"eval_id": "run-1", "skill": "s", "eval_name": "e", "timestamp": "2026-01-01T00:00:00Z",
           "config": {"runs_per_test": 1, "model_id": "gpt", "engine_type": "mock", "timeout_sec": 300},
           "summary": summary, "metrics": {}, "tasks": [task]}
    if version is None:
        return doc
    doc["schemaVersion"] = version
    tail = version.split(".")[-1]
    minor = int(tail) if version.startswith("1.") and tail.isdigit() else 0
    if minor >= 1:
        run["tool_events"] = [{"turn": 1, "sequence": 1, "tool_name": "bash", "success": True}]
        run["checkpoints"] = [{"after_turn": 1, "status": "passed", "validations": {}}]
        task["golden"] = True
    if minor >= 2:
        run["snapshot_path"] = "snap/t.json"
    if minor >= 3:
        run["session_digest"]["tool_policy_mode"] = "allow_list"
    if minor >= 4:
        run["command_invocations"] = [{"command": "az", "args": ["account", "show"], "exit_code": 0,
                                       "response_index": 0}]
    if minor >= 5:
        del task["stats"]["is_significant"]
        task["stats"]["pass_rate_ci"] = {"lower": 0.2, "upper": 1, "mean": 1, "confidence_level": 0.95}
        summary["statistics"] = {"success_rate_ci": {"lower": 0.2, "upper": 1, "mean": 1, "confidence_level": 0.95},
                                 "pass_hat_k": [1.0]}
    if minor >= 6:  # waza v0.40 evidence (which of 1.6-1.8 added each field is not published)
        run["host_lifecycle"] = {"turns": [{"index": 1, "turn_id": "t1", "started_at": "2026-11-04T00:00:00Z",
                                            "ended_at": "2026-11-04T00:00:01Z"}],
                                 "shell_calls": [{"sequence": 1, "tool_call_id": "c1", "command": "ls"}]}
        run["mcp_invocations"] = [{"server": "az", "tool": "list", "arguments": {}, "response_index": 0,
                                   "is_error": False}]
        run["user_input_requests"] = [{"sequence": 1, "session_id": "s", "question": "Which?", "choices": ["a"],
                                       "source": "ask_user", "answer": "a", "was_freeform": False}]
        run["command_invocations"].append({"command": "az", "response_index": -1})  # exit_code optional
        usage = {"turns": 1, "input_tokens": 10, "output_tokens": 5, "premium_requests": 1, "ai_credits": 0.25,
                 "model_metrics": {"gpt": {"input_tokens": 10, "output_tokens": 5, "request_count": 1,
                                           "request_cost": 0.01, "ai_credits": 0.25}}}
        run["session_digest"]["usage"] = usage
        summary["usage"] = usage
    return doc


@pytest.mark.parametrize("version", [None, "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9"])
def test_grade_reads_every_1x_file_and_keeps_its_fields(waza, make_suite, version):
    path = make_suite(EVAL, {"tasks/t.yaml": TASK})
    results = path.parent / "in.json"
    results.write_text(json.dumps(go_results(version)))
    out = path.parent / "out.json"
    res = waza("grade", str(path), "--results", str(results), "-o", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    original = go_results(version)
    assert doc["tasks"][0]["runs"][0]["validations"]["g"]["passed"] is True
    for key in ("golden",):
        assert doc["tasks"][0].get(key) == original["tasks"][0].get(key)
    for key in ("checkpoints", "snapshot_path", "command_invocations", "tool_events", "host_lifecycle",
                "mcp_invocations", "user_input_requests"):
        assert doc["tasks"][0]["runs"][0].get(key) == original["tasks"][0]["runs"][0].get(key)


@pytest.mark.parametrize("version", ["2.0", "0.9", "1.x"])
def test_another_major_or_a_bad_version_is_refused(waza, make_suite, version):
    path = make_suite(EVAL, {"tasks/t.yaml": TASK})
    results = path.parent / "in.json"
    results.write_text(json.dumps(go_results(version)))
    res = waza("grade", str(path), "--results", str(results))
    assert res.returncode == 2 and b"Traceback" not in res.stderr
    assert b"waza migrate" in res.stderr or b"invalid schemaVersion" in res.stderr


def test_our_own_results_are_1_8(waza, make_suite):
    path = make_suite(EVAL, {"tasks/t.yaml": TASK})
    out = path.parent / "r.json"
    assert waza("run", str(path), "-q", "-o", str(out)).returncode == 0
    doc = json.loads(out.read_text())
    assert doc["schemaVersion"] == "1.8"
    from waza_core.suite.schema import plain_validator

    assert not list(plain_validator("results").iter_errors(doc))


def test_regraded_go_files_with_fields_of_other_versions_stay_valid(waza, make_suite):
    """Fields only some waza (Go) versions wrote (``evaluation_usage`` of 1.4, the token
    counters of older session digests) are kept by `waza grade -o` and allowed by the schema."""
    path = make_suite(EVAL, {"tasks/t.yaml": TASK})
    doc = go_results("1.4")
    doc["evaluation_usage"] = {"input_tokens": 120, "output_tokens": 30}
    doc["tasks"][0]["runs"][0]["session_digest"].update(tokens_in=10, tokens_out=5, tokens_total=15, total_turns=2)
    results = path.parent / "in.json"
    results.write_text(json.dumps(doc))
    out = path.parent / "out.json"
    res = waza("grade", str(path), "--results", str(results), "-o", str(out))
    assert res.returncode == 0, res.stderr
    regraded = json.loads(out.read_text())
    assert regraded["evaluation_usage"] == doc["evaluation_usage"]
    assert regraded["tasks"][0]["runs"][0]["session_digest"]["tokens_total"] == 15
    from waza_core.suite.schema import plain_validator

    assert [e.message for e in plain_validator("results").iter_errors(regraded)] == []
