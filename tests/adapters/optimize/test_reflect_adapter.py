"""copilot-reflect through a fake Copilot backend: session options, replies, usage and
every error path, called directly and inside the optimizer loop. No Copilot account."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time

import pytest

from waza_adapters import copilot_reflect
from waza_adapters.copilot_reflect import DONE, CopilotReflectAdapter
from waza_core.errors import WazaError
from waza_core.optimize import contract
from waza_core.optimize.adapter import AdapterFailure, AdapterOptions
from waza_core.suite import schema

from .conftest import PARENT_ID, SEED_TEXT, failed_task, propose_request
from .fake_reflect import FakeReflectBackend, Scripted, reply, usage_event

MODEL = "claude-haiku-4.5"
ADDED = ("# Release checklist\n\n- Run the unit tests\n- Update the changelog\n- Run the linter\n"
         "- Update the documentation\n- Bump the version number\n")
GOOD = f"I added the two missing steps.\n<<<WAZA-FILE path=checklist.md>>>\n{ADDED}<<<WAZA-END>>>\n"


@pytest.fixture
def fake(monkeypatch):
    """Install a fake backend; returns a function that sets its script."""
    holder = {}

    def make(replies=(), **kw) -> FakeReflectBackend:
        holder["backend"] = FakeReflectBackend(list(replies), **kw)
        return holder["backend"]

    monkeypatch.setattr(CopilotReflectAdapter, "backend_factory", staticmethod(lambda: holder["backend"]))
    return make


def adapter(reflect_model=MODEL, eval_model="mock") -> CopilotReflectAdapter:
    a = CopilotReflectAdapter(AdapterOptions.of({"model": reflect_model}, eval_model=eval_model))
    assert a.check_options() == []
    return a


def describe(a, timeout=30.0, cancel=None):
    raw = a.call(contract.describe_request("context-overlay"), timeout=timeout, cancel=cancel or threading.Event())
    return contract.parse_reply(raw.raw, "describe", contract.CONTRACT_VERSIONS)


def propose(a, request=None, timeout=30.0, cancel=None):
    request = request or propose_request([failed_task("opt-docs", "Missing expected substring: update the docs")])
    reply_ = a.call(request, timeout=timeout, cancel=cancel or threading.Event())
    return contract.parse_reply(reply_.raw, "propose", ("1.0",)), reply_


# -- happy paths -----------------------------------------------------------------------------------


def test_describe_starts_the_cli_checks_login_and_negotiates(fake):
    backend = fake(models=[MODEL, "gpt-5"])
    a = adapter()
    doc = describe(a)
    neg = contract.negotiate(doc, "context-overlay")
    assert neg.paid_calls and neg.has("feedback.task-results") and neg.has("propose.files")
    assert backend.names() == ["start", "auth_status"]
    a.close()
    assert backend.names()[-1] == "stop"


def test_propose_returns_the_complete_file_set_and_measured_usage(fake):
    backend = fake([reply(GOOD, cost=0.33)])
    a = adapter()
    describe(a)
    files = [{"path": "checklist.md", "content": SEED_TEXT}, {"path": "notes.md", "content": "keep me\n"}]
    doc, raw = propose(a, propose_request([failed_task("opt-docs", "x")], files=files))
    assert doc["status"] == "candidate" and doc["parent_id"] == PARENT_ID
    assert doc["files"] == [{"path": "checklist.md", "content": ADDED}, {"path": "notes.md", "content": "keep me\n"}]
    assert raw.usage == {"status": "measured", "premium_requests": 0.33, "input_tokens": 1000, "output_tokens": 200}
    assert doc["usage"] == raw.usage
    # one ephemeral session per proposal: created, sent, usage read, disconnected, deleted
    assert backend.names()[2:] == ["create_session", "send", "usage_metrics", "disconnect", "delete_session"]
    a.close()


def test_done_reply(fake):
    fake([reply(f"Every task passes already.\n{DONE}")])
    a = adapter()
    describe(a)
    doc, _ = propose(a)
    assert doc["status"] == "done" and "files" not in doc
    a.close()


def test_session_totals_win_over_per_call_events(fake):
    metrics = {"modelMetrics": {MODEL: {"requests": {"count": 1, "cost": 0.66},
                                        "usage": {"inputTokens": 5, "outputTokens": 6}}},
               "totalPremiumRequestCost": 0.66}
    fake([reply(GOOD, cost=9.0, metrics=metrics)])
    a = adapter()
    describe(a)
    _, raw = propose(a)
    assert raw.usage == {"status": "measured", "premium_requests": 0.66, "input_tokens": 5, "output_tokens": 6}
    a.close()


def test_partial_usage(fake):
    fake([Scripted(text=GOOD, usage=[usage_event(cost=1.0), usage_event(cost=None)])])
    a = adapter()
    describe(a)
    _, raw = propose(a)
    assert raw.usage == {"status": "partial", "premium_requests": 1.0, "input_tokens": 2000, "output_tokens": 400}
    a.close()


# -- the session the model gets --------------------------------------------------------------------


def test_session_is_isolated(fake):
    backend = fake([reply(GOOD), reply(DONE)])
    a = adapter(reflect_model="gpt-5", eval_model="claude-sonnet-4.5")
    describe(a)
    propose(a)
    propose(a)
    a.close()
    assert len(backend.options) == 2
    for opts in backend.options:
        assert opts["model"] == "gpt-5"  # --reflect-model wins over the eval model
        assert opts["available_tools"] == [] and opts["excluded_tools"] == ["builtin:*", "mcp:*", "custom:*"]
        assert opts["enable_skills"] is False and opts["skill_directories"] == []
        assert opts["included_builtin_skills"] == []
        assert "name" not in opts and "session_id" not in opts  # a name would persist the session
        assert opts["enable_session_store"] is False and opts["memory"] == {"enabled": False}
        assert opts["infinite_sessions"] == {"enabled": False}
        assert opts["enable_config_discovery"] is False and opts["skip_custom_instructions"] is True
        assert opts["enable_on_demand_instruction_discovery"] is False and opts["skip_embedding_retrieval"] is True
        assert opts["instruction_directories"] == [] and opts["agent_directories"] == []
        assert opts["hook_directories"] == [] and opts["enable_file_hooks"] is False
        assert opts["system_message"]["sections"]["environment_context"] == {"action": "remove"}
        assert "mcp_servers" not in opts and "on_permission_request" not in opts
    # a fresh, empty working folder per session, removed afterwards
    (wd1, listing1), (wd2, listing2) = backend.workdirs_seen
    assert listing1 == [] and listing2 == [] and wd1 != wd2
    assert not os.path.exists(wd1) and not os.path.exists(wd2)
    assert os.path.realpath(wd1) != os.path.realpath(os.getcwd())
    # nobody answers questions
    assert all("no user is available" in r for r in backend.user_input_refused)


def test_eval_model_is_used_without_reflect_model(fake):
    backend = fake([reply(DONE)])
    a = adapter(reflect_model=None, eval_model="claude-sonnet-4.5")
    describe(a)
    propose(a)
    a.close()
    assert backend.options[0]["model"] == "claude-sonnet-4.5"


def test_sdk_wait_is_later_than_the_adapter_timeout(fake):
    """The SDK's own timeout does not abort the turn, so ours must fire first."""
    backend = fake([reply(DONE)])
    a = adapter()
    describe(a)
    propose(a, timeout=30)
    a.close()
    assert backend.sdk_timeouts[0] > 30


