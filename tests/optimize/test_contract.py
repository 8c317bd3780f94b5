"""Contract 1.0: strict parsing, reply validation, negotiation, and what requests carry."""

from __future__ import annotations

import json

import pytest

from waza_core.optimize import contract
from waza_core.optimize.failures import OptimizeFailure
from waza_core.suite import schema

from .conftest import files

SHA = "a" * 64


def describe_reply(**over):
    doc = {"kind": contract.RESPONSE_KIND, "schema_version": "1.0", "operation": "describe",
           "contract_versions": ["1.0"], "adapter": {"name": "x", "version": "1"},
           "required_capabilities": ["propose.files"], "optional_capabilities": ["target.context-overlay"],
           "paid_calls": False}
    doc.update(over)
    return doc


def propose_reply(**over):
    doc = {"kind": contract.RESPONSE_KIND, "schema_version": "1.0", "operation": "propose",
           "contract_version": "1.0", "status": "candidate", "parent_id": SHA,
           "files": [{"path": "a.md", "content": "x"}], "usage": {"status": "unavailable"}}
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}


def parse(doc, op="propose", raw=None):
    data = raw if raw is not None else json.dumps(doc).encode()
    return contract.parse_reply(data, op, ("1.0",))


@pytest.mark.parametrize("raw", [
    b'{"a": 1, "a": 2}', b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e999}',
    b'{"a": 1} {"b": 2}', b'{"a": 1} x', b"\xef\xbb\xbf{}", b'{"a": "\xff"}', b"", b"[",
])
def test_strict_json_rejects(raw):
    with pytest.raises(contract.StrictJSONError):
        contract.strict_loads(raw)


def test_strict_json_accepts_whitespace_around_one_document():
    assert contract.strict_loads(b' \n{"a": [1, 2.5]}\n ') == {"a": [1, 2.5]}


@pytest.mark.parametrize("doc,op", [
    (propose_reply(), "propose"),
    (propose_reply(status="done", files=...), "propose"),
    (propose_reply(usage={"status": "measured", "premium_requests": 1}), "propose"),
    (propose_reply(usage={"status": "measured", "provider": "acme", "provider_requests": 2}), "propose"),
    (describe_reply(), "describe"),
])
def test_valid_replies_pass(doc, op):
    assert parse(doc, op) == doc


@pytest.mark.parametrize("doc", [
    propose_reply(extra=1),                                    # unknown field
    propose_reply(usage=None),                                 # null
    propose_reply(files=None),
    propose_reply(usage={"status": "measured", "premium_requests": -1}),   # negative counter
    propose_reply(usage={"status": "unavailable", "premium_requests": 0}),
    propose_reply(usage={"status": "measured"}),               # measured with nothing measured
    propose_reply(usage={"status": "measured", "provider": "acme", "premium_requests": 1}),
    propose_reply(status="done"),                              # files with done
    propose_reply(files=...),                                  # candidate without files
    propose_reply(files=[]),
    propose_reply(parent_id="nothex"),
    propose_reply(usage=...),                                  # missing usage
    propose_reply(kind="other"),
])
def test_invalid_replies_are_malformed(doc):
    with pytest.raises(OptimizeFailure) as exc:
        parse(doc)
    assert exc.value.category == "malformed_proposal"


def test_unknown_field_in_describe_is_malformed():
    with pytest.raises(OptimizeFailure) as exc:
        parse(describe_reply(extra=True), "describe")
    assert exc.value.category == "malformed_proposal"


def test_unsupported_versions():
    with pytest.raises(OptimizeFailure) as exc:
        parse(describe_reply(contract_versions=["2.0", "3.1"]), "describe")
    assert exc.value.category == "unsupported_version"
    with pytest.raises(OptimizeFailure) as exc:
        parse(propose_reply(contract_version="2.0"))
    assert exc.value.category == "unsupported_version"


def test_output_limit_is_an_optimizer_failure():
    with pytest.raises(OptimizeFailure) as exc:
        contract.parse_reply(b" " * (contract.ADAPTER_STDOUT_LIMIT + 1), "propose", ("1.0",))
    assert exc.value.category == "optimizer_failure"


def test_wrong_operation_is_malformed():
    with pytest.raises(OptimizeFailure) as exc:
        parse(describe_reply(), "propose")
    assert exc.value.category == "malformed_proposal"


# -- negotiation ------------------------------------------------------------------

def neg(target="context-overlay", **over):
    return contract.negotiate(describe_reply(**over), target)


@pytest.mark.parametrize("over,target", [
    ({"required_capabilities": ["propose.files", "telepathy.v2"]}, "context-overlay"),      # unknown required
    ({"optional_capabilities": ["target.skill-directory"]}, "context-overlay"),             # target not offered
    ({"required_capabilities": ["propose.files", "target.skill-directory"],
      "optional_capabilities": ["target.context-overlay"]}, "context-overlay"),             # requires the other
    ({"required_capabilities": ["propose.files", "target.context-overlay"],
      "optional_capabilities": ["target.context-overlay"]}, "context-overlay"),             # both lists
    ({"required_capabilities": [], "optional_capabilities": ["target.context-overlay"]}, "context-overlay"),
])
def test_incompatible_capability(over, target):
    with pytest.raises(OptimizeFailure) as exc:
        neg(target, **over)
    assert exc.value.category == "incompatible_capability"


