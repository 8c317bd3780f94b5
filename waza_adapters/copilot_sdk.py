"""``executor: copilot-sdk``: each run is one GitHub Copilot session, driven through
the official Python SDK (``github-copilot-sdk``, the ``waza[copilot]`` extra).

One client (one Copilot CLI process) serves the whole suite run; each run gets its
own session, with the run's workspace as working directory, the skill directories,
the model and the follow-up prompts as further turns in the same session. The
session's events become the run evidence (:func:`evidence_from_session`).

The SDK is asynchronous and executors are called from worker threads, so the
executor owns a private event loop in one daemon thread and submits each run to it.
The SDK sits behind a narrow seam (:class:`CopilotBackend`): tests replace it with a
fake that replays recorded event streams; :class:`SdkBackend` is the real one and
the only code that imports ``copilot``. asyncio and the SDK are imported where used,
to keep plugin loading light.
"""

from __future__ import annotations

import datetime
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from waza_core import ExecutionRequest, Executor, RunEvidence, WazaError, hookimpl

#: the longest the main thread waits at once (waza's rule for the main thread: a signal delivered
#: to another thread is handled only when it wakes); built-in plugins use the public API only
WAIT_SLICE_SECONDS = 0.25

if TYPE_CHECKING:
    import asyncio
    import datetime

INSTALL_HINT = "install it with: pip install 'waza[copilot]' (or pip install github-copilot-sdk)"
LOGIN_HINT = ("run `copilot login` (any installed Copilot CLI shares the login), or put a token in "
              "COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN, or name one with config.copilot.github_token_env")
#: tools whose calls only announce what the agent is about to do (dropped, as waza Go does)
INTENT_TOOLS = frozenset({"report_intent"})
SHELL_TOOLS = frozenset({"bash", "shell", "powershell", "pwsh", "sh", "zsh", "cmd"})
#: event types left out of the transcript: streaming fragments repeat the full messages
DELTA_TYPES = frozenset({"assistant.message_delta", "assistant.reasoning_delta", "assistant.streaming_delta",
                         "assistant.tool_call_delta"})

# bounded waits for the cleanup steps, so a stuck CLI cannot hang waza on exit
ABORT_SECONDS = 5.0
DISCONNECT_SECONDS = 10.0
METRICS_SECONDS = 10.0
STOP_SECONDS = 15.0
DRAIN_SECONDS = 20.0

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "cli_path": {"type": "string", "minLength": 1,
                     "description": "Copilot CLI/runtime to run (default: COPILOT_CLI_PATH, else the "
                                    "runtime the SDK manages)"},
        "github_token_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                             "description": "name of an environment variable holding a GitHub token"},
        "log_level": {"enum": ["none", "error", "warning", "info", "debug", "all"]},
        "startup_timeout_seconds": {"type": "integer", "minimum": 1},
        "reasoning_effort": {"enum": ["low", "medium", "high", "xhigh", "max"]},
        "available_tools": {"type": "array", "items": {"type": "string"}},
        "excluded_tools": {"type": "array", "items": {"type": "string"}},
        "mcp_servers": {"type": "object", "additionalProperties": {"type": "object"}},
        "user_input": {
            "type": "object", "additionalProperties": False,
            "properties": {"answer": {"type": "string",
                                      "description": "reply to every question the agent asks the user"}},
        },
        "keep_sessions": {"type": "boolean", "description": "keep session data on disk after the run"},
    },
}


# -- the seam ---------------------------------------------------------------------------------


class CopilotSessionHandle(Protocol):
    """One live session (what :class:`SdkBackend` wraps around ``CopilotSession``)."""

    session_id: str

    async def send_and_wait(self, prompt: str, timeout: float) -> None:
        """Send one turn and wait until the session is idle; raise on a session error."""

    async def abort(self) -> None: ...

    async def usage_metrics(self) -> dict | None:
        """The session's accumulated usage (``session.usage.getMetrics``, wire keys), or None."""

    async def disconnect(self) -> None: ...


class CopilotBackend(Protocol):
    """The narrow slice of the SDK the executor uses. Events are wire-format dicts."""

    async def start(self) -> None: ...

    async def auth_status(self) -> tuple[bool, str]:
        """(authenticated, who or why not)."""

    async def list_models(self) -> list[str] | None: ...

    async def create_session(self, options: dict[str, Any], on_event: Callable[[dict], None],
                             on_user_input: Callable[[dict], Awaitable[dict]]) -> CopilotSessionHandle: ...

    async def delete_session(self, session_id: str) -> None: ...

    async def stop(self) -> None: ...


