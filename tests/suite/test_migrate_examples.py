"""`waza migrate` on every example suite gives a suite that loads and runs to the same results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in this process)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (REPO / "examples").glob("*/eval.yaml"))
#: examples whose agent is random on purpose (two runs differ as two runs of a real agent do):
#: their verdicts and exit code may change between two runs, migrated or not
RANDOM_AGENTS = {"noise-floor"}
#: examples whose runs wait on children (a grader that sleeps a second, an agent process per
#: trial) run on parallel workers: the verdicts compared do not depend on the order of runs
WORKERS = {"distributed": "8", "noise-floor": "4", "mcp-mocks": "4", "cli-agent": "4"}


def verdicts(doc: dict) -> dict:
    """What must not change: every task's status and every grader's verdict, and the counts."""
    return {"summary": {k: doc["summary"][k] for k in ("total_tests", "succeeded", "failed", "errors")},
            "tasks": {t["test_id"]: (t["status"], [sorted((n, v["score"], v["passed"])
                                                          for n, v in r["validations"].items()) for r in t["runs"]])
                      for t in doc["tasks"]}}


@pytest.mark.parametrize("name", EXAMPLES)
def test_migrated_example_runs_the_same(waza, tmp_path, name):
    suite = tmp_path / name
    shutil.copytree(REPO / "examples" / name, suite)
    workers = ["--workers", WORKERS[name]] if name in WORKERS else []
    before = waza("run", "eval.yaml", "-q", "-o", "before.json", *workers, cwd=suite)
    migrated = waza("migrate", "eval.yaml", cwd=suite)
    assert migrated.returncode == 0, migrated.stderr
    assert waza("migrate", "--check", "eval.yaml", cwd=suite).returncode == 0  # nothing left to do
    assert waza("validate", "--strict", "eval.yaml", cwd=suite).returncode == 0  # no warning either
    after = waza("run", "eval.yaml", "-q", "-o", "after.json", *workers, cwd=suite)
    if name in RANDOM_AGENTS:
        assert before.returncode in (0, 1) and after.returncode in (0, 1), (before.stderr, after.stderr)
        a = json.loads((suite / "before.json").read_text())
        b = json.loads((suite / "after.json").read_text())
        assert verdicts(a)["tasks"].keys() == verdicts(b)["tasks"].keys()
        return
    assert after.returncode == before.returncode, (before.stderr, after.stderr)
    if before.returncode in (0, 1):
        a = json.loads((suite / "before.json").read_text())
        b = json.loads((suite / "after.json").read_text())
        assert verdicts(a) == verdicts(b)
    text = (suite / "eval.yaml").read_text()
    original = (REPO / "examples" / name / "eval.yaml").read_text()
    assert [ln for ln in original.splitlines() if ln.lstrip().startswith("#")] == \
        [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]  # every comment kept
