"""The ``copilot-sdk`` executor: recorded session events -> run evidence, the run
lifecycle through a fake backend, and the real SDK's types and start-up errors.

No test needs a Copilot account or the network.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
import threading
import time
import typing
from pathlib import Path

import pytest

from waza_adapters.copilot_sdk import LOGIN_HINT, CopilotSdkExecutor, SdkBackend, evidence_from_session
from waza_core.errors import SuiteError, WazaError
from waza_core.run.execution import ExecutionRequest

from .fake_copilot import STREAMS, FakeBackend, load_stream

needs_sdk = pytest.mark.skipif(importlib.util.find_spec("copilot") is None,
                               reason="github-copilot-sdk is not installed")


def flat(stream: dict) -> list[dict]:
    return [e for turn in stream["turns"] for e in turn]


def evidence_of(name: str, **kw):
    stream = load_stream(name)
    args = {"session_id": stream["session_id"], "error": None, "user_input_requests": [],
            "usage_metrics": stream["usage_metrics"], "duration_ms": 5}
    args.update(kw)
    return evidence_from_session(flat(stream), **args)


# -- recorded event streams -> evidence ---------------------------------------------------------------


def test_skill_and_tools_stream():
    ev = evidence_of("skill_and_tools")
    assert ev.error is None
    assert ev.output == "I'll use the python-scripts skill.\nCreated hello.py; running it prints hello."
    assert ev.skill_invocations == [{"name": "python-scripts", "path": "/skills/python-scripts/SKILL.md"}]
    # report_intent is dropped everywhere; the rest pair start and completion by id, in start order
    assert [c["name"] for c in ev.tool_calls] == ["skill", "create", "bash"]
    assert ev.tool_calls[1] == {
        "id": "c2", "name": "create", "success": True,
        "arguments": {"path": "/ws/hello.py", "file_text": "#!/usr/bin/env python3\nprint('hello')\n",
                      "command": "", "description": "", "skill": ""},
        "result": {"content": "Created file /ws/hello.py with 38 characters"},
    }
    assert ev.tool_calls[2]["arguments"]["command"] == "python3 hello.py"
    assert [(t["turn"], t["sequence"], t["tool_name"]) for t in ev.tool_events] == [
        (1, 1, "skill"), (2, 2, "create"), (3, 3, "bash")]
    assert ev.tool_events[0]["duration_ms"] == 250 and ev.tool_events[0]["args"] == {"skill": "python-scripts"}
    assert all(t["success"] and "error" not in t for t in ev.tool_events)
    assert ev.host_lifecycle == {
        "turns": [{"index": i + 1, "turn_id": str(i), "started_at": f"2026-05-01T10:00:{a}Z",
                   "ended_at": f"2026-05-01T10:00:{b}Z"}
                  for i, (a, b) in enumerate([("00.200", "01.700"), ("01.800", "02.800"), ("02.900", "04.200")])],
        "shell_calls": [{"sequence": 3, "tool_call_id": "c3", "command": "python3 hello.py", "exit_code": 0}],
    }
    # usage: no session totals in this stream, so the per-call assistant.usage events are summed
    assert ev.usage == {"turns": 3, "input_tokens": 4400, "output_tokens": 125, "cache_read_tokens": 3300,
                        "cache_write_tokens": 100, "premium_requests": 3,
                        "model_metrics": {"claude-sonnet-4.5": {"input_tokens": 4400, "output_tokens": 125,
                                                                "cache_read_tokens": 3300, "cache_write_tokens": 100,
                                                                "request_count": 3, "request_cost": 3}}}
    assert ev.session_id == "sess-skill" and ev.user_input_requests == [] and ev.command_invocations is None


def test_transcript_projection_leaves_out_intents_and_ephemeral_events():
    ev = evidence_of("skill_and_tools")
    types = [e["type"] for e in ev.transcript]
    assert "assistant.usage" not in types and "session.idle" not in types  # ephemeral
    assert "tool.execution_partial_result" not in types
    assert not any(e.get("tool_call_id") == "c0" for e in ev.transcript)  # report_intent
    assert ev.transcript[1] == {"type": "user.message", "content": "Create hello.py that prints hello, then run it."}
    start = next(e for e in ev.transcript if e["type"] == "tool.execution_start" and e["tool_call_id"] == "c3")
    assert start == {"type": "tool.execution_start", "tool_call_id": "c3", "tool_name": "bash",
                     "arguments": {"command": "python3 hello.py", "description": "Run the script"}}
    done = next(e for e in ev.transcript if e["type"] == "tool.execution_complete" and e["tool_call_id"] == "c3")
    assert done == {"type": "tool.execution_complete", "tool_call_id": "c3", "success": True,
                    "tool_result": {"content": "hello\n<exited with exit code 0>"}}
    assert {"type": "skill.invoked", "skill": {"name": "python-scripts", "path": "/skills/python-scripts/SKILL.md"}} \
        in ev.transcript
    assert json.loads(json.dumps(ev.transcript)) == ev.transcript  # plain JSON for the results file


def test_session_error_stream():
    ev = evidence_of("session_error")
    assert ev.error == "session error: Model 'gpt-9' is not available."
    assert ev.transcript[-1] == {"type": "session.error", "message": "Model 'gpt-9' is not available."}
    assert ev.output == "" and ev.tool_calls == [] and ev.usage is None


def test_followup_stream_with_failed_tool_subagent_and_session_totals():
    ev = evidence_of("followup_metrics")
    assert ev.output == "The test expects 3; fixed.\nOne test still fails."  # not the sub-agent's notes
    view = ev.tool_events[0]
    assert view["success"] is False and view["error"] == "Permission denied: /ws/secret.txt"
    assert ev.tool_calls[0]["success"] is False and "result" not in ev.tool_calls[0]
    failed = next(e for e in ev.transcript if e["type"] == "tool.execution_complete" and e["tool_call_id"] == "t1")
    assert failed["message"] == "Permission denied: /ws/secret.txt" and failed["success"] is False
    assert [t["tool_name"] for t in ev.tool_events] == ["view", "grep", "bash"]  # sub-agent tools count
    assert ev.host_lifecycle["shell_calls"] == [{"sequence": 3, "tool_call_id": "t4", "command": "pytest -q",
                                                 "exit_code": 1}]
    assert [t["index"] for t in ev.host_lifecycle["turns"]] == [1, 2]
    assert ev.usage == {
        "turns": 2, "input_tokens": 5800, "output_tokens": 390, "cache_read_tokens": 4000, "cache_write_tokens": 50,
        "premium_requests": 3.0,
        "model_metrics": {
            "gpt-5": {"input_tokens": 5000, "output_tokens": 300, "cache_read_tokens": 4000, "cache_write_tokens": 50,
                      "request_count": 3, "request_cost": 3.0},
            "gpt-5-mini": {"input_tokens": 800, "output_tokens": 90, "cache_read_tokens": 0, "cache_write_tokens": 0,
                           "request_count": 2, "request_cost": 0.0}}}


def test_usage_from_session_shutdown_when_no_metrics():
    ev = evidence_of("ask_user_shutdown")
    assert ev.usage["premium_requests"] == 0.33 and ev.usage["input_tokens"] == 400
    assert ev.usage["model_metrics"]["claude-haiku-4.5"]["request_count"] == 1


def test_unfinished_tool_call_and_no_session():
    events = flat(load_stream("skill_and_tools"))[:19]  # cut before the bash call completes
    ev = evidence_from_session(events, session_id="s", error="timed out after 5s", user_input_requests=[],
                               usage_metrics=None, duration_ms=1)
    assert ev.tool_events[-1]["tool_name"] == "bash" and ev.tool_events[-1]["success"] is False
    assert "no completion event" in ev.tool_events[-1]["error"]
    assert ev.error == "timed out after 5s"
    none = evidence_from_session([], session_id=None, error="cannot create", user_input_requests=[],
                                 usage_metrics=None, duration_ms=1, observed=False)
    assert none.tool_events is None and none.skill_invocations is None and none.host_lifecycle is None
    assert none.user_input_requests is None and none.usage is None and none.tool_calls == []


# -- the recorded streams are what the real SDK produces -------------------------------------------------


@needs_sdk
@pytest.mark.parametrize("path", sorted(STREAMS.glob("*.json")), ids=lambda p: p.stem)
def test_recorded_streams_parse_with_the_sdk_and_map_the_same_after_its_round_trip(path):
    from copilot.session_events import SessionEvent, SessionEventType

    stream = json.loads(path.read_text())
    events = flat(stream)
    parsed = [SessionEvent.from_dict(e) for e in events]
    assert all(p.type is not SessionEventType.UNKNOWN for p in parsed)
    if stream["usage_metrics"]:
        from copilot.generated.session_events import UsageGetMetricsResult

        UsageGetMetricsResult.from_dict(stream["usage_metrics"])
    # what SdkBackend forwards is the SDK's own serialization: the mapping must not notice
    sdk_dicts = [p.to_dict() for p in parsed]
    args = {"session_id": "s", "error": None, "user_input_requests": [], "usage_metrics": stream["usage_metrics"],
            "duration_ms": 1}
    a, b = evidence_from_session(events, **args), evidence_from_session(sdk_dicts, **args)
    assert (a.output, a.tool_calls, a.skill_invocations, a.usage, a.error) == \
           (b.output, b.tool_calls, b.skill_invocations, b.usage, b.error)
    assert [{k: v for k, v in t.items() if k != "duration_ms"} for t in a.tool_events] == \
           [{k: v for k, v in t.items() if k != "duration_ms"} for t in b.tool_events]


# -- the executor through a fake backend --------------------------------------------------------------------


@pytest.fixture
def copilot_suite(exec_suite):
    def make(copilot_cfg: dict | None = None, tasks=None, **config):
        cfg = {"executor": "copilot-sdk", "model": "claude-sonnet-4.5", **config}
        if copilot_cfg is not None:
            cfg["copilot"] = copilot_cfg
        return exec_suite(cfg, tasks=tasks)

    return make


def req(suite, ws: Path, timeout: int = 30, model: str = "claude-sonnet-4.5", skills=("skills",)):
    ws.mkdir(parents=True, exist_ok=True)
    task = suite.tasks[0]
    return ExecutionRequest(task=task, prompt=task.prompt, workspace_dir=str(ws), timeout_seconds=timeout,
                            model=model, skill_directories=tuple(skills))


def running(suite, backend, options=None) -> CopilotSdkExecutor:
    ex = CopilotSdkExecutor(suite, options if options is not None else suite.config.extra.get("copilot", {}),
                            backend=backend)
    ex.start()
    return ex


def test_one_run_one_session_with_workspace_model_and_skills(copilot_suite, tmp_path):
    suite = copilot_suite({"reasoning_effort": "high", "excluded_tools": ["web_fetch"]},
                          disabled_skills=["legacy"])
    backend = FakeBackend(load_stream("skill_and_tools"))
    ex = running(suite, backend)
    try:
        ev = ex.execute(req(suite, tmp_path / "ws", skills=(str(tmp_path / "skills"),)))
    finally:
        ex.shutdown()
    assert ev.error is None and ev.session_id == "sess-skill-1"
    assert ev.output.endswith("running it prints hello.")
    assert backend.options == [{"working_directory": str(tmp_path / "ws"), "model": "claude-sonnet-4.5",
                                "skill_directories": [str(tmp_path / "skills")], "disabled_skills": ["legacy"],
                                "excluded_tools": ["web_fetch"], "reasoning_effort": "high"}]
    assert backend.names() == ["start", "create_session", "send", "usage_metrics", "disconnect",
                               "delete_session", "stop"]


def test_follow_up_prompts_are_turns_of_the_same_session(copilot_suite, tmp_path):
    tasks = [{"id": "t1", "name": "fix", "inputs": {"prompt": "Fix the failing test.",
                                                     "follow_up_prompts": ["Now run the tests."]}}]
    suite = copilot_suite({}, tasks=tasks)
    backend = FakeBackend(load_stream("followup_metrics"))
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert [c for c in backend.calls if c[0] == "send"] == [
        ("send", "sess-followup-1", "Fix the failing test."), ("send", "sess-followup-1", "Now run the tests.")]
    assert ev.error is None and ev.usage["premium_requests"] == 3.0 and ev.usage["turns"] == 2


def test_session_error_makes_the_run_error_and_still_closes_the_session(copilot_suite, tmp_path):
    suite = copilot_suite({}, tasks=[{"id": "t1", "name": "x", "inputs": {"prompt": "a", "follow_up_prompts": ["b"]}}])
    backend = FakeBackend(load_stream("session_error"))
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert ev.error == "session error: Model 'gpt-9' is not available."
    sid = ev.session_id
    assert backend.names(sid) == ["send", "usage_metrics", "disconnect", "delete_session"]  # no follow-up, no abort


def test_timeout_aborts_the_turn_and_disconnects(copilot_suite, tmp_path):
    suite = copilot_suite({})
    stream = load_stream("skill_and_tools")
    stream["turns"] = [stream["turns"][0][:5] + ["HANG"]]
    backend = FakeBackend(stream)
    ex = running(suite, backend)
    start = time.monotonic()
    ev = ex.execute(req(suite, tmp_path / "ws", timeout=1))
    assert time.monotonic() - start < 5
    ex.shutdown()
    assert ev.error == "timed out after 1s"
    assert backend.names(ev.session_id) == ["send", "abort", "usage_metrics", "disconnect", "delete_session"]
    assert ev.transcript[-1]["type"] == "assistant.message"  # what came before the hang is kept
    assert ev.tool_events == []  # report_intent only


def test_shutdown_cancels_runs_in_flight(copilot_suite, tmp_path):
    suite = copilot_suite({})
    backend = FakeBackend({"turns": [["HANG"]], "usage_metrics": None, "session_id": "hang"})
    ex = running(suite, backend)
    results = []
    workers = [threading.Thread(target=lambda i=i: results.append(ex.execute(req(suite, tmp_path / f"ws{i}",
                                                                                 timeout=300))))
               for i in range(3)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 5
    while len([c for c in backend.calls if c[0] == "send"]) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    start = time.monotonic()
    ex.shutdown()  # what the runner does after Ctrl-C
    for w in workers:
        w.join(5)
    assert time.monotonic() - start < 5
    assert len(results) == 3 and all("cancelled" in r.error for r in results)
    for r in results:
        assert backend.names(r.session_id) == ["send", "abort", "disconnect", "delete_session"]
    assert backend.names()[-1] == "stop"
    after = ex.execute(req(suite, tmp_path / "late"))
    assert "not running" in after.error


def test_concurrent_runs_get_their_own_sessions(copilot_suite, tmp_path):
    suite = copilot_suite({})
    backend = FakeBackend(load_stream("skill_and_tools"), event_delay=0.005)
    ex = running(suite, backend)
    results = {}
    workers = [threading.Thread(target=lambda i=i: results.__setitem__(i, ex.execute(req(suite, tmp_path / f"w{i}"))))
               for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    ex.shutdown()
    assert len({r.session_id for r in results.values()}) == 4
    assert all(r.error is None and len(r.tool_calls) == 3 for r in results.values())


def test_user_input_is_refused_by_default_and_recorded(copilot_suite, tmp_path):
    suite = copilot_suite({})
    backend = FakeBackend(load_stream("ask_user_shutdown"))
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert isinstance(backend.user_input_replies[0], RuntimeError)
    assert ev.user_input_requests == [{"sequence": 1, "session_id": ev.session_id, "question": "Which package manager?",
                                       "choices": ["pip", "uv"], "source": "ask_user",
                                       "error": "no user is available during an evaluation run"}]


def test_user_input_answer_from_config(copilot_suite, tmp_path):
    suite = copilot_suite({"user_input": {"answer": "uv"}})
    backend = FakeBackend(load_stream("ask_user_shutdown"))
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert backend.user_input_replies == [{"answer": "uv", "was_freeform": False}]
    assert ev.user_input_requests[0]["answer"] == "uv" and ev.user_input_requests[0]["was_freeform"] is False


def test_session_creation_failure(copilot_suite, tmp_path):
    suite = copilot_suite({})
    backend = FakeBackend(create_error=RuntimeError("Unknown model: nope"))
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert ev.error == "cannot create a Copilot session: Unknown model: nope"
    assert ev.session_id is None and ev.tool_events is None and ev.user_input_requests is None


def test_keep_sessions(copilot_suite, tmp_path):
    suite = copilot_suite({"keep_sessions": True})
    backend = FakeBackend(load_stream("skill_and_tools"))
    ex = running(suite, backend)
    ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert "delete_session" not in backend.names()


def test_mcp_servers_and_all_skills_disabled(copilot_suite, tmp_path):
    suite = copilot_suite({}, disabled_skills=["*"],
                          mcp_servers={"files": {"type": "local", "command": "mcp-files", "args": [], "tools": ["*"]}})
    backend = FakeBackend(load_stream("skill_and_tools"))
    ex = running(suite, backend)
    ex.execute(req(suite, tmp_path / "ws", skills=()))
    ex.shutdown()
    opts = backend.options[0]
    assert opts["enable_skills"] is False and "skill_directories" not in opts
    assert opts["mcp_servers"] == {"files": {"type": "local", "command": "mcp-files", "args": [], "tools": ["*"]}}


# -- start-up errors are one clear message, not one per task -------------------------------------------------


def test_not_logged_in_is_a_clear_start_error(copilot_suite):
    suite = copilot_suite({})
    backend = FakeBackend(authenticated=False)
    ex = CopilotSdkExecutor(suite, {}, backend=backend)
    with pytest.raises(WazaError) as info:
        ex.start()
    assert "not logged in" in str(info.value) and LOGIN_HINT in str(info.value)
    assert backend.names()[-1] == "stop"  # the CLI it started is stopped again


def test_unknown_model_is_a_start_error_with_a_suggestion(copilot_suite):
    suite = copilot_suite({}, model="claude-sonet-4.5")
    ex = CopilotSdkExecutor(suite, {}, backend=FakeBackend(models=["claude-sonnet-4.5", "gpt-5"]))
    ex.model = "claude-sonet-4.5"  # what the runner will use (config.model or --model)
    with pytest.raises(WazaError, match=r"model 'claude-sonet-4.5' is not available.*did you mean 'claude-sonnet-4.5'"):
        ex.start()


def test_model_from_the_command_line_is_checked_per_run(copilot_suite, tmp_path):
    suite = copilot_suite({})
    backend = FakeBackend(load_stream("skill_and_tools"), models=["claude-sonnet-4.5"])
    ex = running(suite, backend)
    ev = ex.execute(req(suite, tmp_path / "ws", model="gpt-4o"))
    ex.shutdown()
    assert "model 'gpt-4o' is not available" in ev.error and "create_session" not in backend.names()


def test_start_failure_from_the_backend_passes_through(copilot_suite):
    suite = copilot_suite({})
    ex = CopilotSdkExecutor(suite, {}, backend=FakeBackend(start_error=WazaError("Copilot CLI not found: /x")))
    with pytest.raises(WazaError, match="Copilot CLI not found"):
        ex.start()
    other = CopilotSdkExecutor(suite, {}, backend=FakeBackend(start_error=ConnectionResetError("pipe closed")))
    with pytest.raises(WazaError, match="cannot talk to the Copilot CLI: pipe closed"):
        other.start()


def test_config_schema_rejects_mistakes_at_load(copilot_suite):
    with pytest.raises(SuiteError, match="unknown key 'cli_pth'"):
        copilot_suite({"cli_pth": "/x"})
    with pytest.raises(SuiteError):
        copilot_suite({"reasoning_effort": "extreme"})


def test_paid_and_registered(exec_registry):
    assert CopilotSdkExecutor.paid is True
    assert exec_registry.get("executor", "copilot-sdk") is CopilotSdkExecutor


# -- against the real SDK's types (no account, no network) ---------------------------------------------------


def _accepts(annotation: str, value) -> bool:
    """A small check of a value against the SDK's (string) annotation of a parameter."""
    from copilot import session as sdk_session

    ann = annotation.replace(" ", "")
    if ann.startswith("ReasoningEffort"):
        return value in typing.get_args(sdk_session.ReasoningEffort)
    if ann.startswith("list[str]"):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if ann.startswith("dict[str,"):
        return isinstance(value, dict)
    if ann.startswith("str"):
        return isinstance(value, str)
    if ann.startswith("bool"):
        return isinstance(value, bool)
    return False