def test_unknown_optional_capabilities_are_recorded_unavailable():
    n = neg(optional_capabilities=["target.context-overlay", "feedback.task-results", "future.thing"])
    assert n.unavailable == ("future.thing",)
    assert set(n.selected) == {"propose.files", "target.context-overlay", "feedback.task-results"}
    assert not n.has("future.thing")


def test_negotiation_failures_end_the_run_with_their_category(suite):
    r = suite.run([], describe={"contract_versions": ["9.0"]})
    assert (r.code, r.category, r.outcome) == (1, "unsupported_version", "failed")
    assert r.report["evaluations"] == []
    r = suite.run([], describe={"required_capabilities": ["propose.files", "x.y"]})
    assert (r.code, r.category) == (1, "incompatible_capability")
    r = suite.run([], describe={"optional_capabilities": ["target.context-overlay", "z.future"]})
    assert r.code == 0
    assert r.report["adapter"]["unavailable_optional_capabilities"] == ["z.future"]
    r = suite.run([], describe={"raw": "{not json"})
    assert r.category == "malformed_proposal" and r.report["evaluations"] == []


# -- what the harness sends ---------------------------------------------------------

def _recorded(suite, proposals, describe=None, **kw):
    from .plugins import RecordingFake

    RecordingFake.log.clear()
    r = suite.run(proposals, adapter="recfake", describe=describe, **kw)
    return r, list(RecordingFake.log)


def test_every_request_and_reply_follows_the_contract(suite):
    r, log = _recorded(suite, [files("alpha beta gamma"), files("alpha beta gamma"), {"done": True}])
    assert r.outcome == "accepted"
    req_v = schema.plain_validator("optimizer-adapter-request-1.0")
    resp_v = schema.plain_validator("optimizer-adapter-response-1.0")
    ops = []
    for request, raw in log:
        assert not list(req_v.iter_errors(request))
        assert not list(resp_v.iter_errors(json.loads(raw)))
        ops.append(request["operation"])
    assert ops == ["describe", "propose", "propose", "propose"]


def test_adapters_never_see_the_qualification_split(suite):
    r, log = _recorded(suite, [files("alpha beta gamma delta"), {"done": True}])
    assert r.outcome == "accepted"
    qual_ids = r.report["suite_pin"]["splits"]["qualification"]["task_ids"]
    qual_indexes = [e["index"] for e in r.report["evaluations"] if e["split"] == "qualification"]
    assert qual_indexes
    text = json.dumps([req for req, _ in log])
    for tid in qual_ids:
        assert tid not in text
    for req, _ in log[1:]:
        assert req["feedback"]["split"] == "optimization"
        for t in req["feedback"]["evaluation"].get("tasks", []):
            assert t["task_id"] in ("opt-a", "opt-b")


def test_task_detail_only_with_feedback_task_results(make, tmp_path):
    long = "x" * 600 + "é" * 400  # 1400 bytes
    s = make(tasks={"opt-a": (["optimization"], "alpha"), "opt-b": (["optimization"], long),
                    "qual-c": (["qualification"], "gamma")})
    r, log = _recorded(s, [{"done": True}])
    ev = log[1][0]["feedback"]["evaluation"]
    task = next(t for t in ev["tasks"] if t["task_id"] == "opt-b")
    fg = task["failed_graders"][0]
    assert fg["truncated"] is True and len(fg["message"].encode()) <= 1000
    assert fg["message"].startswith("Missing expected substring")
    fg.get("message").encode("utf-8")  # a whole character, never half of one
    r, log = _recorded(s, [{"done": True}], describe={
        "optional_capabilities": ["target.context-overlay", "budget.iterations"]})
    ev = log[1][0]["feedback"]["evaluation"]
    assert "tasks" not in ev and ev["score"] == 0.5
    assert log[1][0]["remaining"] == {"iterations": 5}


def test_remaining_evaluations_exclude_the_reserved_two(suite):
    r, log = _recorded(suite, [files("alpha beta"), {"done": True}], max_evaluations=10, max_iterations=4)
    first, second = log[1][0], log[2][0]
    assert first["remaining"]["evaluations"] == 10 - 1 - 2
    assert second["remaining"]["evaluations"] == 10 - 2 - 2
    assert first["remaining"]["iterations"] == 4 and second["remaining"]["iterations"] == 3
    assert "deadline_ms" not in first["remaining"]
    r, log = _recorded(suite, [{"done": True}], timeout="1h")
    assert 0 < log[1][0]["remaining"]["deadline_ms"] <= 3600 * 1000


def test_propose_parent_is_the_incumbent_with_history(suite):
    r, log = _recorded(suite, [files("alpha beta"), files("alpha"), {"done": True}])
    seed_id = r.report["seed_candidate_id"]
    best = r.report["candidates"][1]["id"]
    assert log[1][0]["parent"]["candidate_id"] == seed_id and log[1][0]["parent"]["origin"] == "seed"
    assert log[2][0]["parent"]["candidate_id"] == best and log[2][0]["parent"]["origin"] == "proposal"
    assert log[2][0]["parent"]["files"] == [{"path": "checklist.md", "content": "alpha beta"}]
    hist = log[3][0]["feedback"]["history"]
    assert [h["iteration"] for h in hist] == [0, 1, 2]
    assert "parent_id" not in hist[0] and hist[1]["parent_id"] == seed_id