class SdkBackend:
    """The real backend: ``copilot.CopilotClient`` and ``CopilotSession``."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.client = None

    def _make_client(self, copilot, cli_path: str | None, token: str | None):
        kwargs: dict[str, Any] = {"log_level": self.config.get("log_level", "error")}
        if cli_path:
            kwargs["connection"] = copilot.RuntimeConnection.for_stdio(path=cli_path)
        if token:
            kwargs["github_token"] = token
        return copilot.CopilotClient(**kwargs)

    async def start(self) -> None:
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio
        import logging

        try:
            # deferred: copilot is optional; a missing one is handled here
            import copilot
        except ImportError as exc:
            raise WazaError(f"executor 'copilot-sdk' needs the GitHub Copilot SDK ({exc}); {INSTALL_HINT}") from None
        # The SDK logs start failures with tracebacks; waza reports them as one clear line instead.
        sdk_log = logging.getLogger("copilot")
        sdk_log.addHandler(logging.NullHandler())
        sdk_log.propagate = False
        cli_path = self.config.get("cli_path") or os.environ.get("COPILOT_CLI_PATH") or None
        where = "config.copilot.cli_path" if self.config.get("cli_path") else "COPILOT_CLI_PATH"
        if cli_path and not (os.path.isfile(cli_path) and os.access(cli_path, os.X_OK)):
            raise WazaError(f"Copilot CLI not found or not executable: {cli_path} (from {where})")
        token = None
        if self.config.get("github_token_env"):
            name = self.config["github_token_env"]
            token = os.environ.get(name)
            if not token:
                raise WazaError(f"config.copilot.github_token_env names {name}, which is not set")
        try:
            # Without a path the SDK provisions its pinned runtime (downloaded once, then cached).
            self.client = await asyncio.to_thread(self._make_client, copilot, cli_path, token)
        except (RuntimeError, OSError, ValueError) as exc:
            raise WazaError(f"cannot get the Copilot runtime: {exc}; set config.copilot.cli_path or "
                            "COPILOT_CLI_PATH, or fetch it with `python -m copilot download-runtime`") from None
        try:
            await self.client.start()
        except (RuntimeError, OSError, ConnectionError) as exc:
            raise WazaError(f"cannot start the Copilot CLI: {_one_line(exc)}") from None

    async def auth_status(self) -> tuple[bool, str]:
        status = await self.client.get_auth_status()
        return bool(status.isAuthenticated), status.login or status.statusMessage or ""

    async def list_models(self) -> list[str] | None:
        try:
            return [m.id for m in await self.client.list_models()]
        except Exception:  # the check is a courtesy; the session reports a bad model anyway
            return None

    async def create_session(self, options, on_event, on_user_input) -> CopilotSessionHandle:
        # deferred: copilot adds ~1545.3 ms to importing this module
        from copilot import PermissionHandler

        def forward(event) -> None:
            on_event(_event_dict(event))

        async def ask(request, _invocation):
            reply = await on_user_input(dict(request))
            return {"answer": reply["answer"], "wasFreeform": reply["was_freeform"]}

        session = await self.client.create_session(
            **options,
            client_name="waza",
            on_permission_request=PermissionHandler.approve_all,
            on_event=forward,
            on_user_input_request=ask,
        )
        return _SdkSession(session)

    async def delete_session(self, session_id: str) -> None:
        await self.client.delete_session(session_id)

    async def stop(self) -> None:
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio

        if self.client is None:
            return
        try:
            await asyncio.wait_for(self.client.stop(), STOP_SECONDS)
        except (Exception, asyncio.TimeoutError):
            await self.client.force_stop()


class _SdkSession:
    def __init__(self, session) -> None:
        self.session = session
        self.session_id = session.session_id

    async def send_and_wait(self, prompt: str, timeout: float) -> None:
        await self.session.send_and_wait(prompt, timeout=timeout)

    async def abort(self) -> None:
        await self.session.abort()

    async def usage_metrics(self) -> dict | None:
        result = await self.session.rpc.usage.get_metrics(timeout=METRICS_SECONDS)
        return result.to_dict()

    async def disconnect(self) -> None:
        await self.session.disconnect()


def _event_dict(event) -> dict:
    try:
        return event.to_dict()
    except Exception:  # an event the generated code cannot serialize: keep what is certain
        kind = getattr(event, "raw_type", None) or getattr(getattr(event, "type", None), "value", "unknown")
        return {"type": kind, "data": {}}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:1000] or type(exc).__name__


# -- from session events to run evidence ------------------------------------------------------------


def _ts(event: dict) -> datetime.datetime | None:

    try:
        return datetime.datetime.fromisoformat(str(event.get("timestamp")))
    except ValueError:
        return None


def _transcript_event(event: dict) -> dict:
    """The waza (Go) transcript projection: type plus the non-empty well-known fields."""
    kind = event.get("type", "")
    data = event.get("data") or {}
    out: dict[str, Any] = {"type": kind}
    if kind in ("user.message", "assistant.message", "assistant.reasoning", "system.message"):
        out["content"] = data.get("content")
    elif kind in ("session.error", "session.warning", "session.info"):
        out["message"] = data.get("message")
    elif kind == "tool.execution_start":
        out.update(tool_call_id=data.get("toolCallId"), tool_name=data.get("toolName"),
                   arguments=data.get("arguments"))
    elif kind == "tool.execution_complete":
        out.update(tool_call_id=data.get("toolCallId"), success=data.get("success"), tool_result=data.get("result"))
        if not data.get("success") and isinstance(data.get("error"), dict):
            out["message"] = data["error"].get("message")
    elif kind in ("tool.execution_partial_result", "tool.execution_progress"):
        out["tool_call_id"] = data.get("toolCallId")
    elif kind == "skill.invoked":
        out["skill"] = {"name": data.get("name"), "path": data.get("path")}
    return {k: v for k, v in out.items() if v not in (None, "", [], {})} | {"type": kind}


def _tool_args(arguments: Any) -> dict[str, str]:
    """The legacy ``ToolCallArgs`` shape: five string fields, empty when absent."""
    args = arguments if isinstance(arguments, dict) else {}
    return {key: args[key] if isinstance(args.get(key), str) else ""
            for key in ("path", "file_text", "command", "description", "skill")}


def _usage_from_metrics(metrics: dict) -> dict[str, Any]:
    """``session.usage.getMetrics`` / ``session.shutdown`` (wire keys) -> waza usage."""
    per_model = {}
    totals = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"), 0)
    for model, metric in (metrics.get("modelMetrics") or {}).items():
        usage = metric.get("usage") or {}
        requests = metric.get("requests") or {}
        entry = {
            "input_tokens": int(usage.get("inputTokens") or 0),
            "output_tokens": int(usage.get("outputTokens") or 0),
            "cache_read_tokens": int(usage.get("cacheReadTokens") or 0),
            "cache_write_tokens": int(usage.get("cacheWriteTokens") or 0),
            "request_count": requests.get("count") or 0,
            "request_cost": requests.get("cost") or 0,
        }
        credits = _ai_credits(metric)
        if credits is not None:
            entry["ai_credits"] = credits
        per_model[model] = entry
        for key in totals:
            totals[key] += entry[key]
    premium = metrics.get("totalPremiumRequestCost", metrics.get("totalPremiumRequests"))
    if premium is None:
        premium = sum(m["request_cost"] for m in per_model.values())
    usage = {**totals, "premium_requests": premium, "model_metrics": per_model}
    credits = _ai_credits(metrics)
    if credits is not None:
        usage["ai_credits"] = credits
    return usage


def _ai_credits(metric: dict) -> float | None:
    """AI credits (``totalNanoAiu`` / 1e9, as waza (Go) reads them), or None when unavailable.

    Beyond waza (Go): the SDK's ``aiCreditsStatus`` is honoured; ``partial`` (a subtotal of
    some calls) and ``unavailable`` (a zero that is no zero-cost claim) give None, never a
    number that looks like the whole bill."""
    if metric.get("aiCreditsStatus") in ("partial", "unavailable"):
        return None
    nano = metric.get("totalNanoAiu")
    if isinstance(nano, bool) or not isinstance(nano, (int, float)) or not nano >= 0 or nano == float("inf"):
        return None
    return round(nano / 1e9, 9)


def _usage_from_turns(usage_events: list[dict]) -> dict[str, Any] | None:
    """Sum of the per-call ``assistant.usage`` events: the fallback when no totals came."""
    if not usage_events:
        return None
    totals = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"), 0)
    premium = 0.0
    per_model: dict[str, dict] = {}
    wire = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
            "cache_read_tokens": "cacheReadTokens", "cache_write_tokens": "cacheWriteTokens"}
    for data in usage_events:
        entry = per_model.setdefault(data.get("model") or "unknown", {
            **dict.fromkeys(totals, 0), "request_count": 0, "request_cost": 0})
        for key, name in wire.items():
            value = int(data.get(name) or 0)
            totals[key] += value
            entry[key] += value
        cost = data.get("cost") or 0
        premium += cost
        entry["request_count"] += 1
        entry["request_cost"] += cost
    return {**totals, "premium_requests": premium, "model_metrics": per_model}


class _SessionScan:
    """One pass over a session's events, sorting each into what the evidence is built from.

    Events of intent-only tools are skipped entirely; everything else but deltas and
    ephemeral events goes into the transcript, then to the handler of its kind.
    """

    def __init__(self, events: list[dict]) -> None:
        self.intent_ids = {(e.get("data") or {}).get("toolCallId") for e in events
                           if e.get("type") == "tool.execution_start"
                           and (e.get("data") or {}).get("toolName") in INTENT_TOOLS}
        self.transcript: list[dict] = []
        self.outputs: list[str] = []
        self.deltas: list[str] = []
        self.calls: dict[str, dict] = {}  # tool call id -> {start, complete, turn}
        self.order: list[str] = []  # tool call ids, first start first
        self.skills: list[dict] = []
        self.turns: list[dict] = []
        self.usage_events: list[dict] = []
        self.shutdown_metrics: dict | None = None
        self.turn_no = 0
        self.session_error: str | None = None
        for event in events:
            self._feed(event)

    def _feed(self, event: dict) -> None:
        kind = event.get("type", "")
        data = event.get("data") or {}
        if data.get("toolCallId") in self.intent_ids and kind.startswith("tool."):
            return
        if kind not in DELTA_TYPES and not event.get("ephemeral"):
            self.transcript.append(_transcript_event(event))
        root = not event.get("agentId")
        handler = self._ROOT_HANDLERS.get(kind) if root else None
        handler = handler or self._HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, data)

    # -- the main agent's events (sub-agents' are only in the transcript) --------------

    def _assistant_message(self, event: dict, data: dict) -> None:
        if data.get("content"):
            self.outputs.append(data["content"])

    def _assistant_delta(self, event: dict, data: dict) -> None:
        self.deltas.append(data.get("deltaContent") or "")

    def _turn_start(self, event: dict, data: dict) -> None:
        self.turn_no += 1
        self.turns.append({"index": self.turn_no, "turn_id": data.get("turnId"),
                           "started_at": event.get("timestamp"), "ended_at": None})

    def _turn_end(self, event: dict, data: dict) -> None:
        for turn in reversed(self.turns):
            if turn["turn_id"] == data.get("turnId") and turn["ended_at"] is None:
                turn["ended_at"] = event.get("timestamp")
                break

    def _session_error(self, event: dict, data: dict) -> None:
        self.session_error = data.get("message") or "session failed with unknown error"

    # -- any agent's events ---------------------------------------------------------------

    def _tool_start(self, event: dict, data: dict) -> None:
        if not (data.get("toolCallId") and data.get("toolName")):
            return
        call_id = data["toolCallId"]
        if call_id not in self.calls:
            self.order.append(call_id)
        self.calls[call_id] = {"start": event, "complete": None, "turn": self.turn_no}

    def _tool_complete(self, event: dict, data: dict) -> None:
        if data.get("toolCallId") in self.calls:
            self.calls[data["toolCallId"]]["complete"] = event

    def _skill_invoked(self, event: dict, data: dict) -> None:
        if data.get("name") or data.get("path"):
            self.skills.append({k: v for k, v in (("name", data.get("name")), ("path", data.get("path"))) if v})

    def _usage(self, event: dict, data: dict) -> None:
        self.usage_events.append(data)

    def _shutdown(self, event: dict, data: dict) -> None:
        self.shutdown_metrics = data

    _ROOT_HANDLERS = {
        "assistant.message": _assistant_message,
        "assistant.message_delta": _assistant_delta,
        "assistant.turn_start": _turn_start,
        "assistant.turn_end": _turn_end,
        "session.error": _session_error,
    }
    _HANDLERS = {
        "tool.execution_start": _tool_start,
        "tool.execution_complete": _tool_complete,
        "skill.invoked": _skill_invoked,
        "assistant.usage": _usage,
        "session.shutdown": _shutdown,
    }

    @property
    def output(self) -> str:
        """The main agent's messages, one per line; the streamed deltas when there were none."""
        return "\n".join(self.outputs) if self.outputs else "".join(self.deltas)


