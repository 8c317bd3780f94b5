"""examples/grader-showcase runs offline as its README says: every grader type, waza's
verdicts and scores (fractional ones included), the right exit code, and no error run,
also under the mock executor."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_waza

EXAMPLE = REPO / "examples" / "grader-showcase"
GRADER_TYPES = {"text", "json_schema", "code", "program", "file", "diff", "prompt", "behavior", "action_sequence",
                "skill_invocation", "tool_constraint", "tool_calls", "trigger"}

# (task, grader) -> (score, passed, feedback start), as the README tables say
EXPECTED = {
    ("good-report", "reads_before_writing"): (0.8, True, "Action sequence matched"),
    ("good-report", "judge"): (1.0, True, "All prompts passed"),
    ("good-report", "writes_markdown"): (1.0, True, "all tool_calls checks passed"),
    ("sloppy-report", "names_the_report"): (1 / 3, False, "Missing expected substring: Sales report"),
    ("sloppy-report", "answer_is_a_report_object"): (0.0, False, "Output is not valid JSON: invalid character 'R'"),
    ("sloppy-report", "assertions"): (0.5, False, "Failed: len(tool_calls) == 3"),
    ("sloppy-report", "total_is_positive"): (0.0, False, "Program exited with error: exit status 1"),
    ("sloppy-report", "report_file"): (0.75, False, "File report.md missing expected pattern: ^# Sales report"),
    ("sloppy-report", "report_snapshot"): (0.5, False, "File report.md does not match snapshot report.md"),
    ("sloppy-report", "judge"): (0.5, False, "fail: mentions sales report: not in the output"),
    ("sloppy-report", "frugal"): (0.4, False, "Token usage 2900 exceeds max allowed 2000; Required tool not used: "
                                              "Read; Forbidden tool was used: Bash"),
    ("sloppy-report", "reads_before_writing"): (1 / 3, False, "In-order match failed: not all expected actions "
                                                              "[Read Write] appeared in order within actual "
                                                              "[Skill Skill Bash Write]"),
    ("sloppy-report", "loads_the_skill"): (2 / 3 * 0.7, True, "Skill invocation sequence matched but had extra "
                                                              "invocations (got 2, expected 1)"),
    ("sloppy-report", "safe_tools"): (0.5, False, "Expected tool not used: ^read$ (path_pattern: \\.csv$); "
                                                  "Rejected tool was used: bash (command_pattern: rm\\s); "
                                                  "Undeclared tool used: Bash (not in allow_only: "
                                                  "[Read, Write, Skill])"),
    ("sloppy-report", "writes_markdown"): (2 / 3, False, 'expectation tool="^write$" not satisfied: argument '
                                                         '"content": expected substring "Sales report", '
                                                         'got "# Report draft\\n"'),
    ("trigger-positive", "triggers_sales_report"): (1.0, True, "Prompt is trigger-aligned"),
    ("trigger-negative", "does_not_trigger"): (0.0, True, "Prompt correctly treated as non-trigger"),
}


@pytest.fixture
def example(tmp_path) -> tuple[Path, dict]:
    """A copy of the example, with `python3` on PATH meaning this interpreter."""
    root = tmp_path / "grader-showcase"
    shutil.copytree(EXAMPLE, root)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    return root, {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


def results(root: Path, env: dict, *args: str) -> tuple[int, dict]:
    out = root.parent / "results.json"
    proc = run_waza("run", "eval.yaml", "-o", str(out), *args, cwd=root, env=env, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return proc.returncode, json.loads(out.read_text())


def test_every_grader_type_gives_the_documented_verdict(example):
    root, env = example
    code, doc = results(root, env)
    assert code == 1
    statuses = {t["test_id"]: t["status"] for t in doc["tasks"]}
    assert statuses == {"good-report": "passed", "sloppy-report": "failed", "trigger-positive": "passed",
                        "trigger-negative": "passed"}
    validations = {(t["test_id"], name): v for t in doc["tasks"] for r in t["runs"]
                   for name, v in r["validations"].items()}
    assert {v["type"] for v in validations.values()} == GRADER_TYPES
    good = [v for (task, _), v in validations.items() if task == "good-report"]
    assert all(v["passed"] for v in good) and len(good) == 13
    for key, (score, passed, feedback) in EXPECTED.items():
        v = validations[key]
        assert v["score"] == pytest.approx(score), key
        assert v["passed"] is passed, key
        assert v["feedback"].startswith(feedback), (key, v["feedback"])
    assert all("error" not in v for v in validations.values())


def test_under_the_mock_executor_no_run_is_an_error(example):
    root, env = example
    code, doc = results(root, env, "--executor", "mock")
    assert code == 1
    runs = [r for t in doc["tasks"] for r in t["runs"]]
    assert all(r["status"] in ("passed", "failed") for r in runs)
    good = next(t for t in doc["tasks"] if t["test_id"] == "good-report")
    frugal = good["runs"][0]["validations"]["frugal"]
    assert frugal["feedback"].startswith("No usage data available to check max tokens")