# -- error paths -----------------------------------------------------------------------------------


def test_malformed_reply_keeps_its_usage(fake):
    fake([reply("I think the checklist is fine, but maybe add docs?", cost=0.5)])
    a = adapter()
    describe(a)
    with pytest.raises(AdapterFailure) as info:
        propose(a)
    assert info.value.category == "malformed_proposal"
    assert "neither file blocks nor <<<WAZA-DONE>>>" in str(info.value)
    assert "it begins: 'I think the checklist is fine" in str(info.value)
    assert info.value.usage["premium_requests"] == 0.5
    a.close()


def test_no_reply_text_is_malformed(fake):
    fake([Scripted(text=None, usage=[usage_event()])])
    a = adapter()
    describe(a)
    with pytest.raises(AdapterFailure) as info:
        propose(a)
    assert info.value.category == "malformed_proposal"
    a.close()


def test_sub_agent_messages_are_not_the_answer(fake):
    sub = {"type": "assistant.message", "data": {"content": GOOD}, "agentId": "explore-1"}
    fake([Scripted(text=DONE, usage=[usage_event()], extra_events=[sub])])
    a = adapter()
    describe(a)
    doc, _ = propose(a)
    assert doc["status"] == "done"
    a.close()


def test_not_signed_in(fake):
    backend = fake(authenticated=False)
    a = adapter()
    with pytest.raises(AdapterFailure) as info:
        describe(a)
    message = str(info.value)
    assert info.value.category == "optimizer_failure"
    assert "GitHub Copilot is not signed in (No authentication information found)" in message
    assert "copilot login" in message and "waza starts no login" in message
    assert "create_session" not in backend.names()
    a.close()