def _tool_records(scan: _SessionScan) -> tuple[list[dict], list[dict], list[dict]]:
    """(tool_calls, tool_events, shell_calls): each tool call, paired start with completion."""
    tool_calls, tool_events, shell_calls = [], [], []
    for seq, call_id in enumerate(scan.order, start=1):
        entry = scan.calls[call_id]
        start, complete = entry["start"], entry["complete"]
        sdata, cdata = start.get("data") or {}, (complete or {}).get("data") or {}
        success = bool(cdata.get("success")) if complete else False
        tool_calls.append(_legacy_tool_call(call_id, sdata, cdata, success))
        tool_events.append(_tool_event(call_id, seq, entry["turn"], start, complete, success))
        if sdata["toolName"] in SHELL_TOOLS or sdata.get("shellToolInfo"):
            shell_calls.append(_shell_call(call_id, seq, sdata, cdata))
    return tool_calls, tool_events, shell_calls


def _legacy_tool_call(call_id: str, sdata: dict, cdata: dict, success: bool) -> dict:
    """The ``tool_calls`` entry waza (Go) writes: id, name, the five legacy arguments."""
    legacy = {"id": call_id, "name": sdata["toolName"], "arguments": _tool_args(sdata.get("arguments")),
              "success": success}
    if cdata.get("result") is not None:
        legacy["result"] = cdata["result"]
    return legacy


