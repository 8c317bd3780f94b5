"""The walkthrough of examples/optimizer and the report/evidence it leaves behind."""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from waza_core.suite import schema

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "examples" / "optimizer"


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "waza_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _walkthrough(tmp_path):
    out = tmp_path / "optimize-out"
    proc = _cli(["optimize", "run", str(EX / "eval.yaml"), "--target", "context-overlay", "--seed", str(EX / "seed"),
                 "--optimization-tag", "optimization", "--qualification-tag", "qualification",
                 "--adapter", "fake", "--fake-script", str(EX / "fake-script.json"), "--output-dir", str(out)],
                tmp_path)
    return proc, out


def test_walkthrough_is_accepted_and_reported(tmp_path):
    proc, out = _walkthrough(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert not list(schema.plain_validator("optimizer-report-1.0").iter_errors(report))
    assert report["outcome"] == "accepted" and report["stop_reason"] == "adapter_done"
    assert report["exit_code"] == 0 and report["failure"] is None and report["hard_spend_cap"] is False
    seed_eval = report["evaluations"][0]
    assert seed_eval["role"] == "seed" and seed_eval["score"] == 0.5
    q = report["qualification"]
    assert (q["seed_score"], q["candidate_score"], q["decision"]) == (0.5, 1.0, "accepted")
    assert q["optimization_best_score"] == 1.0
    # every candidate, proposal and evaluation is recorded
    assert [p["result"] for p in report["proposals"]] == ["candidate", "candidate", "duplicate", "done"]
    assert len(report["candidates"]) == 3
    assert [e["role"] for e in report["evaluations"]] == [
        "seed", "candidate", "candidate", "qualification-seed", "qualification-candidate"]
    assert report["best_candidate_id"] == report["candidates"][2]["id"]
    lineage = {c["id"]: c for c in report["candidates"]}
    best = lineage[report["best_candidate_id"]]
    assert best["origin"] == "proposal" and best["adapter"] == "fake" and best["iteration"] == 2
    assert lineage[best["parent_id"]]["iteration"] == 1
    assert report["spend_totals"]["evaluations"] == {"status": "unavailable"}


def test_report_evidence_and_candidates_are_private_and_verifiable(tmp_path):
    proc, out = _walkthrough(tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert stat.S_IMODE((out / "report.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    results_validator = schema.plain_validator("results")
    for ev in report["evaluations"]:
        ref = ev["evidence"]
        assert ref["path"].startswith(f"evidence/{ev['split']}/")
        path = out / ref["path"]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        doc = json.loads(data)
        assert not list(results_validator.iter_errors(doc)), "evidence must be a standard results file"
        assert sorted(t["test_id"] for t in doc["tasks"]) == sorted(
            report["suite_pin"]["splits"][ev["split"]]["task_ids"])
    for cand in report["candidates"]:
        folder = out / cand["path"]
        meta = json.loads((folder / "candidate.json").read_text())
        assert meta["id"] == cand["id"]
        for f in cand["files"]:
            data = (folder / "files" / f["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["bytes"]
            assert stat.S_IMODE((folder / "files" / f["path"]).stat().st_mode) == 0o600


def test_walkthrough_leaves_the_example_untouched(tmp_path):
    def snapshot():
        return {p.relative_to(EX).as_posix(): p.read_bytes() for p in sorted(EX.rglob("*")) if p.is_file()}

    before = snapshot()
    proc, _ = _walkthrough(tmp_path)
    assert proc.returncode == 0
    assert snapshot() == before


def test_cli_exit_codes_follow_the_outcome(tmp_path):
    out = tmp_path / "o"
    # without a script the fake adapter is done at once: no_improvement, exit 0
    proc = _cli(["optimize", "run", str(EX / "eval.yaml"), "--target", "context-overlay", "--seed", str(EX / "seed"),
                 "--optimization-tag", "optimization", "--qualification-tag", "qualification",
                 "--adapter", "fake", "--output-dir", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["outcome"] == "no_improvement" and report["stop_reason"] == "adapter_done"
    assert report["qualification"]["status"] == "skipped"
    assert len(report["evaluations"]) == 1
    # an invalid flag is a failure in the report, exit 1
    out2 = tmp_path / "o2"
    proc = _cli(["optimize", "run", str(EX / "eval.yaml"), "--target", "context-overlay", "--seed", str(EX / "seed"),
                 "--optimization-tag", "optimization", "--qualification-tag", "qualification",
                 "--adapter", "fake", "--max-evaluations", "2", "--output-dir", str(out2)], tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert json.loads((out2 / "report.json").read_text())["failure"]["category"] == "invalid_config"
    # a non-empty output folder cannot hold a report: exit 2, one line, no traceback
    proc = _cli(["optimize", "run", str(EX / "eval.yaml"), "--target", "context-overlay", "--seed", str(EX / "seed"),
                 "--optimization-tag", "optimization", "--qualification-tag", "qualification",
                 "--adapter", "fake", "--output-dir", str(out2)], tmp_path)
    assert proc.returncode == 2 and "not empty" in proc.stderr and "Traceback" not in proc.stderr


def test_capabilities_and_schemas_are_printed(tmp_path):
    proc = _cli(["optimize", "capabilities"], tmp_path)
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert not list(schema.plain_validator("optimizer-capabilities-1.0").iter_errors(doc))
    assert doc["contract_versions"] == ["1.0"]
    assert "fake" in doc["adapters"]
    assert set(doc["capabilities"]) == {
        "propose.files", "target.skill-directory", "target.context-overlay", "feedback.optimization-split",
        "feedback.task-results", "budget.iterations", "budget.evaluations", "budget.deadline",
        "usage.adapter-reported"}
    for name in ("optimizer-capabilities-1.0", "optimizer-adapter-request-1.0",
                 "optimizer-adapter-response-1.0", "optimizer-report-1.0"):
        proc = _cli(["schema", name], tmp_path)
        assert proc.returncode == 0
        assert json.loads(proc.stdout)["$schema"].endswith("2020-12/schema")


def test_an_output_dir_that_cannot_be_used_is_one_line_exit_2(tmp_path, monkeypatch):
    from waza_core.errors import WazaError
    from waza_core.optimize import loop

    out = tmp_path / "empty"
    out.mkdir()

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(loop.os, "chmod", denied)
    with pytest.raises(WazaError, match="cannot use it: Permission denied"):
        loop.prepare_output_dir(out)
