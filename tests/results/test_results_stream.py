"""Large runs: tasks streamed to the results file as they finish, nothing kept in memory."""

from __future__ import annotations

import json
import os
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.depth import examples
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.results import stats
from waza_core.results.codec import decode_results, encode_results, results_to_json
from waza_core.results.jsonbytes import PRETTY_MAX_RUNS, compact_json
from waza_core.results.model import ResultsDocument, RunConfig, RunResult, TaskResult
from waza_core.results import writer as writer_mod
from waza_core.results.writer import StreamingResultsWriter
from waza_core.suite.schema import plain_validator


def _document(n: int) -> ResultsDocument:
    tasks = []
    for i in range(n):
        status = "passed" if i % 3 else "failed"
        runs = [RunResult(run_number=1, attempts=1, status=status, final_output=f"out é {i}", worker="local")]
        tasks.append(TaskResult(test_id=f"t{i}", display_name=f"T {i}", status=status, runs=runs,
                                stats=stats.task_stats(runs), tags=["x"]))
    return ResultsDocument(eval_id="run-1-abc", skill="s", eval_name="e", timestamp="2025-01-01T00:00:00Z",
                           waza_version="0", config=RunConfig(), summary=stats.summarize(tasks, 3), tasks=tasks,
                           extra={"kept": 1})