@needs_sdk
def test_session_options_match_the_sdk_create_session_signature(copilot_suite, tmp_path):
    from copilot import CopilotClient

    suite = copilot_suite({"reasoning_effort": "xhigh", "available_tools": ["bash"], "excluded_tools": ["web"]},
                          disabled_skills=["a"], mcp_servers={"m": {"type": "http", "url": "http://localhost:1"}})
    ex = CopilotSdkExecutor(suite, suite.config.extra["copilot"], backend=FakeBackend())
    opts = ex.session_options(req(suite, tmp_path / "ws", skills=("/s1", "/s2")))
    params = inspect.signature(CopilotClient.create_session).parameters
    assert set(opts) == {"working_directory", "model", "skill_directories", "disabled_skills", "mcp_servers",
                         "available_tools", "excluded_tools", "reasoning_effort"}
    for key, value in opts.items():
        assert key in params and params[key].kind is inspect.Parameter.KEYWORD_ONLY, key
        assert _accepts(str(params[key].annotation), value), (key, params[key].annotation, value)
    suite = copilot_suite({}, disabled_skills=["*"])
    opts = CopilotSdkExecutor(suite, {}, backend=FakeBackend()).session_options(req(suite, tmp_path / "w2"))
    assert _accepts(str(params["enable_skills"].annotation), opts["enable_skills"])