def _tool_event(call_id: str, seq: int, turn: int, start: dict, complete: dict | None, success: bool) -> dict:
    """The ``tool_events`` entry: turn, order, arguments, result, error, duration."""
    sdata, cdata = start.get("data") or {}, (complete or {}).get("data") or {}
    record: dict[str, Any] = {"turn": turn, "sequence": seq, "tool_call_id": call_id,
                              "tool_name": sdata["toolName"], "success": success}
    if sdata.get("arguments") is not None:
        record["args"] = sdata["arguments"]
    if cdata.get("result") is not None:
        record["result"] = cdata["result"]
    if complete is None:
        record["error"] = "no completion event (the run ended first)"
    elif not success:
        err = cdata.get("error")
        record["error"] = (err.get("message") if isinstance(err, dict) else str(err or "")) or "tool failed"
    t0, t1 = _ts(start), _ts(complete) if complete else None
    if t0 and t1:
        record["duration_ms"] = max(0, int((t1 - t0).total_seconds() * 1000))
    return record


def _shell_call(call_id: str, seq: int, sdata: dict, cdata: dict) -> dict:
    """A ``host_lifecycle.shell_calls`` entry: the command and, when known, its exit code."""
    args = sdata.get("arguments") if isinstance(sdata.get("arguments"), dict) else {}
    shell = {"sequence": seq, "tool_call_id": call_id, "command": args.get("command", "")}
    exit_code = (cdata.get("shellExecution") or {}).get("exitCode")
    if exit_code is not None:
        shell["exit_code"] = exit_code
    return shell


