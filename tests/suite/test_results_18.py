"""Results 1.8: a file of every version waza (Go) wrote reads, regrades, gates and compares;
`waza migrate` raises it to 1.8 changing nothing else; AI credits sum as waza sums them."""

from __future__ import annotations

import json

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from tests.suite.test_results_versions import EVAL, TASK, go_results
from waza_core.results.stats import sum_usage

VERSIONS = [None, "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"]


@pytest.fixture
def files(tmp_path):
    out = {}
    for v in VERSIONS:
        f = tmp_path / f"r-{v}.json"
        f.write_text(json.dumps(go_results(v), indent=2))
        out[v] = f
    return out


def test_every_version_regrades_gates_and_compares(waza, make_suite, files, tmp_path):
    suite = make_suite(EVAL, {"tasks/t.yaml": TASK})
    for v, f in files.items():
        out = tmp_path / f"g-{v}.json"
        res = waza("grade", str(suite), "--results", str(f), "-o", str(out))
        assert res.returncode == 0, (v, res.stderr)
        regraded = json.loads(out.read_text())
        assert regraded["tasks"][0]["status"] == "passed"
        res = waza("gate", "--baseline", str(f), "--current", str(out), "-f", "json")
        assert res.returncode == 0, (v, res.stderr)
        assert json.loads(res.stdout)["verdict"] == "pass"
    res = waza("compare", *map(str, files.values()), "-f", "json")
    assert res.returncode == 0, res.stderr


def test_migrate_raises_each_version_to_1_8_and_nothing_else(waza, files):
    for f in files.values():
        before = json.loads(f.read_text())
        res = waza("migrate", str(f))
        assert res.returncode == 0, res.stderr
        after = json.loads(f.read_text())
        assert after == dict(before, schemaVersion="1.8")
        assert waza("migrate", "--check", str(f)).returncode == 0
    res = waza("migrate", "--check", str(files["1.8"]))
    assert b"already compatible with schemaVersion 1.8" in res.stdout


def test_migrate_check_reports_an_old_results_file(waza, files):
    res = waza("migrate", "--check", str(files["1.4"]))
    assert res.returncode == 1 and b"schemaVersion '1.4' -> \"1.8\"" in res.stdout


def test_v18_fields_are_kept_by_a_regrade(waza, make_suite, files, tmp_path):
    suite = make_suite(EVAL, {"tasks/t.yaml": TASK})
    out = tmp_path / "g.json"
    assert waza("grade", str(suite), "--results", str(files["1.8"]), "-o", str(out)).returncode == 0
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    original = go_results("1.8")["tasks"][0]["runs"][0]
    for key in ("host_lifecycle", "mcp_invocations", "user_input_requests", "command_invocations"):
        assert run[key] == original[key]
    assert run["session_digest"]["usage"]["ai_credits"] == 0.25


# -- AI credits, as waza (Go) AggregateUsageStats sums them ---------------------------------

def _u(tokens, credits=None, models=None):
    u = {"input_tokens": tokens}
    if credits is not None:
        u["ai_credits"] = credits
    if models is not None:
        u["model_metrics"] = models
    return u


def test_credits_known_only_when_every_run_reported_them():
    reported = _u(1, 1.0, {"a": {"input_tokens": 1, "ai_credits": 1.0}})
    missing = _u(2, None, {"a": {"input_tokens": 2}})
    for parts in ([reported, missing], [missing, reported], [reported, None], [None, reported]):
        agg = sum_usage(parts)
        assert agg["ai_credits"] is None
        assert agg["input_tokens"] == sum(p["input_tokens"] for p in parts if p)
        if None not in parts:
            assert agg["model_metrics"]["a"]["ai_credits"] is None
    agg = sum_usage([reported, reported])
    assert agg["ai_credits"] == 2.0 and agg["model_metrics"]["a"]["ai_credits"] == 2.0
    agg = sum_usage([reported, _u(0, 0.0, {"b": {"ai_credits": 0.0}})])
    assert agg["ai_credits"] == 1.0  # a reported zero is a real zero
    assert agg["model_metrics"]["a"]["ai_credits"] == 1.0 and agg["model_metrics"]["b"]["ai_credits"] == 0.0
    assert sum_usage([reported], missing=1)["ai_credits"] is None  # a run that reported no usage at all


@pytest.mark.parametrize("other,unknown", [
    (None, True),                                  # a missing session
    (_u(3), True),                                 # usage without model attribution
    ({"ai_credits": 1.0}, True),                   # credits without attribution
    (_u(0, None, {"other": {"input_tokens": 3}}), False),  # another model: this one stays known
])
def test_model_credits_need_complete_attribution(other, unknown):
    agg = sum_usage([_u(2, 2.0, {"reported": {"input_tokens": 2, "ai_credits": 2.0}}), other])
    assert agg["model_metrics"]["reported"]["input_tokens"] == 2
    if unknown:
        assert agg["model_metrics"]["reported"]["ai_credits"] is None
    else:
        assert agg["model_metrics"]["reported"]["ai_credits"] == 2.0
        assert "ai_credits" not in agg["model_metrics"]["other"]


def test_no_usage_anywhere_is_null_not_zero():
    assert sum_usage([None, None]) is None
    assert "ai_credits" not in sum_usage([_u(1), _u(2)])  # nobody reported credits: the key is absent