@pytest.fixture
def autospec_client(monkeypatch):
    """SdkBackend over ``create_autospec(CopilotClient)``: a wrong argument name is a TypeError."""
    from unittest import mock

    from copilot import CopilotClient, CopilotSession, GetAuthStatusResponse, ModelInfo
    from copilot.generated.session_events import UsageGetMetricsResult

    client = mock.create_autospec(CopilotClient, instance=True)
    client.get_auth_status.return_value = GetAuthStatusResponse(isAuthenticated=True, login="octocat")
    model = mock.create_autospec(ModelInfo, instance=True)
    model.id = "claude-sonnet-4.5"
    client.list_models.return_value = [model]
    session = mock.create_autospec(CopilotSession, instance=True)
    session.session_id = "real-shaped-1"
    metrics = UsageGetMetricsResult.from_dict(load_stream("followup_metrics")["usage_metrics"])
    session.rpc.usage.get_metrics = mock.AsyncMock(return_value=metrics)
    captured = {}

    async def create_session(**kwargs):
        captured.update(kwargs)
        from copilot.session_events import SessionEvent

        for event in flat(load_stream("skill_and_tools")):
            kwargs["on_event"](SessionEvent.from_dict(event))  # the SDK hands over its typed events
        return session

    client.create_session.side_effect = create_session
    made = {}

    def make_client(self, copilot_mod, cli_path, token):
        made.update(cli_path=cli_path, token=token)
        CopilotClient.__init__  # noqa: B018 - the real constructor is checked separately
        return client

    monkeypatch.setattr(SdkBackend, "_make_client", make_client)
    monkeypatch.setenv("COPILOT_CLI_PATH", sys.executable)  # an executable file, never spawned here
    return client, session, captured, made