def test_cli_that_cannot_start(fake):
    fake(start_error=WazaError("cannot start the Copilot CLI: exited with code 1"))
    a = adapter()
    with pytest.raises(AdapterFailure, match="copilot-reflect: cannot start the Copilot CLI: exited with code 1"):
        describe(a)
    a.close()


def test_unexpected_start_error(fake):
    fake(start_error=ConnectionResetError("pipe closed"))
    a = adapter()
    with pytest.raises(AdapterFailure, match="cannot talk to the Copilot CLI: pipe closed"):
        describe(a)
    a.close()


def test_unknown_model(fake):
    fake(models=["claude-haiku-4.5", "gpt-5"])
    a = adapter(reflect_model="claude-haiku-45")
    with pytest.raises(AdapterFailure) as info:
        describe(a)
    assert "model 'claude-haiku-45' from --reflect-model is not available" in str(info.value)
    assert "did you mean 'claude-haiku-4.5'?" in str(info.value)
    a.close()


def test_session_cannot_be_created(fake):
    fake([Scripted(create_error=RuntimeError("quota exceeded"))])
    a = adapter()
    describe(a)
    with pytest.raises(AdapterFailure) as info:
        propose(a)
    assert info.value.category == "optimizer_failure"
    assert "cannot create a Copilot session: quota exceeded" in str(info.value)
    assert info.value.usage is None
    a.close()


def test_session_error_keeps_usage(fake):
    backend = fake([Scripted(text=None, usage=[usage_event(cost=0.33)], error="Model overloaded")])
    a = adapter()
    describe(a)
    with pytest.raises(AdapterFailure) as info:
        propose(a)
    assert info.value.category == "optimizer_failure"
    assert str(info.value) == "copilot-reflect: session error: Model overloaded"
    assert info.value.usage == {"status": "measured", "premium_requests": 0.33, "input_tokens": 1000,
                                "output_tokens": 200}
    assert backend.names()[-2:] == ["disconnect", "delete_session"]
    a.close()


def test_send_failure_without_event(fake):
    fake([Scripted(raises=ConnectionError("CLI went away"), usage=[])])
    a = adapter()
    describe(a)
    with pytest.raises(AdapterFailure, match="the session failed: CLI went away") as info:
        propose(a)
    assert info.value.usage is None
    a.close()


def test_usage_metrics_failure_falls_back_to_events(fake):
    fake([reply(GOOD, cost=0.25, metrics=RuntimeError("no metrics"))])
    a = adapter()
    describe(a)
    _, raw = propose(a)
    assert raw.usage["premium_requests"] == 0.25
    a.close()


def test_timeout_aborts_the_turn_and_keeps_usage(fake):
    backend = fake([Scripted(hang=True, usage=[usage_event(cost=0.5)])])
    a = adapter()
    describe(a)
    t0 = time.monotonic()
    with pytest.raises(AdapterFailure) as info:
        propose(a, timeout=1.0)
    assert time.monotonic() - t0 < 10
    assert "did not answer in time (--adapter-timeout)" in str(info.value)
    assert info.value.usage["premium_requests"] == 0.5
    assert backend.names()[-4:] == ["abort", "usage_metrics", "disconnect", "delete_session"]
    a.close()


