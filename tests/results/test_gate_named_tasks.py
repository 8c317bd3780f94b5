"""``waza gate`` says what it saw (waza_core/results/gate_tasks.py): the tasks that regressed
and the golden tasks that failed, in every format, and a loud warning (or, with
``--strict-match``, exit 3) when the two files are not the same suite or model."""

from __future__ import annotations

import json

import pytest

from tests.reporters.test_gate_compare import GOOD, WORSE, gate, results

FORMATS = ("human", "markdown", "github-actions")


def test_json_names_each_regressed_task(tmp_path):
    proc = gate(tmp_path, results(GOOD), results(WORSE), "--format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["regressed_tasks"] == [{
        "task_id": "b", "display_name": "Task B", "baseline_status": "passed", "current_status": "failed",
        "baseline_pass_rate": 1.0, "current_pass_rate": 0.0, "drop_pct": 100.0}]
    assert "mismatches" not in report and b"warning" not in proc.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_text_format_names_the_regressed_task(tmp_path, fmt):
    proc = gate(tmp_path, results(GOOD), results(WORSE), "--format", fmt)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "b (Task B): pass rate 100.0% -> 0.0%" in out or "| b (Task B) | 100.0% passed | 0.0% failed |" in out
    assert "Task A" not in out  # only the task that got worse is named


def test_a_regression_within_the_allowed_drop_still_names_the_task(tmp_path):
    proc = gate(tmp_path, results(GOOD), results(WORSE), "--max-regression-pct", "30")
    assert proc.returncode == 0
    assert "Regressed tasks (1):\n- b (Task B)" in proc.stdout.decode()


def test_a_lower_pass_rate_counts_even_when_the_status_stays_failed(tmp_path):
    base = [("a", "A", ["passed", "failed"])]
    cur = [("a", "A", ["failed", "failed"])]
    report = json.loads(gate(tmp_path, results(base), results(cur), "--format", "json").stdout)
    assert report["regressed_tasks"][0]["drop_pct"] == 50.0


@pytest.mark.parametrize("fmt", FORMATS + ("json",))
def test_every_format_names_the_golden_task_that_failed(tmp_path, fmt):
    proc = gate(tmp_path, results(GOOD, golden={"b"}), results(WORSE, golden={"b"}), "--format", fmt)
    assert proc.returncode == 2
    out = proc.stdout.decode()
    if fmt == "json":
        assert [g["task_id"] for g in json.loads(out)["golden_failures"]] == ["b"]
    else:
        assert 'golden task "Task B" (b) did not pass; status=failed' in out


def test_a_different_model_warns_loudly_in_every_format(tmp_path):
    for fmt in FORMATS + ("json",):
        proc = gate(tmp_path, results(GOOD, model="gpt-a"), results(GOOD, model="gpt-b"), "--format", fmt)
        assert proc.returncode == 0, (fmt, proc.stderr)
        assert b"waza: warning: gate: baseline and current have different models (model_id): 'gpt-a' vs " \
               b"'gpt-b'" in proc.stderr
        assert b"--strict-match" in proc.stderr
        out = proc.stdout.decode()
        assert "different models" in out, fmt
    report = json.loads(proc.stdout)
    assert report["mismatches"] == [{"kind": "model", "baseline": "gpt-a", "current": "gpt-b", "message":
                                     "baseline and current have different models (model_id): 'gpt-a' vs 'gpt-b'"}]
    assert report["warnings"][0]["kind"] == "mismatch_model" and report["strict_match"] is False
    human = gate(tmp_path, results(GOOD, model="gpt-a"), results(GOOD, model="gpt-b")).stdout.decode()
    assert human.splitlines()[2] == "!! WARNING: these files may not be comparable:"


def test_strict_match_fails_with_exit_3_and_still_prints_the_report(tmp_path):
    other = results(GOOD)
    other["eval_name"] = "another-suite"
    proc = gate(tmp_path, results(GOOD), other, "--strict-match", "--format", "json")
    assert proc.returncode == 3
    report = json.loads(proc.stdout)
    assert report["verdict"] == "mismatch" and report["passed"] is False and report["exit_code"] == 3
    assert report["failures"][0] == {"kind": "mismatch_suite", "severity": "error", "message":
                                     "baseline and current have different suite names (eval_name): "
                                     "'demo' vs 'another-suite'"}
    assert b"waza: error: gate: baseline and current have different suite names" in proc.stderr
    assert b"gate failed: 1 mismatch(es) between the files (--strict-match)" in proc.stderr
    # the same files without the flag: a warning, exit 0
    assert gate(tmp_path, results(GOOD), other).returncode == 0


def test_little_task_overlap_is_a_mismatch(tmp_path):
    cur = [("x", "X", ["passed"]), ("y", "Y", ["passed"]), ("z", "Z", ["passed"]), ("d", "D", ["passed"])]
    proc = gate(tmp_path, results(GOOD), results(cur), "--strict-match", "--format", "json")
    assert proc.returncode == 3
    kinds = [m["kind"] for m in json.loads(proc.stdout)["mismatches"]]
    assert kinds == ["task_overlap"]
    # half the tasks in common is still the same suite (a suite that doubled its tasks)
    grown = GOOD + [(f"n{i}", f"N{i}", ["passed", "passed"]) for i in range(4)]
    assert gate(tmp_path, results(GOOD), results(grown), "--strict-match").returncode == 0
