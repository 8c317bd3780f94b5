"""Price tables: a run whose executor reports tokens (or AI credits) but no cost gets its cost from
the table, with ``cost_source: "price_table"``; an unknown model is ``null``, never 0. End to end
through ``waza run`` with a real cli agent that reports tokens and a model, and the Copilot SDK's
AI credits mapped as waza (Go) reads them."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import WazaError
from waza_core.run import prices
from waza_core.run.prices import PriceTable, apply, builtin, model_key

# A cli agent that reports tokens (never a cost), like Codex or Gemini CLI.
AGENT = r'''
import json, sys
print(json.dumps({"result": "done: " + sys.argv[1],
                  "usage": {"input_tokens": 1000000, "output_tokens": 100000, "cache_read_tokens": 200000}}))
'''


def usage(**kw):
    return dict(kw)


@pytest.mark.parametrize("name", ["Claude Sonnet 4.5", "claude-sonnet-4.5", "claude-sonnet-4-5-20250929",
                                  "anthropic/claude-sonnet-4-5", "CLAUDE_SONNET_4_5", "claude-sonnet-4-5-latest"])
def test_one_model_however_it_is_spelled(name):
    assert model_key(name) == "claude-sonnet-4-5"


def test_the_builtin_table_says_where_and_when_its_prices_come_from():
    raw = json.loads(prices.BUILTIN_FILE.read_text())
    assert raw["kind"] == "waza.prices" and raw["as_of"] == "2026-12-04" and "github/docs" in raw["source"]
    table = builtin()
    assert table.as_of == "2026-12-04" and table.ai_credit_usd == 0.01 and len(table.models) >= 30
    sonnet = table.price_of("claude-sonnet-4-5")
    assert (sonnet.input, sonnet.cached_input, sonnet.output, sonnet.cache_write) == (3.0, 0.3, 15.0, 3.75)
    assert sonnet.input_includes_cached is False and table.price_of("gpt-5-mini").input_includes_cached is True


def test_anthropic_tokens_are_priced_with_cache_reads_apart_from_input():
    u = usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=200_000, cache_write_tokens=40_000)
    apply(builtin(), u, "claude-sonnet-4-5-20250929")
    # 1M x 3 + 0.2M x 0.30 + 0.04M x 3.75 + 0.1M x 15 = 3 + 0.06 + 0.15 + 1.5
    assert u["cost_usd"] == pytest.approx(4.71) and u["cost_source"] == "price_table"


def test_openai_cached_tokens_are_part_of_the_prompt_tokens():
    u = usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=400_000)
    apply(builtin(), u, "gpt-5-mini")
    # 0.6M fresh x 0.25 + 0.4M x 0.025 + 0.1M x 2.00 = 0.15 + 0.01 + 0.2
    assert u["cost_usd"] == pytest.approx(0.36)


@pytest.mark.parametrize("model, why", [("claude-opus-4-1", "model 'claude-opus-4-1' is not in the price table"),
                                        ("", "the run names no model")])
def test_an_unknown_model_costs_null_never_zero(model, why):
    u = usage(input_tokens=10, output_tokens=5)
    apply(builtin(), u, model)
    assert u["cost_usd"] is None and u["cost_unknown"] == why and u["cost_source"] == "price_table"


def test_the_agents_own_cost_and_empty_usage_are_left_alone():
    own = usage(input_tokens=10, cost_usd=0.5, cost_source="agent")
    apply(builtin(), own, "gpt-5-mini")
    assert own == {"input_tokens": 10, "cost_usd": 0.5, "cost_source": "agent"}
    nothing = usage(turns=2)
    apply(builtin(), nothing, "gpt-5-mini")
    assert nothing == {"turns": 2}
    apply(builtin(), None, "gpt-5-mini")  # no usage at all: nothing to price, nothing raised


def test_ai_credits_come_first_at_the_published_credit_value():
    u = usage(input_tokens=10**9, output_tokens=10, ai_credits=1.5)  # the credits are the bill, not the tokens
    apply(builtin(), u, "gpt-5-mini")
    assert u["cost_usd"] == pytest.approx(0.015) and u["cost_source"] == "price_table"
    unknown = usage(input_tokens=1_000_000, output_tokens=0, ai_credits=None)  # credits unavailable: tokens
    apply(builtin(), unknown, "gpt-5-mini")
    assert unknown["cost_usd"] == pytest.approx(0.25)


def test_per_model_usage_is_priced_per_model_and_one_unknown_model_makes_it_null():
    metrics = {"gpt-5-mini": {"input_tokens": 1_000_000, "output_tokens": 0},
               "claude-haiku-4.5": {"input_tokens": 0, "output_tokens": 1_000_000}}
    u = usage(input_tokens=1_000_000, output_tokens=1_000_000, model_metrics=metrics)
    apply(builtin(), u, "whatever the run said")
    assert u["cost_usd"] == pytest.approx(0.25 + 5.0)
    metrics["mystery-model"] = {"input_tokens": 1, "output_tokens": 1}
    u = usage(input_tokens=1, output_tokens=1, model_metrics=metrics)
    apply(builtin(), u, "gpt-5-mini")
    assert u["cost_usd"] is None and "mystery-model" in u["cost_unknown"]


def test_a_user_table_overrides_the_builtin_models(tmp_path):
    own = write(tmp_path / "p.yaml", "kind: waza.prices\nsource: our contract, 2026-11\nmodels:\n"
                "  claude-sonnet-4.5: {input: 1, output: 2, cached_input: 0.1, input_includes_cached: false}\n"
                "  our-model: {input: 10, output: 10}\n")
    table = builtin().merged(prices.read(own))
    assert table.price_of("claude-sonnet-4-5").input == 1.0 and table.price_of("gpt-5-mini").input == 0.25
    u = usage(input_tokens=1_000_000, output_tokens=0, cache_read_tokens=1_000_000)
    apply(table, u, "our-model")
    assert u["cost_usd"] is None and "no cached-input price" in u["cost_unknown"]


@pytest.mark.parametrize("text, where, message", [
    ("kind: prices\nmodels: {}\n", ":1:7", "kind must be 'waza.prices'"),
    ("kind: waza.prices\nmodels:\n  m: {input: -1, output: 2}\n", ":3:14", "input must be a number >= 0"),
    ("kind: waza.prices\nmodels:\n  m: {input: 1}\n", ":3:6", "output (USD per million tokens) is required"),
    ("kind: waza.prices\ncurrency: EUR\n", ":2:11", "only USD prices"),
    ("kind: waza.prices\nmodels: [a]\n", ":2:9", "models must be a mapping"),
    ("kind: [\n", ":2:1", "invalid YAML"),
])
def test_a_bad_table_is_a_clear_error_with_its_place(tmp_path, text, where, message):
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(WazaError) as info:
        prices.read(path)
    assert f"{path}{where}" in str(info.value) and message in str(info.value)


def test_a_missing_table_file_is_an_error(tmp_path):
    with pytest.raises(WazaError, match="cannot read the price table"):
        prices.read(tmp_path / "nope.json")


def test_the_table_is_picklable_for_remote_workers():
    import pickle

    table = builtin()
    assert pickle.loads(pickle.dumps(table)) == table and isinstance(table, PriceTable)


# -- end to end through waza run ------------------------------------------------------------------------


def make_suite(tmp_path, model: str, tasks: int = 2):
    agent = write(tmp_path / "agent.py", AGENT)
    cli = {"command": [sys.executable, str(agent), "{prompt}"], "output": "json", "output_path": "result",
           "usage_path": "usage"}
    suite = tmp_path / "s"
    write(suite / "eval.yaml", f"name: prices\nskill: s\nconfig:\n  executor: cli\n  model: {model}\n"
          f"  trials_per_task: 1\n  cli: {json.dumps(cli)}\ntasks: ['tasks/*.yaml']\n")
    for i in range(tasks):
        write(suite / "tasks" / f"t{i}.yaml", f"id: t{i}\ninputs: {{prompt: task {i}}}\n"
              "graders: [{type: text, name: g, config: {contains: [done]}}]\n")
    return suite


def run(waza, suite, *args):
    out = suite / "r.json"
    res = waza("run", "eval.yaml", "-q", "-o", str(out), *args, cwd=suite, timeout=120)
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_waza_run_prices_a_token_reporting_agent(waza, tmp_path):
    suite = make_suite(tmp_path, "gpt-5.4-mini")
    res, doc = run(waza, suite)
    assert res.returncode == 0, res.stderr
    u = doc["tasks"][0]["runs"][0]["usage"]
    # 0.8M fresh x 0.75 + 0.2M cached x 0.075 + 0.1M x 4.50 = 0.6 + 0.015 + 0.45
    assert u["cost_usd"] == pytest.approx(1.065) and u["cost_source"] == "price_table"
    assert doc["summary"]["usage"]["cost_usd"] == pytest.approx(2.13)
    assert doc["summary"]["usage"]["cost_source"] == "price_table"


def test_prices_option_waza_yaml_default_and_none(waza, tmp_path):
    suite = make_suite(tmp_path, "our-model", tasks=1)
    res, doc = run(waza, suite)
    assert doc["tasks"][0]["runs"][0]["usage"]["cost_usd"] is None  # not in the built-in table
    assert doc["summary"]["usage"]["cost_usd"] is None
    write(suite / "ours.json", json.dumps({"kind": "waza.prices", "models": {"our-model": {"input": 1, "output": 10,
                                                                                         "cached_input": 0.5}}}))
    res, doc = run(waza, suite, "--prices", "ours.json")
    assert doc["tasks"][0]["runs"][0]["usage"]["cost_usd"] == pytest.approx(0.8 + 0.1 + 1.0)
    write(suite / ".waza.yaml", "defaults:\n  prices: ours.json\n")
    res, doc = run(waza, suite)
    assert doc["tasks"][0]["runs"][0]["usage"]["cost_source"] == "price_table"
    res, doc = run(waza, suite, "--prices", "none")
    assert "cost_usd" not in doc["tasks"][0]["runs"][0]["usage"]


def test_a_bad_prices_option_is_exit_2(waza, tmp_path):
    suite = make_suite(tmp_path, "gpt-5-mini", tasks=1)
    write(suite / "bad.json", '{"kind": "waza.prices", "models": {"m": {"input": "cheap", "output": 1}}}')
    res, _ = run(waza, suite, "--prices", "bad.json")
    err = res.stderr.decode()
    assert res.returncode == 2 and "bad.json:1:" in err and "input must be a number" in err
    assert "Traceback" not in err


def test_the_spend_cap_counts_price_table_costs(waza, tmp_path):
    suite = make_suite(tmp_path, "gpt-5.4-mini", tasks=4)
    res, doc = run(waza, suite, "--max-spend", "2.2")  # 1.065 per run: two fit, the third could pass the cap
    assert res.returncode == 1 and doc["spend"]["runs_skipped"] == 2
    assert doc["spend"]["spent_usd"] == pytest.approx(2.13)


# -- the Copilot SDK's AI credits -----------------------------------------------------------------------


def test_copilot_sdk_metrics_map_ai_credits_as_waza_go_reads_them():
    from waza_adapters.copilot_sdk import _usage_from_metrics

    # the figures of waza (Go)'s TestUsageMetricsAuthoritativeOverShutdown
    metrics = {"totalNanoAiu": 1_123_456_789.0, "totalPremiumRequestCost": 2,
               "modelMetrics": {"reported": {"totalNanoAiu": 1_123_456_789.0,
                                             "usage": {"inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 3,
                                                       "cacheWriteTokens": 4},
                                             "requests": {"count": 5, "cost": 2}},
                                "unavailable": {"usage": {"inputTokens": 1}}}}
    u = _usage_from_metrics(metrics)
    assert u["ai_credits"] == 1.123456789 and u["input_tokens"] == 11 and u["premium_requests"] == 2
    assert u["model_metrics"]["reported"]["ai_credits"] == 1.123456789
    assert "ai_credits" not in u["model_metrics"]["unavailable"]
    assert "ai_credits" not in _usage_from_metrics({"modelMetrics": {}})  # no credits: unavailable, not 0
    assert _usage_from_metrics({"totalNanoAiu": 0.0})["ai_credits"] == 0.0  # a reported zero is a zero
    apply(builtin(), u, "")
    assert u["cost_usd"] == pytest.approx(0.01123456789) and u["cost_source"] == "price_table"


@pytest.mark.parametrize("status", ["partial", "unavailable"])
def test_copilot_sdk_credits_that_the_sdk_marks_incomplete_are_null(status):
    from waza_adapters.copilot_sdk import _usage_from_metrics

    u = _usage_from_metrics({"totalNanoAiu": 5e8, "aiCreditsStatus": status, "modelMetrics": {}})
    assert "ai_credits" not in u


def test_copilot_sdk_shutdown_credits_when_the_metrics_call_failed():
    from tests.adapters.test_copilot_sdk import STREAMS, flat
    from waza_adapters.copilot_sdk import evidence_from_session

    stream = json.loads((STREAMS / "followup_metrics.json").read_text())
    events = flat(stream) + [{"type": "session.shutdown", "id": "x", "timestamp": "2026-05-01T10:00:09+00:00",
                              "data": {"totalNanoAiu": 2e9}}]
    ev = evidence_from_session(events, session_id="s", error=None, user_input_requests=[], usage_metrics=None,
                               duration_ms=1)
    assert ev.usage["ai_credits"] == 2.0
    with_rpc = dict(stream["usage_metrics"], totalNanoAiu=3e9)
    ev = evidence_from_session(events, session_id="s", error=None, user_input_requests=[], usage_metrics=with_rpc,
                               duration_ms=1)
    assert ev.usage["ai_credits"] == 3.0  # the metrics call is authoritative over the shutdown event


def test_no_price_step_for_an_executor_that_never_reports_usage(make_suite, registry, monkeypatch):
    """The mock's usage is always null: its runs get no price-table step (and so no per-run
    setup at all); an executor that may report usage keeps it."""
    from tests.conftest import BASIC_EVAL
    from waza_core.run.plan import RunOptions
    from waza_core.run.recipe import check_before_running
    from waza_core.suite.load import load_suite

    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}), registry)
    prepared = check_before_running(suite, registry, RunOptions(prices=builtin()))
    assert type(prepared.executor).reports_usage is False
    assert prices.price_costs(prepared) is None and prepared.preparers == []
    monkeypatch.setattr(type(prepared.executor), "reports_usage", True)
    assert callable(prices.price_costs(prepared))