def _session_usage(usage_metrics: dict | None, scan: _SessionScan) -> dict[str, Any] | None:
    """The session's totals when known (metrics call, else the shutdown event), else the sum
    of the per-call usage events; token counts from the calls fill totals that have none."""
    if usage_metrics:
        usage = _usage_from_metrics(usage_metrics)
    elif scan.shutdown_metrics and scan.shutdown_metrics.get("modelMetrics"):
        usage = _usage_from_metrics(scan.shutdown_metrics)
    else:
        usage = _usage_from_turns(scan.usage_events)
        credits = _ai_credits(scan.shutdown_metrics or {})  # the shutdown total without a model breakdown
        if credits is not None:
            usage = {**(usage or _usage_from_metrics({})), "ai_credits": credits}
    if usage is None:
        return None
    usage = {"turns": scan.turn_no, **usage}
    turn_usage = _usage_from_turns(scan.usage_events)
    if turn_usage and not (usage["input_tokens"] or usage["output_tokens"]):
        for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            usage[key] = turn_usage[key]
    return usage


def evidence_from_session(events: list[dict], *, session_id: str | None, error: str | None,
                          user_input_requests: list[dict] | None, usage_metrics: dict | None,
                          duration_ms: int, observed: bool = True) -> RunEvidence:
    """Turn one session's events (wire-format dicts, in arrival order) into run evidence.

    Output = the main agent's ``assistant.message`` contents, one per line. Tool calls
    pair ``tool.execution_start`` with ``tool.execution_complete`` by id; intent-only
    tools are dropped. Usage: the session's totals when known, else the per-call sum.
    ``observed=False`` (no session was ever opened) leaves the session-only fields null.
    """
    scan = _SessionScan(events)
    tool_calls, tool_events, shell_calls = _tool_records(scan)
    return RunEvidence(
        output=scan.output,
        transcript=scan.transcript,
        tool_calls=tool_calls,
        tool_events=tool_events if observed else None,
        host_lifecycle={"turns": scan.turns, "shell_calls": shell_calls} if observed else None,
        command_invocations=None,
        user_input_requests=user_input_requests if observed else None,
        skill_invocations=scan.skills if observed else None,
        outcome={},
        duration_ms=duration_ms,
        usage=_session_usage(usage_metrics, scan),
        session_id=session_id,
        error=error or (f"session error: {scan.session_error}" if scan.session_error else None),
    )


# -- the executor -------------------------------------------------------------------------------------


class _RunState:
    """What one run collected; touched only on the loop thread until the run ends."""

    def __init__(self, answer: str | None) -> None:
        self.events: list[dict] = []
        self.user_inputs: list[dict] = []
        self.session_id: str | None = None
        self.error: str | None = None
        self.metrics: dict | None = None
        self.answer = answer

    def on_event(self, event: dict) -> None:
        self.events.append(event)

    async def on_user_input(self, request: dict) -> dict:
        """No person watches an evaluation: reply with the configured answer, or refuse."""
        record: dict[str, Any] = {"sequence": len(self.user_inputs) + 1, "session_id": self.session_id,
                                  "question": request.get("question", ""),
                                  "choices": list(request.get("choices") or []), "source": "ask_user"}
        self.user_inputs.append(record)
        if self.answer is None:
            record["error"] = "no user is available during an evaluation run"
            raise RuntimeError(record["error"] + " (set config.copilot.user_input.answer to reply)")
        record["answer"] = self.answer
        record["was_freeform"] = self.answer not in record["choices"]
        return {"answer": self.answer, "was_freeform": record["was_freeform"]}


