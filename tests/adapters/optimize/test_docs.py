"""docs/optimizer-adapters.md: its request and response examples validate against the
contract schemas, and its Node.js adapter runs the walkthrough to ``accepted``."""

from __future__ import annotations

import re
import shutil

import pytest

from waza_core.optimize import contract
from waza_core.optimize.candidates import Candidate

from .conftest import REPO

DOC = REPO / "docs" / "optimizer-adapters.md"
_BLOCK = re.compile(r"<!-- check: ([a-z -]+) -->\n```(\w+)\n(.*?)```", re.S)


def blocks(kind: str) -> list[str]:
    found = [body for tag, _lang, body in _BLOCK.findall(DOC.read_text("utf-8")) if tag.strip() == kind]
    assert found, f"no '{kind}' example in {DOC.name}"
    return found


def test_every_checked_block_is_known():
    tags = {tag.strip() for tag, _, _ in _BLOCK.findall(DOC.read_text("utf-8"))}
    assert tags == {"request", "response describe", "response propose", "node-adapter"}


def test_request_examples_are_valid_requests():
    requests = [contract.strict_loads(text) for text in blocks("request")]
    for request in requests:
        contract.validate_request(request)  # raises on a schema violation
    propose = next(r for r in requests if r["operation"] == "propose")
    files = tuple((f["path"], f["content"]) for f in propose["parent"]["files"])
    assert Candidate(propose["target"], files).id == propose["parent"]["candidate_id"]  # a real ID


@pytest.mark.parametrize("operation", ["describe", "propose"])
def test_response_examples_pass_the_core_parser(operation):
    request = next(contract.strict_loads(t) for t in blocks("request")
                   if contract.strict_loads(t)["operation"] == "propose")
    for text in blocks(f"response {operation}"):
        doc = contract.parse_reply(text.encode(), operation, ("1.0",))
        if operation == "describe":
            contract.negotiate(doc, "context-overlay")
        else:
            assert doc["parent_id"] == request["parent"]["candidate_id"]


def test_node_adapter_reaches_accepted(example):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = example.root / "checklist-adapter.mjs"
    script.write_text(blocks("node-adapter")[0], encoding="utf-8")
    out = example.run(command=node, args=[script])
    assert (out.code, out.outcome) == (0, "accepted"), out.message
    assert out.report["adapter"]["name"] == "checklist-node"
    assert [p["result"] for p in out.report["proposals"]] == ["candidate", "done"]
    assert "2 phrase(s) to add" in out.report["proposals"][0]["stderr_tail"]
