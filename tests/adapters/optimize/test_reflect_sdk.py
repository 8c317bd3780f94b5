"""copilot-reflect against the real ``github-copilot-sdk`` types, without an account:
session options checked name by name and type by type against ``create_session``, the
wire payload the SDK really builds from them, the backend over an autospec client,
the event and usage shapes, and a Copilot CLI that cannot start."""

from __future__ import annotations

import asyncio
import collections.abc
import importlib.util
import inspect
import os
import sys
import threading
import types
import typing
from unittest import mock

import pytest

from waza_adapters.copilot_reflect import CopilotReflectAdapter, deny_all, sdk_backend, session_options, spend_from
from waza_core.optimize import contract
from waza_core.optimize.adapter import AdapterFailure, AdapterOptions

pytestmark = pytest.mark.skipif(importlib.util.find_spec("copilot") is None,
                                reason="github-copilot-sdk is not installed")


def conforms(value, tp) -> bool:
    """``value`` is an instance of the annotation ``tp`` (the subset the SDK's options use).

    TypedDicts are checked key by key: an unknown key, a missing required key or a
    wrong value type fails, so a misspelled nested option is caught too.
    """
    origin = typing.get_origin(tp)
    if tp is typing.Any:
        return True
    if tp is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arg) for arg in typing.get_args(tp))
    if origin is typing.Literal:
        return value in typing.get_args(tp)
    if origin in (typing.Required, typing.NotRequired):
        return conforms(value, typing.get_args(tp)[0])
    if origin is list:
        (item,) = typing.get_args(tp)
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if origin is dict:
        key, val = typing.get_args(tp)
        return isinstance(value, dict) and all(conforms(k, key) and conforms(v, val) for k, v in value.items())
    if typing.is_typeddict(tp):
        if not isinstance(value, dict):
            return False
        # with postponed annotations __required_keys__ cannot see NotRequired: read the hints
        hints = typing.get_type_hints(tp, include_extras=True)
        required = {k for k, h in hints.items() if typing.get_origin(h) is typing.Required
                    or (tp.__total__ and typing.get_origin(h) is not typing.NotRequired)}
        if set(value) - set(hints) or required - set(value):
            return False
        return all(conforms(v, hints[k]) for k, v in value.items())
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(tp, type):
        return isinstance(value, tp) and not (tp is int and isinstance(value, bool))
    if origin is collections.abc.Callable:
        return callable(value)
    raise AssertionError(f"conforms() does not know {tp!r}")


def test_conforms_catches_wrong_names_and_types():
    from copilot.session import MemoryConfiguration, SystemMessageCustomizeConfig

    assert conforms({"enabled": False}, MemoryConfiguration)
    assert not conforms({"enable": False}, MemoryConfiguration)  # misspelled key
    assert not conforms({"enabled": "no"}, MemoryConfiguration)
    assert not conforms({"mode": "customize", "sections": {"environment": {"action": "remove"}}},
                        SystemMessageCustomizeConfig)  # unknown section
    assert not conforms({"mode": "customize", "sections": {"environment_context": {"action": "delete"}}},
                        SystemMessageCustomizeConfig)  # unknown action
    assert not conforms(["a", 1], list[str]) and not conforms(True, int | None)


def test_every_session_option_is_a_create_session_keyword_of_the_right_type():
    from copilot import CopilotClient

    params = inspect.signature(CopilotClient.create_session).parameters
    hints = typing.get_type_hints(CopilotClient.create_session)
    opts = session_options("claude-haiku-4.5", "/reflect-ws")
    for key, value in opts.items():
        assert key in params and params[key].kind is inspect.Parameter.KEYWORD_ONLY, key
        assert conforms(value, hints[key]), (key, hints[key], value)
    # the keywords the backend adds itself
    for key in ("client_name", "on_permission_request", "on_event"):
        assert key in params and key not in opts