@needs_sdk
def test_sdk_backend_calls_the_real_sdk_api(copilot_suite, tmp_path, autospec_client):
    client, session, captured, made = autospec_client
    suite = copilot_suite({})
    ex = CopilotSdkExecutor(suite, {})
    ex.start()
    ev = ex.execute(req(suite, tmp_path / "ws"))
    ex.shutdown()
    assert made == {"cli_path": sys.executable, "token": None}
    client.start.assert_awaited_once()
    # every keyword the backend passes exists in the real create_session signature (autospec enforces it)
    assert {"working_directory", "model", "skill_directories", "client_name", "on_permission_request", "on_event",
            "on_user_input_request"} <= set(captured)
    session.send_and_wait.assert_awaited_once()
    session.disconnect.assert_awaited_once()
    client.delete_session.assert_awaited_once_with("real-shaped-1")
    client.stop.assert_awaited_once()
    assert ev.error is None and ev.session_id == "real-shaped-1"
    assert [c["name"] for c in ev.tool_calls] == ["skill", "create", "bash"]
    assert ev.usage["premium_requests"] == 3.0  # from session.rpc.usage.get_metrics


@needs_sdk
def test_sdk_user_input_handler_speaks_the_sdk_shape(copilot_suite, tmp_path, autospec_client):
    client, session, captured, made = autospec_client
    suite = copilot_suite({"user_input": {"answer": "other"}})
    ex = CopilotSdkExecutor(suite, suite.config.extra["copilot"])
    ex.start()
    ex.execute(req(suite, tmp_path / "ws"))
    handler = captured["on_user_input_request"]
    from copilot import UserInputRequest

    reply = ex._call(handler(UserInputRequest(question="Which?", choices=["a", "b"], allowFreeform=True),
                             {"session_id": "real-shaped-1"}))
    ex.shutdown()
    assert reply == {"answer": "other", "wasFreeform": True}  # the SDK's UserInputResponse keys
    assert set(reply) == set(typing.get_type_hints(__import__("copilot").UserInputResponse))