def test_the_streamed_file_is_the_bytes_of_the_whole_document(tmp_path):
    doc = _document(PRETTY_MAX_RUNS + 20)
    writer = StreamingResultsWriter({t.test_id: i for i, t in enumerate(doc.tasks)})
    shuffled = list(doc.tasks)
    random.Random(3).shuffle(shuffled)  # a parallel run finishes in any order
    for t in shuffled:
        writer.add(t)
    writer.finish(doc, tmp_path / "r.json")
    writer.close()
    assert (tmp_path / "r.json").read_bytes() == encode_results(doc)
    assert oct(os.stat(tmp_path / "r.json").st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_tasks_that_never_finished_are_left_out(tmp_path):
    doc = _document(5)
    writer = StreamingResultsWriter({t.test_id: i for i, t in enumerate(doc.tasks)})
    for t in (doc.tasks[3], doc.tasks[0]):
        writer.add(t)
    writer.finish(doc, tmp_path / "r.json")
    back = decode_results(json.loads((tmp_path / "r.json").read_bytes()))
    assert [t.test_id for t in back.tasks] == ["t0", "t3"] and back.extra == {"kept": 1}


def test_a_spool_that_moves_to_a_file_midway_gives_the_same_bytes(tmp_path, monkeypatch):
    """The spool is kept in memory up to SPILL_BYTES, then moved to an anonymous file."""
    doc = _document(40)
    monkeypatch.setattr(writer_mod, "SPILL_BYTES", 5 * len(compact_json(results_to_json(doc)["tasks"][0])))
    monkeypatch.setattr(writer_mod, "SMALLEST_ENTRY_BYTES", 0)  # start in memory whatever the plan's size
    writer = StreamingResultsWriter({t.test_id: i for i, t in enumerate(doc.tasks)})
    shuffled = list(doc.tasks)
    random.Random(5).shuffle(shuffled)
    for n, t in enumerate(shuffled):
        writer.add(t)
        if n == 2:
            assert writer.spool is None and writer.memory  # still in memory
    assert writer.memory is None and writer.spool is not None  # moved
    writer.finish(doc, tmp_path / "r.json")
    writer.close()
    assert (tmp_path / "r.json").read_bytes() == compact_json(results_to_json(doc)) + b"\n"


def test_a_large_plan_spools_to_a_file_from_the_start():
    """A plan that would outgrow the memory buffer anyway never holds it (the peak memory
    of a 100,000-task run has no buffer in it)."""
    many = writer_mod.SPILL_BYTES // writer_mod.SMALLEST_ENTRY_BYTES + 1
    writer = StreamingResultsWriter({f"t{i}": i for i in range(many)})
    assert writer.memory is None and writer.spool is not None
    writer.close()
    few = StreamingResultsWriter({f"t{i}": i for i in range(many - 1)})
    assert few.spool is None and few.memory is not None
    few.close()


def test_a_small_spool_makes_no_file(tmp_path):
    doc = _document(PRETTY_MAX_RUNS + 20)
    writer = StreamingResultsWriter({t.test_id: i for i, t in enumerate(doc.tasks)})
    for t in doc.tasks:
        writer.add(t)
    assert writer.spool is None and len(writer.memory) == writer.size
    writer.finish(doc, tmp_path / "r.json")
    writer.close()
    assert (tmp_path / "r.json").read_bytes() == encode_results(doc)


@settings(max_examples=examples(150), deadline=None)
@given(order=st.permutations(range(12)), finished=st.integers(0, 12), in_order_from=st.integers(0, 12),
       spill=st.sampled_from([writer_mod.SPILL_BYTES, 0, 2500]))
def test_any_finishing_order_and_any_subset_gives_the_documents_bytes(tmp_path_factory, order, finished,
                                                                     in_order_from, spill):
    """Stretches spooled in plan order are copied as blocks, from memory or from the file
    the spool moved to (at the first task, midway, never); the bytes never change."""
    doc = _document(12)
    order = order[:in_order_from] + sorted(order[in_order_from:])  # a mix of shuffled and in-order stretches
    done = order[:finished]
    default = writer_mod.SPILL_BYTES, writer_mod.SMALLEST_ENTRY_BYTES
    writer_mod.SPILL_BYTES, writer_mod.SMALLEST_ENTRY_BYTES = spill, 0  # start in memory
    try:
        writer = StreamingResultsWriter({t.test_id: i for i, t in enumerate(doc.tasks)})
        for i in done:
            writer.add(doc.tasks[i])
    finally:
        writer_mod.SPILL_BYTES, writer_mod.SMALLEST_ENTRY_BYTES = default
    target = tmp_path_factory.mktemp("w") / "r.json"
    writer.finish(doc, target)
    writer.close()
    doc.tasks = [t for i, t in enumerate(doc.tasks) if i in set(done)]
    assert target.read_bytes() == compact_json(results_to_json(doc)) + b"\n"


def _suite(make_suite, n: int, failing: set[int]) -> str:
    tasks = {f"tasks/t{i:04d}.yaml": f"id: t{i:04d}\ninputs: {{prompt: {'p' if i in failing else 'ok'}}}\n"
             "graders:\n  - {type: text, name: g, config: {contains: ['for: ok']}}\n" for i in range(n)}
    return str(make_suite(BASIC_EVAL, tasks))


def test_a_large_parallel_run_streams_a_valid_file_in_suite_order(make_suite, tmp_path):
    n = PRETTY_MAX_RUNS + 40
    failing = set(range(7, n, 9))
    out = tmp_path / "r.json"
    proc = run_waza("run", _suite(make_suite, n, failing), "--workers", "3", "-o", str(out))
    assert proc.returncode == 1, proc.stderr.decode()
    raw = out.read_bytes()
    assert raw.count(b"\n") == 1  # compact, as any file of more than PRETTY_MAX_RUNS runs
    doc = json.loads(raw)
    assert not list(plain_validator("results").iter_errors(doc))
    assert [t["test_id"] for t in doc["tasks"]] == [f"t{i:04d}" for i in range(n)]
    assert [t["status"] for t in doc["tasks"]] == ["failed" if i in failing else "passed" for i in range(n)]
    s = doc["summary"]
    assert s["total_tests"] == n and s["failed"] == len(failing) and s["succeeded"] == n - len(failing)
    assert s["aggregate_score"] == sum(t["stats"]["avg_score"] for t in doc["tasks"]) / n
    # the console summary details the first 50 failures in suite order and counts the others
    out_text = proc.stdout.decode()
    shown = [line.split()[1] for line in out_text.splitlines() if line.startswith("  ✗ ")]
    assert shown == [f"t{i:04d}" for i in sorted(failing)[:50]]
    assert f"... and {len(failing) - 50} more (see the results file)" in out_text
    # the failure triage counts every run, also those streamed past the first 50 (results/triage.py)
    assert s["triage"]["agent_failure"] == len(failing)
    assert f"agent failure: {len(failing)} run(s)" in out_text and "... more in the results file" in out_text


def test_output_dir_names_the_streamed_file_like_the_small_one(make_suite, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    proc = run_waza("run", _suite(make_suite, PRETTY_MAX_RUNS + 1, set()), "-q", "--output-dir", str(folder))
    assert proc.returncode == 0, proc.stderr.decode()
    (only,) = folder.iterdir()
    doc = json.loads(only.read_bytes())
    assert only.name.startswith("basic-") and only.name.endswith(doc["eval_id"].rsplit("-", 1)[-1] + ".json")


def test_a_streaming_run_keeps_no_finished_task(make_suite, registry):
    """With keep_tasks off the engine hands each task on and lets it go; the summary is whole."""
    from waza_core.run.engine import Engine, RunOptions
    from waza_core.suite.load import load_suite

    seen = []
    suite = load_suite(_suite(make_suite, 30, {4}), registry)
    engine = Engine(suite, registry, RunOptions(keep_tasks=False, on_task_done=lambda i, n, t: seen.append(t)))
    doc = engine.run()
    assert doc.tasks == [] and engine.finished == {} and not doc.incomplete
    assert len(seen) == 30 and doc.summary.total_tests == 30 and doc.summary.failed == 1
    expected = stats.summarize(seen, doc.summary.duration_ms)
    # the failure-triage counts are kept by the aggregator as tasks finish (results/triage.py)
    expected.extra["triage"] = {"infrastructure": 0, "grader_defect": 0, "agent_failure": 1, "vacuous": 0}
    assert doc.summary == expected


def test_small_runs_are_still_written_indented(make_suite, tmp_path):
    out = tmp_path / "r.json"
    assert run_waza("run", _suite(make_suite, 3, set()), "-q", "-o", str(out)).returncode == 0
    assert out.read_text().startswith('{\n  "schemaVersion": "1.')


def test_the_json_reporters_compact_bytes_are_the_results_writers():
    """Above PRETTY_MAX_RUNS both ``-o`` and ``--reporter json`` write compact JSON: by the same
    encoder, so a number such as 1e16 is spelled the same in both files."""
    from waza_core.results.jsonbytes import compact_json, dumps

    doc = {"eval_name": "e", "tasks": [{"test_id": "t", "runs": [{"duration_ms": 1e16, "note": "é"}]}]}
    assert dumps(doc, compact=True) == compact_json(doc) + b"\n"
    assert b"1e16" in dumps(doc, compact=True) and "é".encode() in dumps(doc, compact=True)
