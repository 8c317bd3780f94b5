"""examples/optimizer/adapters/checklist_adapter.py as a program: standard library
only, requests in, replies out that pass the core's own validation."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from waza_core.optimize import contract

from .conftest import CHECKLIST_ADAPTER, PARENT_ID, SEED_TEXT, failed_task, propose_request

SEED = SEED_TEXT
PARENT = PARENT_ID
failed = failed_task


def ask(request: dict) -> subprocess.CompletedProcess:
    contract.validate_request(request)  # only requests the harness could send
    return subprocess.run([sys.executable, str(CHECKLIST_ADAPTER)], input=json.dumps(request), text=True,
                          capture_output=True, timeout=60)


def reply_of(request) -> dict:
    proc = ask(request)
    assert proc.returncode == 0, proc.stderr
    return contract.parse_reply(proc.stdout.encode(), request["operation"], ("1.0",))


def test_uses_only_the_standard_library():
    tree = ast.parse(CHECKLIST_ADAPTER.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names), imported


def test_describe_negotiates_task_feedback():
    doc = reply_of(contract.describe_request("context-overlay"))
    neg = contract.negotiate(doc, "context-overlay")
    assert neg.has("feedback.task-results") and neg.has("usage.adapter-reported") and not neg.paid_calls


def test_adds_every_missing_phrase_once():
    doc = reply_of(propose_request([
        failed("t1", "Missing expected substring: update the documentation; "
                     "Missing expected substring (case-sensitive): Bump the version"),
        failed("t2", "Missing expected substring: Update the documentation"),  # same phrase, other case
        failed("t3", "Missing expected pattern: ^v[0-9]+"),  # not a phrase it can add
        {"task_id": "t4", "status": "passed", "score": 1.0, "failed_graders": []},
    ]))
    assert doc["status"] == "candidate" and doc["parent_id"] == PARENT
    assert doc["files"] == [{"path": "checklist.md", "content": SEED + "- Update the documentation\n"
                                                                      "- Bump the version\n"}]
    assert doc["usage"] == {"status": "measured", "premium_requests": 0}


def test_keeps_the_other_files_and_skips_a_cut_phrase():
    files = [{"path": "README.md", "content": "hello"}, {"path": "checklist.md", "content": "- a"}]
    doc = reply_of(propose_request([failed("t1", "Missing expected substring: tag the release; "
                                                 "Missing expected substring: publish the pack", truncated=True)],
                                   files=files))
    assert doc["files"] == [{"path": "README.md", "content": "hello"},
                            {"path": "checklist.md", "content": "- a\n- Tag the release\n"}]


@pytest.mark.parametrize("tasks", [
    [],
    [failed("t1", "Missing expected substring: run the unit tests")],  # already there
    [failed("t1", "Missing expected substring: cut", truncated=True)],
])
def test_done_when_nothing_can_be_added(tasks):
    doc = reply_of(propose_request(tasks))
    assert doc["status"] == "done" and "files" not in doc


def test_without_task_feedback_it_is_done():
    request = propose_request([], capabilities=("propose.files",))
    assert "tasks" not in request["feedback"]["evaluation"]
    assert reply_of(request)["status"] == "done"


def test_unknown_operation_exits_nonzero():
    proc = subprocess.run([sys.executable, str(CHECKLIST_ADAPTER)], input='{"operation": "dance"}', text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2 and "unknown operation 'dance'" in proc.stderr