class CopilotSdkExecutor(Executor):
    """Runs each task in a GitHub Copilot session; see the module docstring."""

    name = "copilot-sdk"
    paid = True
    reports_turns = True  # request.on_turn after each turn (task checkpoints)
    supports_mocks = True
    config_key = "copilot"
    config_schema = CONFIG_SCHEMA

    def __init__(self, suite, options: dict | None = None, backend: CopilotBackend | None = None) -> None:
        super().__init__(suite, options)
        self.backend: CopilotBackend = backend if backend is not None else SdkBackend(self.options)
        #: the model the runner will use; when the runner sets it before start(), a model
        #: this account cannot use is one start error instead of an error in every run
        self.model: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()
        self._sessions: list[str] = []
        self._models: list[str] | None = None
        self._closed = False
        self._lock = threading.Lock()

    def environment_allow_list(self) -> tuple[str, ...]:
        """The token variable (``github_token_env``): what a run elsewhere gets from the driver."""
        name = self.options.get("github_token_env")
        return (name,) if name else ()

    # -- the private loop ----------------------------------------------------------------------

    def _call(self, coro, timeout: float | None = None):
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio
        import concurrent.futures

        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        # in slices of WAIT_SLICE_SECONDS: in a sequential run this is the main thread, and a signal
        # delivered to another thread (the loop's, say) is handled only when the main thread wakes
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = WAIT_SLICE_SECONDS if deadline is None else min(WAIT_SLICE_SECONDS, deadline - time.monotonic())
            try:
                return future.result(max(left, 0.0))
            except concurrent.futures.TimeoutError:
                if deadline is not None and time.monotonic() >= deadline:
                    future.cancel()
                    raise

    def start(self) -> None:
        """Start the Copilot CLI once; a missing SDK, CLI or login is one clear error here."""
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio
        import concurrent.futures

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="waza-copilot-sdk", daemon=True)
        self._thread.start()
        try:
            self._call(self._start(), timeout=float(self.options.get("startup_timeout_seconds", 120)) + 5)
        except concurrent.futures.TimeoutError:
            self.shutdown()
            raise WazaError("the Copilot CLI did not start in time "
                            "(raise config.copilot.startup_timeout_seconds)") from None
        except BaseException:
            self.shutdown()
            raise

    async def _start(self) -> None:
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio

        limit = float(self.options.get("startup_timeout_seconds", 120))
        try:
            await asyncio.wait_for(self.backend.start(), limit)
            authenticated, who = await asyncio.wait_for(self.backend.auth_status(), limit)
        except asyncio.TimeoutError:
            raise WazaError("the Copilot CLI did not start in time "
                            "(raise config.copilot.startup_timeout_seconds)") from None
        except WazaError:
            raise
        except Exception as exc:
            raise WazaError(f"cannot talk to the Copilot CLI: {_one_line(exc)}") from None
        if not authenticated:
            raise WazaError(f"GitHub Copilot is not logged in{f' ({who})' if who else ''}: {LOGIN_HINT}")
        self._models = await self.backend.list_models()
        # Only the model the runner will really use is checked here (``--model`` may
        # replace config.model); each run checks its own model anyway.
        problem = self._model_problem(self.model)
        if problem:
            raise WazaError(problem)

    def _model_problem(self, model: str | None) -> str | None:
        if not model or not self._models or model in self._models:
            return None
        # deferred: difflib adds ~1.1 ms to importing this module
        import difflib

        close = difflib.get_close_matches(model, self._models, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"model {model!r} is not available to this Copilot account{hint}; available: {', '.join(self._models)}"

    def shutdown(self) -> None:
        """End every session (aborting runs still in flight), stop the CLI, end the loop."""
        with self._lock:
            if self._closed or self._loop is None:
                self._closed = True
                return
            self._closed = True
        try:
            if self._loop.is_running():
                self._call(self._shutdown(), timeout=DRAIN_SECONDS + STOP_SECONDS + 10)
        except BaseException:  # noqa: BLE001 - best effort: never hide the run's own outcome
            pass
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(5)
            if not self._loop.is_running():
                self._loop.close()

    async def _shutdown(self) -> None:
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio

        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()  # each run's own cleanup aborts and disconnects its session
        if tasks:
            await asyncio.wait(tasks, timeout=DRAIN_SECONDS)
        if not self.options.get("keep_sessions"):
            for session_id in self._sessions:
                try:
                    await asyncio.wait_for(self.backend.delete_session(session_id), DISCONNECT_SECONDS)
                except (Exception, asyncio.TimeoutError):
                    pass
        try:
            await self.backend.stop()
        except Exception:
            pass

    # -- one run -----------------------------------------------------------------------------------

    def session_options(self, request: ExecutionRequest) -> dict[str, Any]:
        """Keyword arguments for ``CopilotClient.create_session`` (checked against the SDK by tests)."""
        cwd = request.workspace_dir
        if request.workdir and cwd:
            cwd = os.path.join(cwd, request.workdir)
        opts: dict[str, Any] = {"working_directory": cwd}
        if request.model:
            opts["model"] = request.model
        if request.skill_directories:
            opts["skill_directories"] = [os.path.abspath(d) for d in request.skill_directories]
        disabled = list(self.suite.config.disabled_skills)
        if "*" in disabled:
            opts["enable_skills"] = False
        elif disabled:
            opts["disabled_skills"] = disabled
        mcp = self.options.get("mcp_servers")
        if mcp is None:
            mcp = (self.suite.raw.get("config") or {}).get("mcp_servers")
        mcp = {**dict(mcp or {}), **mcp_server_configs(request.mcp_servers)}
        if mcp:
            opts["mcp_servers"] = mcp
        hook = shell_environment_hook(request.environment, request.path_prepend)
        if hook is not None:
            opts["hooks"] = {"on_pre_tool_use": hook}
        for key in ("available_tools", "excluded_tools"):
            if self.options.get(key) is not None:
                opts[key] = list(self.options[key])
        if self.options.get("reasoning_effort"):
            opts["reasoning_effort"] = self.options["reasoning_effort"]
        return opts

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        # deferred: concurrent.futures adds ~5.3 ms to importing this module
        import concurrent.futures

        started = time.monotonic()
        answer = (self.options.get("user_input") or {}).get("answer")
        state = _RunState(answer)
        problem = self._model_problem(request.model)
        if self._loop is None or self._closed:
            state.error = "the copilot-sdk executor is not running (not started, or shutting down)"
        elif problem:
            state.error = problem
        else:
            try:
                self._call(self._run(request, state))
            except concurrent.futures.CancelledError:
                state.error = state.error or "cancelled: waza is shutting down"
            except RuntimeError as exc:  # the loop was closed under us
                state.error = state.error or f"cancelled: {exc}"
        recorded = state.session_id is not None
        return evidence_from_session(
            state.events, session_id=state.session_id, error=state.error,
            user_input_requests=state.user_inputs, usage_metrics=state.metrics,
            duration_ms=int((time.monotonic() - started) * 1000), observed=recorded)

    async def _run(self, request: ExecutionRequest, state: _RunState) -> None:
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio

        task = asyncio.current_task()
        self._tasks.add(task)
        deadline = time.monotonic() + request.timeout_seconds
        session: CopilotSessionHandle | None = None
        in_flight = cancelled = False
        try:
            try:
                session = await asyncio.wait_for(
                    self.backend.create_session(self.session_options(request), state.on_event, state.on_user_input),
                    max(0.001, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                state.error = f"timed out after {request.timeout_seconds}s while creating the session"
                return
            except Exception as exc:
                state.error = f"cannot create a Copilot session: {_one_line(exc)}"
                return
            state.session_id = session.session_id
            self._sessions.append(session.session_id)
            for turn, prompt in enumerate([request.prompt, *request.task.follow_up_prompts], start=1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    state.error = f"timed out after {request.timeout_seconds}s (before turn {turn})"
                    break
                in_flight = True
                try:
                    # The SDK's own timeout does not stop the agent; ours aborts it below.
                    await asyncio.wait_for(session.send_and_wait(prompt, remaining), remaining + 1)
                    in_flight = False
                except (asyncio.TimeoutError, TimeoutError):
                    where = f" in turn {turn}" if turn > 1 else ""
                    state.error = f"timed out after {request.timeout_seconds}s{where}"
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    in_flight = False
                    found = _last_session_error(state.events)
                    state.error = f"session error: {found}" if found else f"session failed: {_one_line(exc)}"
                    break
                found = _last_session_error(state.events)
                if found:
                    state.error = f"session error: {found}"
                    break
                if request.on_turn is not None:  # graders may be slow: never on the event loop
                    snapshot = evidence_from_session(
                        list(state.events), session_id=state.session_id, error=None,
                        user_input_requests=list(state.user_inputs), usage_metrics=None,
                        duration_ms=int((time.monotonic() - deadline + request.timeout_seconds) * 1000),
                        observed=True)
                    if await asyncio.to_thread(request.on_turn, turn, snapshot):
                        break  # a checkpoint asked to stop the conversation after this turn
        except asyncio.CancelledError:
            state.error = state.error or "cancelled: waza is shutting down"
            cancelled = True
            raise
        finally:
            if session is not None:
                await self._close_session(session, state, in_flight, fetch_usage=not cancelled)
            self._tasks.discard(task)

    async def _close_session(self, session: CopilotSessionHandle, state: _RunState, in_flight: bool,
                             fetch_usage: bool) -> None:
        """Abort what still runs, read the usage, disconnect: bounded, and even when cancelled."""
        # deferred: asyncio adds ~77.1 ms to importing this module
        import asyncio

        if in_flight:
            try:
                await asyncio.wait_for(session.abort(), ABORT_SECONDS)
            except (Exception, asyncio.TimeoutError, asyncio.CancelledError):
                pass
        if fetch_usage:  # also after a timeout: the aborted turn was paid for too
            try:
                state.metrics = await asyncio.wait_for(session.usage_metrics(), METRICS_SECONDS)
            except (Exception, asyncio.TimeoutError, asyncio.CancelledError):
                state.metrics = None
        try:
            await asyncio.wait_for(session.disconnect(), DISCONNECT_SECONDS)
        except (Exception, asyncio.TimeoutError, asyncio.CancelledError):
            pass


# -- the run's environment, PATH and MCP servers -----------------------------------------------

#: shell tools whose ``command`` runs in a POSIX shell / in PowerShell
POSIX_SHELL_TOOLS = frozenset({"bash", "sh", "zsh", "shell", "local_shell"})
POWERSHELL_TOOLS = frozenset({"powershell", "pwsh"})


def mcp_server_configs(servers) -> dict[str, dict]:
    """The run's stdio MCP servers (e.g. ``mcp_mocks``) as the SDK's local server configs."""
    out = {}
    for name, server in (servers or {}).items():
        entry: dict[str, Any] = {"type": "local", "command": server["command"],
                                 "args": list(server.get("args") or []), "tools": ["*"]}
        if server.get("env"):
            entry["env"] = dict(server["env"])
        if server.get("cwd"):
            entry["working_directory"] = server["cwd"]
        out[name] = entry
    return out


def _posix_quote(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


def _ps_quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def shell_prefix(tool: str, environment, path_prepend) -> str:
    """What to put before a shell tool's command so it runs with the run's variables and
    PATH: ``export K='v'; `` (POSIX) or ``$env:K='v'; `` (PowerShell), as waza (Go)
    injects ``WAZA_COMMAND_MOCK_SESSION``."""
    if tool in POWERSHELL_TOOLS:
        parts = [f"$env:{k}={_ps_quote(v)}; " for k, v in sorted(environment.items())]
        if path_prepend:
            parts.append(f"$env:PATH={_ps_quote(os.pathsep.join(path_prepend))} + "
                         "[IO.Path]::PathSeparator + $env:PATH; ")
        return "".join(parts)
    parts = [f"export {k}={_posix_quote(v)}; " for k, v in sorted(environment.items())]
    if path_prepend:
        parts.append(f"export PATH={_posix_quote(os.pathsep.join(path_prepend))}\"${{PATH:+:$PATH}}\"; ")
    return "".join(parts)


def shell_environment_hook(environment, path_prepend):
    """A pre-tool-use hook giving each shell tool call the run's environment and PATH.

    One Copilot CLI process serves every run of a suite, so its own environment cannot
    change per run; what the agent runs through its shell tools can. None when the run
    has nothing to add.
    """
    environment = dict(environment or {})
    path_prepend = tuple(path_prepend or ())
    if not environment and not path_prepend:
        return None

    def on_pre_tool_use(hook_input, _invocation):
        tool = hook_input.get("toolName")
        if tool not in POSIX_SHELL_TOOLS and tool not in POWERSHELL_TOOLS:
            return None
        args = hook_input.get("toolArgs")
        if isinstance(args, str):
            try:
                # deferred: json adds ~2.0 ms to importing this module
                import json

                args = json.loads(args)
            except ValueError:
                args = None
        if not isinstance(args, dict) or not isinstance(args.get("command"), str):
            raise ValueError(f"preparing the run's shell environment: tool {tool!r} has no string command")
        changed = dict(args)
        changed["command"] = shell_prefix(tool, environment, path_prepend) + args["command"]
        return {"modifiedArgs": changed}

    return on_pre_tool_use


def _last_session_error(events: list[dict]) -> str | None:
    for event in reversed(events):
        if event.get("type") == "session.error" and not event.get("agentId"):
            return (event.get("data") or {}).get("message") or "session failed with unknown error"
    return None


@hookimpl
def waza_register_executors(register):
    register(CopilotSdkExecutor)
