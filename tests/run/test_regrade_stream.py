"""``waza grade`` of a large results file, one task at a time (waza_core/run/regrade_stream.py):
the same summary, warnings and ``-o`` bytes as the full path, on waza's own files and on
waza (Go) files, with what a file can get wrong (duplicate ids, a task that is not an
object, a task without runs, fields this version does not know)."""

from __future__ import annotations

import json
import random
import re

import pytest

from tests.conftest import BASIC_EVAL, run_waza
from waza_core.results.codec import decode_results, encode_results
from waza_core.run.regrade import regrade
from waza_core.run.regrade_stream import regrade_bytes
from waza_core.suite.load import load_suite

EVAL = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [good]}}\n"
SUITE_TASKS = [f"t{i:04d}" for i in range(0, 40, 4)] + ["not-in-file"]


def results_file(seed: int, ours: bool, tasks: int = 300, trials: int = 2) -> bytes:
    rng = random.Random(seed)
    doc = {"schemaVersion": "1.5", "eval_id": "e", "skill": "demo", "eval_name": "basic", "timestamp": "T",
           "config": {"model_id": "m", "x_config": [1, 2]}, "x_top": {"kept": True}, "tasks": []}
    if ours:
        doc["waza_version"] = "0.1.0"
    for t in range(tasks):
        runs = [{"run_number": i + 1, "status": "passed", "duration_ms": rng.randint(1, 999),
                 "final_output": rng.choice(["good answer", "bad answer"]), "x_run": i,
                 "validations": {"old": {"score": 1.0, "passed": True}}} for i in range(trials)]
        doc["tasks"].append({"test_id": f"t{t:04d}", "status": "passed", "runs": runs, "x_task": t})
    doc["tasks"].insert(7, 42)  # not a task
    doc["tasks"].append({"test_id": "t0004", "status": "failed", "runs": []})  # a later duplicate
    doc["tasks"][9]["runs"] = []  # t0008: in the suite, without runs
    doc["tasks"].append({"test_id": "t0299b", "status": "passed", "runs": [{"run_number": "one"}]})
    return json.dumps(doc).encode()


@pytest.fixture
def suite(make_suite, registry):
    path = make_suite(EVAL, {f"tasks/{t}.yaml": f"id: {t}\ninputs: {{prompt: p}}\n" for t in SUITE_TASKS})
    return load_suite(path, registry), path


def without_timestamp(data: bytes) -> bytes:
    """The bytes but for the time of writing and the graders' own durations."""
    return re.sub(rb'"duration_ms":\d+', b'"duration_ms":0',
                  re.sub(rb'"timestamp":"[^"]*"', b'"timestamp":""', data, count=1))


@pytest.mark.parametrize("ours", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_the_streamed_grade_is_the_full_grade(suite, registry, seed, ours):
    suite_, _ = suite
    data = results_file(seed, ours)
    full_warnings: list[str] = []
    full = regrade(suite_, registry, decode_results(json.loads(data), full_warnings))
    streamed = regrade_bytes(suite_, registry, data)
    assert streamed is not None
    assert streamed.summary == full.summary
    assert streamed.graded == full.graded
    out = streamed.output()
    assert without_timestamp(out) == without_timestamp(encode_results(full.outcome))
    assert sorted(streamed.warnings) == sorted(full_warnings + full.warnings)
    assert json.loads(out)["x_top"] == {"kept": True}


def test_one_task_and_the_small_file_path(suite, registry):
    suite_, _ = suite
    data = results_file(0, True)
    streamed = regrade_bytes(suite_, registry, data, task_id="t0012")
    assert streamed is not None and streamed.graded == ["t0012"]
    assert regrade_bytes(suite_, registry, results_file(0, True, tasks=100, trials=1)) is None  # 100 runs: full path
    assert regrade_bytes(suite_, registry, data.replace(b'"good answer"', b"NaN", 1)) is None  # Python-only JSON


def test_waza_grade_of_a_large_file_writes_what_the_full_path_writes(suite, registry, tmp_path):
    suite_, path = suite
    data = results_file(1, True, tasks=2000, trials=3)
    results = tmp_path / "big.json"
    results.write_bytes(data)
    proc = run_waza("grade", str(path), "--results", str(results), "-o", str(tmp_path / "g.json"))
    assert proc.returncode == 0, proc.stderr.decode()
    full = regrade(suite_, registry, decode_results(json.loads(data), []))
    assert json.loads(proc.stdout) == full.summary
    assert without_timestamp((tmp_path / "g.json").read_bytes()) == without_timestamp(encode_results(full.outcome))
    assert b"not-in-file" in proc.stderr and b"Traceback" not in proc.stderr
