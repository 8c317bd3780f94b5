"""Spend accounting, and the fake adapter's strict script."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_adapters.fake import FakeScriptError, parse_script
from waza_core.optimize import spend

M = "measured"


def test_unavailable_is_never_zero():
    assert spend.normalize_part(None) == {"status": "unavailable"}
    assert spend.combine([{"status": "unavailable"}, {"status": "unavailable"}]) == {"status": "unavailable"}


def test_partial_keeps_observed_counters():
    total = spend.combine([{"status": M, "premium_requests": 1}, {"status": "unavailable"}])
    assert total == {"status": "partial", "premium_requests": 1}


def test_premium_requests_and_provider_requests_are_kept_apart():
    assert spend.normalize_part({"provider": "acme", "requests": 3, "input_tokens": 10}) == {
        "status": M, "provider": "acme", "provider_requests": 3, "input_tokens": 10}
    same = spend.combine([{"status": M, "provider": "acme", "provider_requests": 1},
                          {"status": M, "provider": "acme", "provider_requests": 2}])
    assert same == {"status": M, "provider": "acme", "provider_requests": 3}
    mixed = spend.combine([{"status": M, "premium_requests": 1},
                           {"status": M, "provider": "acme", "provider_requests": 2}])
    assert mixed["status"] == "partial" and "premium_requests" not in mixed and "provider_requests" not in mixed
    two = spend.combine([{"status": M, "provider": "a", "provider_requests": 1},
                         {"status": M, "provider": "b", "provider_requests": 1}])
    assert two["status"] == "partial" and "provider" not in two


def test_evaluation_spend_from_engine_usage(make):
    s = make(executor="usageecho")
    for tid in ("opt-a", "opt-b"):
        p = s.dir / "tasks" / f"{tid}.yaml"
        p.write_text(p.read_text().replace(
            "  prompt:", "  context:\n    usage: {premium_requests: 2, input_tokens: 5}\n  prompt:"))
    r = s.run([])
    assert r.report["evaluations"][0]["spend"] == {"status": M, "premium_requests": 4, "input_tokens": 10}
    assert r.report["spend_totals"]["evaluations"]["premium_requests"] == 4
    assert r.report["hard_spend_cap"] is False


def test_mixed_providers_in_one_evaluation_are_partial(make):
    s = make(executor="usageecho")
    a = s.dir / "tasks" / "opt-a.yaml"
    a.write_text(a.read_text().replace("  prompt:", "  context:\n    usage: {premium_requests: 1}\n  prompt:"))
    b = s.dir / "tasks" / "opt-b.yaml"
    b.write_text(b.read_text().replace("  prompt:", "  context:\n    usage: {provider: acme, requests: 2}\n  prompt:"))
    r = s.run([])
    sp = r.report["evaluations"][0]["spend"]
    assert sp["status"] == "partial" and "premium_requests" not in sp and "provider_requests" not in sp


def test_proposal_spend_needs_the_usage_capability(suite):
    usage = {"status": "measured", "premium_requests": 0.5}
    r = suite.run([{"files": [{"path": "checklist.md", "content": "alpha beta gamma"}], "usage": usage}])
    assert r.report["proposals"][0]["spend"] == usage
    r = suite.run([{"files": [{"path": "checklist.md", "content": "alpha beta gamma"}], "usage": usage}],
                  describe={"optional_capabilities": ["target.context-overlay"]})
    assert r.report["proposals"][0]["spend"] == {"status": "unavailable"}
    assert r.report["spend_totals"]["proposals"] == {"status": "unavailable"}


def test_failed_call_keeps_measured_usage(suite):
    r = suite.run([], adapter="measuredfail")
    assert r.category == "optimizer_failure"
    assert r.report["proposals"][0]["spend"] == {"status": M, "premium_requests": 0.33}
    assert r.report["spend_totals"]["proposals"]["premium_requests"] == 0.33


def test_engine_shutdown_error_keeps_spend_and_evidence_but_no_score(make):
    r = make(executor="shutdownfails").run([])
    assert r.code == 1 and r.category == "infrastructure_failure"
    assert "engine shutdown failed" in r.message and r.report["failure"]["evaluation_index"] == 0
    ev = r.report["evaluations"][0]
    assert ev["state"] == "infrastructure_failure" and ev["score"] is None
    assert ev["spend"] == {"status": M, "premium_requests": 2}
    assert [t["task_id"] for t in ev["feedback"]["tasks"]] == ["opt-a", "opt-b"]
    assert (r.out / ev["evidence"]["path"]).is_file()
    assert r.report["spend_totals"]["evaluations"] == {"status": M, "premium_requests": 2}


def test_executor_that_cannot_start_fails_the_run_with_a_report(make):
    r = make(executor="startfails").run([])
    assert r.code == 1 and r.category == "infrastructure_failure" and "not logged in" in r.message
    ev = r.report["evaluations"][0]
    assert ev["state"] == "infrastructure_failure" and ev["evidence"] is None
    assert ev["spend"] == {"status": "unavailable"}


def test_total_provider_requests_need_every_part_to_name_the_provider():
    acme = {"status": M, "provider": "acme", "provider_requests": 2}
    assert spend.combine([acme, {"status": "unavailable"}]) == {"status": "partial"}
    assert spend.combine([acme, {"status": M, "input_tokens": 3}]) == {"status": "partial", "input_tokens": 3}
    assert spend.combine([acme, {"status": "partial"}]) == {"status": "partial"}


# -- fake script --------------------------------------------------------------------

GOOD = {"version": 1, "proposals": [{"files": [{"path": "a.md", "content": "x"}]}, {"done": True}]}


def test_a_good_script_parses():
    assert parse_script(json.dumps(GOOD).encode()) == GOOD


@pytest.mark.parametrize("raw", [
    b'{"version": 1, "proposals": [], "proposals": []}', b'{"version": 1, "proposals": [NaN]}',
    b'{"version": 1, "proposals": []} []', b'{"version": 2, "proposals": []}', b'{"proposals": []}',
    b'{"version": 1, "proposals": [{"done": false}]}', b'{"version": 1, "proposals": [{"files": [], "done": true}]}',
    b'{"version": 1, "proposals": [], "extra": 1}', b'{"version": 1, "proposals": [{"raw": "x", "usage": {}}]}',
    b'{"version": 1, "proposals": [], "describe": {"raw": "x", "paid_calls": true}}',
])
def test_malformed_scripts_are_rejected(raw):
    with pytest.raises(FakeScriptError):
        parse_script(raw)


@settings(max_examples=examples(200))
@given(st.data())
def test_no_malformed_script_is_accepted(data):
    doc = json.loads(json.dumps(GOOD))
    kind = data.draw(st.sampled_from(["extra_top", "extra_entry", "extra_file", "drop", "type", "trailing",
                                      "dup", "nan", "version"]))
    junk = data.draw(st.one_of(st.integers(), st.text(max_size=5), st.none(), st.booleans(),
                               st.lists(st.integers(), max_size=2)))
    key = data.draw(st.text(alphabet="abcxyz_", min_size=1, max_size=6))
    raw = None
    if kind == "extra_top":
        if key in ("version", "proposals", "describe"):
            key += "_x"
        doc[key] = junk
    elif kind == "extra_entry":
        doc["proposals"][data.draw(st.integers(0, 1))][key + "_x"] = junk
    elif kind == "extra_file":
        doc["proposals"][0]["files"][0][key + "_x"] = junk
    elif kind == "drop":
        target = data.draw(st.sampled_from(["version", "proposals", "path", "content"]))
        if target in ("path", "content"):
            del doc["proposals"][0]["files"][0][target]
        else:
            del doc[target]
    elif kind == "type":
        if isinstance(junk, str):
            junk = [junk]
        doc["proposals"][0]["files"][0]["content"] = junk if not isinstance(junk, str) else 1
    elif kind == "trailing":
        raw = (json.dumps(doc) + data.draw(st.sampled_from([" x", "{}", "[]", " 1", "\"s\""]))).encode()
    elif kind == "dup":
        raw = json.dumps(doc).replace('"version": 1', '"version": 1, "version": 1').encode()
    elif kind == "nan":
        raw = json.dumps(doc).replace('"version": 1', '"version": 1, "describe": {"paid_calls": NaN}').encode()
    else:
        doc["version"] = data.draw(st.sampled_from([0, 2, "1", 1.5, True, None]))
    raw = raw or json.dumps(doc).encode()
    with pytest.raises(FakeScriptError):
        parse_script(raw)


def test_malformed_script_is_invalid_config_before_any_evaluation(suite):
    bad = suite.root / "bad.json"
    bad.write_text('{"version": 1, "proposals": [{"done": true, "extra": 1}]}')
    r = suite.run(None, fake_script=str(bad))
    assert r.category == "invalid_config" and "--fake-script" in r.report["failure"]["message"]
    assert r.report["evaluations"] == []


def test_without_a_script_the_fake_adapter_is_done_at_once(suite):
    r = suite.run(None)
    assert r.report["proposals"][0]["result"] == "done" and r.report["stop_reason"] == "adapter_done"