@needs_sdk
def test_real_client_constructor_accepts_our_arguments(tmp_path):
    import copilot

    backend = SdkBackend({"log_level": "error"})
    client = backend._make_client(copilot, sys.executable, "ghp_example")
    assert isinstance(client, copilot.CopilotClient)


def _fake_cli(tmp_path: Path, body: str) -> str:
    path = tmp_path / "copilot"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@needs_sdk
@pytest.mark.skipif(os.name != "posix", reason="uses a shell script as the fake CLI")
# SDK 1.0.27 leaves the pipes of a CLI that failed its handshake to the garbage collector
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning", "ignore::ResourceWarning")
def test_real_sdk_reports_a_cli_that_cannot_start(copilot_suite, tmp_path, capfd):
    import gc

    def attempt() -> str:
        cli = _fake_cli(tmp_path, "echo 'Error: No authentication information found.' >&2\nexit 1\n")
        suite = copilot_suite({"cli_path": cli, "startup_timeout_seconds": 20})
        ex = CopilotSdkExecutor(suite, suite.config.extra["copilot"])
        try:
            ex.start()
        except WazaError as exc:
            return str(exc)
        return "started?"

    message = attempt()
    gc.collect()  # let the leaked pipes' warnings land here, where they are expected
    assert "cannot start the Copilot CLI" in message
    assert "No authentication information found" in message
    assert "Traceback" not in capfd.readouterr().err  # the SDK's own logging is muted


