"""A large, realistic results document for the report benchmark and the browser test."""

from __future__ import annotations

from typing import Any


def big_results(tasks: int = 4000, trials: int = 5) -> dict[str, Any]:
    """``tasks`` x ``trials`` runs: every 7th task fails, every 5th is flaky, every 50th errors once."""
    entries = []
    for i in range(tasks):
        runs = []
        for n in range(1, trials + 1):
            if i % 50 == 49 and n == 1:
                status = "error"
            elif i % 7 == 3 or (i % 5 == 1 and n % 2 == 0):
                status = "failed"
            else:
                status = "passed"
            ok = status == "passed"
            output = f"Answer {i}.{n}: " + ("the function returns the sum of its inputs. " * 4)
            runs.append({
                "run_number": n, "attempts": 1, "status": status, "duration_ms": 1000 + (i * 37 + n * 11) % 900,
                "validations": {
                    "mentions_sum": {"identifier": "mentions_sum", "type": "text", "score": 1.0 if ok else 0.0,
                                     "passed": ok, "weight": 1.0,
                                     "feedback": "All text checks passed" if ok else "Missing expected substring: sum"},
                    "length": {"identifier": "length", "type": "text", "score": 1.0, "passed": True, "weight": 1.0,
                               "feedback": "All text checks passed"}},
                "session_digest": {"tool_call_count": 1, "tools_used": ["read_file"], "errors": []},
                "final_output": output,
                "transcript": [{"role": "user", "content": f"Explain task {i}"},
                               {"role": "assistant", "content": output}],
                "tool_events": [{"turn": 1, "sequence": 1, "tool_name": "read_file", "args": {"path": "a.py"},
                                 "result": "def add(a, b): return a + b", "success": True, "duration_ms": 4}],
                "usage": {"input_tokens": 500 + i % 100, "output_tokens": 120 + n},
                **({"error_msg": "executor timed out after 300 s"} if status == "error" else {}),
            })
        passed = sum(1 for r in runs if r["status"] == "passed")
        status = "error" if any(r["status"] == "error" for r in runs) else ("passed" if passed == trials else "failed")
        score = sum((r["validations"]["mentions_sum"]["score"] + 1.0) / 2 for r in runs) / trials
        entries.append({"test_id": f"task-{i:05d}", "display_name": f"Explain function number {i}",
                        "tags": ["bench", f"group-{i % 10}"], "status": status, "runs": runs,
                        "stats": {"pass_rate": passed / trials, "avg_score": score, "flaky": 0 < passed < trials,
                                  "avg_duration_ms": sum(r["duration_ms"] for r in runs) // trials}})
    ok = sum(1 for t in entries if t["status"] == "passed")
    return {
        "schemaVersion": "1.5", "eval_id": "bench-report", "skill": "bench", "eval_name": "bench-report",
        "timestamp": "2026-01-01T00:00:00Z", "waza_version": "0.1.0",
        "config": {"runs_per_test": trials, "model_id": "mock-model", "engine_type": "mock"},
        "summary": {"total_tests": tasks, "succeeded": ok,
                    "failed": sum(1 for t in entries if t["status"] == "failed"),
                    "errors": sum(1 for t in entries if t["status"] == "error"), "skipped": 0,
                    "success_rate": ok / tasks,
                    "aggregate_score": sum(t["stats"]["avg_score"] for t in entries) / tasks,
                    "duration_ms": 123456},
        "metrics": {}, "tasks": entries, "incomplete": False,
    }