def test_the_sdk_sends_the_isolation_to_the_runtime():
    """The payload the real SDK builds from our options (only its transport is faked)."""
    import copilot

    sent = []

    class Rpc:
        async def request(self, method, params=None, **kw):
            sent.append((method, params))
            return {"sessionId": params["sessionId"]} if method == "session.create" else {"success": True}

    async def create():
        client = copilot.CopilotClient(connection=copilot.RuntimeConnection.for_stdio(path=sys.executable),
                                       log_level="error")
        client._client = Rpc()  # no CLI process: capture what would go over the wire
        return await client.create_session(**session_options("claude-haiku-4.5", "/reflect-ws"),
                                           client_name="waza-copilot-reflect", on_permission_request=deny_all,
                                           on_event=lambda event: None)

    asyncio.run(create())
    (method, payload), (update, patch) = sent
    assert method == "session.create" and update == "session.options.update"
    assert payload["availableTools"] == [] and payload["excludedTools"] == ["builtin:*", "mcp:*", "custom:*"]
    assert payload["toolFilterPrecedence"] == "excluded" and payload["requestPermission"] is True
    assert payload["enableSkills"] is False and payload["skillDirectories"] == []
    assert payload["enableConfigDiscovery"] is False and payload["enableOnDemandInstructionDiscovery"] is False
    assert payload["skipEmbeddingRetrieval"] is True and payload["enableFileHooks"] is False
    assert payload["enableSessionStore"] is False and payload["memory"] == {"enabled": False}
    assert payload["infiniteSessions"] == {"enabled": False}
    assert payload["instructionDirectories"] == [] and payload["agentDirectories"] == []
    assert payload["systemMessage"]["sections"]["environment_context"] == {"action": "remove"}
    assert payload["model"] == "claude-haiku-4.5" and payload["workingDirectory"] == "/reflect-ws"
    assert "name" not in payload and "mcpServers" not in payload and "tools" not in payload
    assert patch["skipCustomInstructions"] is True and patch["includedBuiltinSkills"] == []
    assert patch["customAgentsLocalOnly"] is True


def test_permission_handler_rejects_with_an_sdk_decision():
    from copilot.generated.rpc import PermissionDecisionReject
    from copilot.session import PermissionRequestResult

    decision = deny_all(mock.Mock(), {"session_id": "s"})
    assert isinstance(decision, PermissionDecisionReject) and decision.to_dict()["kind"] == "reject"
    assert isinstance(decision, typing.get_args(PermissionRequestResult))


def test_backend_over_an_autospec_client(monkeypatch):
    """A keyword the real ``create_session`` does not take would be a TypeError here."""
    from copilot import CopilotClient, CopilotSession, GetAuthStatusResponse
    from copilot.generated.session_events import UsageGetMetricsResult
    from copilot.session_events import SessionEvent

    client = mock.create_autospec(CopilotClient, instance=True)
    client.get_auth_status.return_value = GetAuthStatusResponse(isAuthenticated=True, login="octocat")
    client.list_models.return_value = []
    session = mock.create_autospec(CopilotSession, instance=True)
    session.session_id = "sdk-shaped"
    metrics = {"codeChanges": {"filesModified": [], "filesModifiedCount": 0, "linesAdded": 0, "linesRemoved": 0},
               "lastCallInputTokens": 10, "lastCallOutputTokens": 2,
               "modelMetrics": {"claude-haiku-4.5": {"requests": {"count": 1, "cost": 0.33},
                                                     "usage": {"inputTokens": 10, "outputTokens": 2,
                                                               "cacheReadTokens": 0, "cacheWriteTokens": 0}}},
               "sessionStartTime": "2026-05-01T10:00:00+00:00", "totalApiDurationMs": 900,
               "totalPremiumRequestCost": 0.33, "totalUserRequests": 1}
    session.rpc.usage.get_metrics = mock.AsyncMock(return_value=UsageGetMetricsResult.from_dict(metrics))
    captured = {}

    async def create_session(**kwargs):
        captured.update(kwargs)
        for event in ({"type": "assistant.message", "data": {"content": "<<<WAZA-DONE>>>", "messageId": "m"}},
                      {"type": "assistant.usage", "data": {"model": "claude-haiku-4.5", "inputTokens": 10,
                                                           "outputTokens": 2, "cost": 0.33}}):
            event.update(id="00000000-0000-4000-8000-000000000001", timestamp="2026-05-01T10:00:01Z")
            kwargs["on_event"](SessionEvent.from_dict(event))  # the SDK hands over typed events
        return session

    client.create_session.side_effect = create_session
    monkeypatch.setattr("waza_adapters.copilot_sdk.SdkBackend._make_client", lambda self, mod, path, token: client)
    monkeypatch.setenv("COPILOT_CLI_PATH", sys.executable)  # an executable file, never spawned here
    a = CopilotReflectAdapter(AdapterOptions.of({"model": "claude-haiku-4.5"}, eval_model="mock"))
    assert a.check_options() == []
    cancel = threading.Event()
    a.call(contract.describe_request("context-overlay"), timeout=30, cancel=cancel)
    from .conftest import propose_request

    reply = a.call(propose_request(), timeout=30, cancel=cancel)
    a.close()
    assert contract.parse_reply(reply.raw, "propose", ("1.0",))["status"] == "done"
    assert reply.usage == {"status": "measured", "premium_requests": 0.33, "input_tokens": 10, "output_tokens": 2,
                           "cache_read_tokens": 0, "cache_write_tokens": 0}
    assert captured["on_permission_request"] is deny_all and captured["available_tools"] == []
    assert "on_user_input_request" not in captured  # no ask_user handler: nobody would answer
    session.send_and_wait.assert_awaited_once()
    session.disconnect.assert_awaited_once()
    client.delete_session.assert_awaited_once_with("sdk-shaped")
    client.stop.assert_awaited_once()