@needs_sdk
def test_missing_cli_path_is_a_clear_error(copilot_suite, tmp_path):
    suite = copilot_suite({"cli_path": str(tmp_path / "no-copilot")})
    with pytest.raises(WazaError, match="Copilot CLI not found or not executable: .*no-copilot .*cli_path"):
        CopilotSdkExecutor(suite, suite.config.extra["copilot"]).start()


@needs_sdk
def test_missing_token_variable(copilot_suite, monkeypatch):
    monkeypatch.delenv("WAZA_TEST_TOKEN", raising=False)
    monkeypatch.setenv("COPILOT_CLI_PATH", sys.executable)
    suite = copilot_suite({"github_token_env": "WAZA_TEST_TOKEN"})
    with pytest.raises(WazaError, match="WAZA_TEST_TOKEN, which is not set"):
        CopilotSdkExecutor(suite, suite.config.extra["copilot"]).start()


def test_missing_sdk_says_how_to_install(copilot_suite, monkeypatch):
    monkeypatch.setitem(sys.modules, "copilot", None)  # import copilot -> ImportError
    suite = copilot_suite({})
    with pytest.raises(WazaError, match=r"pip install 'waza\[copilot\]'"):
        CopilotSdkExecutor(suite, {}).start()


@needs_sdk
def test_waza_run_without_login_exits_2_with_one_message(copilot_suite, tmp_path):
    import subprocess

    cli = _fake_cli(tmp_path, "echo 'Error: No authentication information found.' >&2\nexit 1\n")
    suite = copilot_suite({"cli_path": cli, "startup_timeout_seconds": 20})
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", str(suite.file)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert proc.returncode == 2, proc.stderr
    assert "cannot start the Copilot CLI" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("waza: error") == 1