def test_cancellation_aborts_the_turn(fake):
    backend = fake([Scripted(hang=True, usage=[usage_event(cost=0.5)])])
    a = adapter()
    describe(a)
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with pytest.raises(AdapterFailure, match="cancelled; the session was aborted") as info:
        propose(a, timeout=60, cancel=cancel)
    assert info.value.usage["premium_requests"] == 0.5
    assert "abort" in backend.names() and backend.names()[-1] == "delete_session"
    a.close()


def test_a_stuck_cleanup_is_bounded_and_keeps_the_observed_usage(fake, monkeypatch):
    for name in ("ABORT_SECONDS", "METRICS_SECONDS", "DISCONNECT_SECONDS"):
        monkeypatch.setattr(copilot_reflect, name, 0.2)
    backend = fake([Scripted(hang=True, stuck_cleanup=True, usage=[usage_event(cost=0.5)])])
    a = adapter()
    describe(a)
    t0 = time.monotonic()
    with pytest.raises(AdapterFailure, match="did not answer in time") as info:
        propose(a, timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert info.value.usage["premium_requests"] == 0.5  # from the events, as the metrics never came
    assert backend.names()[-4:] == ["abort", "usage_metrics", "disconnect", "delete_session"]
    a.close()


def test_a_session_that_will_not_stop_is_cancelled_outright(fake, monkeypatch, tmp_path):
    monkeypatch.setattr(copilot_reflect, "CLEANUP_GRACE", 0.3)  # shorter than the abort wait
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the session's folder is made
    backend = fake([Scripted(hang=True, stuck_cleanup=True, usage=[usage_event(cost=0.5)])])
    a = adapter()
    describe(a)
    cancel = threading.Event()

    def cancel_when_sent():
        while "send" not in backend.names():
            time.sleep(0.01)
        cancel.set()

    threading.Thread(target=cancel_when_sent, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(AdapterFailure, match="cancelled") as info:
        propose(a, timeout=60, cancel=cancel)
    assert time.monotonic() - t0 < 5
    assert backend.names()[-1] == "abort"  # stuck there, then cancelled outright
    assert info.value.usage["premium_requests"] == 0.5
    a.close()
    assert not list(tmp_path.glob("waza-reflect-*"))  # removed although its cleanup was cancelled


@pytest.mark.parametrize("opts,expected", [
    ({"eval_model": "mock"}, "needs --reflect-model when the eval model is 'mock'"),
    ({"eval_model": ""}, "needs --reflect-model when the eval model is 'not set'"),
])
def test_reflect_model_is_required_with_a_mock_eval_model(fake, opts, expected):
    fake()
    problems = CopilotReflectAdapter(AdapterOptions.of(**opts)).check_options()
    assert len(problems) == 1 and expected in problems[0]


def test_missing_sdk_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "copilot", None)  # as if github-copilot-sdk were not installed
    problems = CopilotReflectAdapter(AdapterOptions.of({"model": MODEL}, eval_model="mock")).check_options()
    assert problems == ["--adapter copilot-reflect needs the GitHub Copilot SDK; install it with: "
                        "pip install 'waza[copilot]' (or pip install github-copilot-sdk)"]


def test_plugin_module_is_import_light():
    import subprocess

    code = ("import sys, waza_adapters.copilot_reflect, waza_adapters.command; "
            "heavy = [m for m in ('copilot', 'asyncio', 'waza_adapters.copilot_sdk', 'jsonschema') "
            "if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


# -- inside the optimizer loop ---------------------------------------------------------------------


def _report_ok(out):
    assert not list(schema.plain_validator("optimizer-report-1.0").iter_errors(out.report))
    return out


def run_reflect(example, **kw):
    kw.setdefault("reflect_model", MODEL)
    return _report_ok(example.run(adapter="copilot-reflect", command=None, **kw))


def test_walkthrough_with_scripted_replies_is_accepted(fake, example):
    backend = fake([reply(GOOD, cost=0.33), reply(f"Nothing left.\n{DONE}", cost=0.33)])
    out = run_reflect(example, max_iterations=2)
    assert (out.code, out.outcome, out.report["stop_reason"]) == (0, "accepted", "adapter_done")
    assert [p["result"] for p in out.report["proposals"]] == ["candidate", "done"]
    assert out.report["adapter"]["kind"] == "copilot-reflect" and out.report["adapter"]["paid_calls"] is True
    assert [p["spend"] for p in out.report["proposals"]] == [
        {"status": "measured", "premium_requests": 0.33, "input_tokens": 1000, "output_tokens": 200}] * 2
    assert out.report["spend_totals"]["proposals"]["premium_requests"] == 0.66
    assert out.report["spend_totals"]["evaluations"] == {"status": "unavailable"}
    # the prompts held optimization feedback only: never a held-out task, phrase or score
    assert len(backend.prompts) == 2
    for prompt in backend.prompts:
        for secret in ("qual-lint", "qual-tag", "tag the release", "qualification", "held-out"):
            assert secret not in prompt.lower()
    assert "opt-docs" in backend.prompts[0] and "Missing expected substring: update the documentation" in \
        backend.prompts[0]
    assert backend.names()[-1] == "stop"  # the CLI is stopped when the run ends


def test_malformed_reply_in_the_loop_keeps_spend(fake, example):
    fake([reply("Sure! Here is a better checklist: ...", cost=0.4)])
    out = run_reflect(example)
    assert (out.code, out.category) == (1, "malformed_proposal")
    proposal = out.report["proposals"][0]
    assert proposal["failure"]["category"] == "malformed_proposal"
    assert proposal["spend"]["premium_requests"] == 0.4
    assert out.report["spend_totals"]["proposals"]["premium_requests"] == 0.4


def test_unsafe_block_path_in_the_loop(fake, example):
    fake([reply("<<<WAZA-FILE path=../../etc/evil.md>>>\nx\n<<<WAZA-END>>>")])
    assert run_reflect(example).category == "unsafe_candidate_path"


def test_missing_login_in_the_loop_is_a_clear_optimizer_failure(fake, example):
    fake(authenticated=False)
    out = run_reflect(example)
    assert (out.code, out.outcome, out.category) == (1, "failed", "optimizer_failure")
    assert "not signed in" in out.message and out.report["evaluations"] == []


def test_consent_is_required_before_the_cli_starts(fake, example):
    backend = fake()
    out = run_reflect(example, allow_paid_calls=False)
    assert out.category == "consent_required" and "copilot-reflect adapter may make paid calls" in out.message
    assert backend.calls == []


def test_reflect_model_missing_in_the_loop(fake, example):
    backend = fake()
    out = run_reflect(example, reflect_model=None)
    assert out.category == "invalid_config" and "--reflect-model" in out.message
    assert backend.calls == []


def test_ctrl_c_during_a_proposal_aborts_the_session(fake, example):
    backend = fake([Scripted(hang=True, usage=[usage_event(cost=0.2)])])
    main = threading.main_thread().ident

    def press_ctrl_c():
        deadline = time.monotonic() + 30
        while "send" not in backend.names() and time.monotonic() < deadline:
            time.sleep(0.02)
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=press_ctrl_c, daemon=True).start()
    out = run_reflect(example)
    assert (out.outcome, out.category) == ("incomplete", "cancelled")
    assert "abort" in backend.names() and "delete_session" in backend.names() and backend.names()[-1] == "stop"
    assert out.report["proposals"][0]["spend"]["premium_requests"] == 0.2


def test_report_keeps_no_prompt_or_reply_text(fake, example):
    fake([reply(GOOD), reply(DONE)])
    out = run_reflect(example)
    text = json.dumps(out.report)
    assert "You improve a set of text files" not in text and "I added the two missing steps" not in text