def test_event_and_usage_shapes_survive_the_sdk_round_trip():
    from copilot.generated.session_events import UsageGetMetricsResult
    from copilot.session_events import SessionEvent, SessionEventType

    from .fake_reflect import usage_event

    for kind, data in (("assistant.usage", usage_event(cost=0.5)),
                       ("assistant.message", {"content": "x", "messageId": "m"})):
        event = SessionEvent.from_dict({"id": "00000000-0000-4000-8000-000000000002",
                                        "timestamp": "2026-05-01T10:00:01Z", "type": kind, "data": data})
        assert event.type is not SessionEventType.UNKNOWN
        assert {k: v for k, v in event.to_dict()["data"].items() if k in data} == data
    from .test_reflect_grammar import METRICS

    full = {"codeChanges": {"filesModified": [], "filesModifiedCount": 0, "linesAdded": 0, "linesRemoved": 0},
            "lastCallInputTokens": 0, "lastCallOutputTokens": 0, "sessionStartTime": "2026-05-01T10:00:00+00:00",
            "totalApiDurationMs": 1, "totalUserRequests": 1, **METRICS}
    assert spend_from(UsageGetMetricsResult.from_dict(full).to_dict(), []) == spend_from(METRICS, [])


@pytest.mark.skipif(os.name != "posix", reason="uses a shell script as the fake CLI")
def test_a_cli_that_cannot_start_is_a_clear_failure(tmp_path, monkeypatch, capfd):
    cli = tmp_path / "copilot"
    cli.write_text("#!/bin/sh\necho 'Error: No authentication information found.' >&2\nexit 1\n")
    cli.chmod(0o755)
    monkeypatch.setenv("COPILOT_CLI_PATH", str(cli))
    a = CopilotReflectAdapter(AdapterOptions.of({"model": "claude-haiku-4.5"}, eval_model="mock"))
    assert type(a).backend_factory is sdk_backend
    with pytest.raises(AdapterFailure) as info:
        a.call(contract.describe_request("context-overlay"), timeout=60, cancel=threading.Event())
    a.close()
    assert info.value.category == "optimizer_failure"
    assert "copilot-reflect: cannot start the Copilot CLI" in str(info.value)
    assert "No authentication information found" in str(info.value)
    assert "Traceback" not in capfd.readouterr().err


def test_missing_cli_path_is_a_clear_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "no-copilot"))
    a = CopilotReflectAdapter(AdapterOptions.of({"model": "claude-haiku-4.5"}, eval_model="mock"))
    with pytest.raises(AdapterFailure, match="Copilot CLI not found or not executable: .*no-copilot"):
        a.call(contract.describe_request("context-overlay"), timeout=60, cancel=threading.Event())
    a.close()


def test_runtime_that_cannot_be_fetched_names_only_what_applies(monkeypatch):
    def offline(self, mod, path, token):
        raise RuntimeError("Failed to download checksums: Name or service not known")

    monkeypatch.setattr("waza_adapters.copilot_sdk.SdkBackend._make_client", offline)
    monkeypatch.delenv("COPILOT_CLI_PATH", raising=False)
    a = CopilotReflectAdapter(AdapterOptions.of({"model": "claude-haiku-4.5"}, eval_model="mock"))
    with pytest.raises(AdapterFailure) as info:
        a.call(contract.describe_request("context-overlay"), timeout=60, cancel=threading.Event())
    a.close()
    message = str(info.value)
    assert "cannot get the Copilot runtime: Failed to download checksums" in message
    assert "set COPILOT_CLI_PATH" in message and "config.copilot" not in message  # no suite config here