# -- through the runner: the evidence lands in a valid results file ------------------------------------------


def test_runner_records_the_session_evidence(copilot_suite):
    from waza_core.plugins import build_plugin_manager
    from waza_core.results.codec import results_to_json
    from waza_core.run.engine import Engine
    from waza_core.suite import schema

    registry = build_plugin_manager()[1]
    tasks = [{"id": "hello", "name": "hello script", "inputs": {"prompt": "Create hello.py"},
              "graders": [{"type": "text", "name": "mentions_hello", "config": {"contains": ["hello.py"]}}]}]
    suite = copilot_suite({}, tasks=tasks)
    engine = Engine(suite, registry)
    backend = FakeBackend(load_stream("skill_and_tools"))
    engine.executor = CopilotSdkExecutor(suite, {}, backend=backend)
    outcome = results_to_json(engine.run())
    run = outcome["tasks"][0]["runs"][0]
    assert run["status"] == "passed", run
    assert run["session_digest"]["tools_used"] == ["skill", "create", "bash"]
    assert run["skill_invocations"] == [{"name": "python-scripts", "path": "/skills/python-scripts/SKILL.md"}]
    assert run["user_input_requests"] == [] and run["command_invocations"] is None
    assert run["usage"]["premium_requests"] == 3 and run["session_id"] == "sess-skill-1"
    assert backend.names()[-1] == "stop"
    errors = sorted(schema.plain_validator("results").iter_errors(json.loads(json.dumps(outcome))), key=str)
    assert not errors, [e.message for e in errors[:5]]


def test_a_signal_delivered_to_another_thread_stops_a_run_waited_for_in_the_main_thread(copilot_suite, tmp_path):
    """In a sequential run the main thread waits for the SDK's loop; Python runs a signal's
    handler only in the main thread, and only when it wakes. The wait is in slices of
    WAIT_SLICE_SECONDS (waza_core.signals.MAIN_WAIT_SECONDS), so a SIGINT that lands in the
    loop's thread still stops the run at once (before, it waited for the run's time limit)."""
    import signal

    from waza_adapters.copilot_sdk import WAIT_SLICE_SECONDS
    from waza_core.signals import MAIN_WAIT_SECONDS

    assert WAIT_SLICE_SECONDS == MAIN_WAIT_SECONDS  # one rule for every wait of the main thread
    suite = copilot_suite({})
    backend = FakeBackend({"turns": [["HANG"]], "usage_metrics": None, "session_id": "hang"})
    ex = running(suite, backend)
    loop_thread = ex._thread

    def interrupt_from_the_loop_thread() -> None:
        deadline = time.monotonic() + 5
        while not [c for c in backend.calls if c[0] == "send"] and time.monotonic() < deadline:
            time.sleep(0.02)
        signal.pthread_kill(loop_thread.ident, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_from_the_loop_thread, daemon=True).start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            ex.execute(req(suite, tmp_path / "ws", timeout=60))
        assert time.monotonic() - start < 5
    finally:
        signal.signal(signal.SIGINT, previous)
        ex.shutdown()
