"""``--adapter copilot-reflect``: a GEPA-style reflect-and-rewrite step per proposal.

Each ``propose`` shows a model (through the official GitHub Copilot SDK,
``github-copilot-sdk``, the ``waza[copilot]`` extra) the incumbent's files and the
optimization-split feedback, and asks it for full-file rewrites. The model runs
isolated (:func:`session_options`): every tool denied, no skills, an ephemeral session
in an empty folder, ambient discovery (instructions, config, memory, retrieval,
environment context) off. It sees only what the request holds, and requests never
hold qualification data.

The reply grammar (:func:`parse_blocks`)::

    <<<WAZA-FILE path=relative/path.md>>>
    complete new content
    <<<WAZA-END>>>

repeated, or ``<<<WAZA-DONE>>>`` when nothing should change. Text outside blocks is
ignored; a reply with neither is ``malformed_proposal``. Files not named keep their
content, so the proposal is always the complete file set.

The SDK sits behind the seam of the ``copilot-sdk`` executor
(:class:`waza_adapters.copilot_sdk.CopilotBackend`): the real backend here is its
``SdkBackend`` with permissions denied instead of approved, and tests plug in a fake
through :attr:`CopilotReflectAdapter.backend_factory`. The SDK is asynchronous, so
the adapter keeps a private event loop in a daemon thread; the one client (one
Copilot CLI process) is started at ``describe`` (which checks the login and the
model) and stopped by :meth:`~CopilotReflectAdapter.close`.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from waza_core import AdapterFailure, AdapterReply, OptimizerAdapter, WazaError, __version__, hookimpl

DONE = "<<<WAZA-DONE>>>"
END = "<<<WAZA-END>>>"
FILE_MARK = "<<<WAZA-FILE"
_FILE_LINE = re.compile(r'^<<<WAZA-FILE\s+path=(?:"([^"\s]+)"|([^"\s>]+))\s*>>>$')

INSTALL_HINT = "install it with: pip install 'waza[copilot]' (or pip install github-copilot-sdk)"
LOGIN_HINT = ("sign in first with `copilot login` (waza starts no login), or put a token in "
              "COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN")

# bounded waits for the cleanup steps, so a stuck CLI cannot hang the optimizer
ABORT_SECONDS = 5.0
METRICS_SECONDS = 10.0
DISCONNECT_SECONDS = 10.0
STOP_SECONDS = 15.0
#: how long a cancelled or timed-out call may take to abort, read usage and disconnect
CLEANUP_GRACE = ABORT_SECONDS + METRICS_SECONDS + 2 * DISCONNECT_SECONDS + 5
EXCERPT_CHARS = 200
#: ``ToolSet().add_builtin("*").add_mcp("*").add_custom("*")`` without importing the SDK
EXCLUDE_ALL_TOOLS = ("builtin:*", "mcp:*", "custom:*")


# -- the prompt ------------------------------------------------------------------------------------

_TARGETS = {
    "skill-directory": ("an agent skill: SKILL.md (with YAML frontmatter) and the files it uses. Keep the "
                        "frontmatter `name` exactly as it is."),
    "context-overlay": "context files that an agent finds in its workspace before it starts a task.",
}


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "n/a"


def file_block(path: str, content: str) -> str:
    """One file in the reply grammar (content ends with a newline before the END marker)."""
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"<<<WAZA-FILE path={path}>>>\n{body}{END}\n"


def build_prompt(request: dict[str, Any]) -> str:
    """The reflection prompt for one propose request.

    It is built only from ``target``, ``parent.files`` and ``feedback`` (which the core
    fills from optimization-split evaluations alone), so nothing else a request might
    carry can reach the model.
    """
    target = request["target"]
    files = request["parent"]["files"]
    evaluation = request["feedback"]["evaluation"]
    history = request["feedback"]["history"]
    out = [
        "You improve a set of text files by reflecting on how they did in an evaluation.",
        f"The files are {_TARGETS.get(target, 'text files used by an agent.')}",
        "",
        "## Current files",
        "",
        *(file_block(f["path"], f["content"]) for f in files),
        "## Evaluation feedback",
        "",
    ]
    if evaluation.get("state") == "scored":
        out.append(f"With these files the agent scored {_num(evaluation.get('score'))} "
                   f"(pass rate {_num(evaluation.get('pass_rate'))}) on the evaluation tasks.")
    else:
        out.append(f"These files could not be scored ({evaluation.get('state')}).")
    tasks = evaluation.get("tasks")
    if tasks is None:
        out.append("Per-task results are not available.")
    else:
        for task in tasks:
            out.append(f"- task {task['task_id']}: {task['status']}, score {_num(task['score'])}")
            for grader in task["failed_graders"]:
                cut = " [message truncated]" if grader["truncated"] else ""
                out.append(f"  - check {grader['name']} ({grader['type']}) failed: {grader['message']}{cut}")
    if len(history) > 1:
        out += ["", "Scores of the versions tried so far (iteration 0 is the starting version):"]
        for h in history:
            out.append(f"- iteration {h['iteration']}: {h['state']}"
                       + (f", score {_num(h['score'])}" if "score" in h else ""))
    out += [
        "",
        "## Your task",
        "",
        "Work out from the failures what the tasks expect, then rewrite the files so that more tasks pass. "
        "Keep what already works and the domain details; prefer general improvements to ones that fit a "
        "single task. You cannot run tools: answer from the text above alone.",
        "",
        "## Reply format",
        "",
        "For each file you change or add, give its complete new content in one block:",
        "",
        "<<<WAZA-FILE path=relative/path.md>>>",
        "the whole file, exactly as it should be",
        END,
        "",
        "Files you leave out stay as they are. Paths are relative, use /, and contain only letters, digits, "
        "'.', '_' and '-'. Text outside the blocks is ignored. If nothing should change, reply with "
        f"{DONE} and no blocks.",
    ]
    return "\n".join(out) + "\n"


# -- the reply -------------------------------------------------------------------------------------


class ReplyError(ValueError):
    """The model's reply follows neither form of the grammar."""


def parse_blocks(text: str) -> list[tuple[str, str]] | None:
    """``(path, content)`` per block, or ``None`` for ``<<<WAZA-DONE>>>``.

    Marker lines may be indented; a block's content is every line between its
    markers, each ending with a newline (no lines: an empty file). Inside a block only
    the END line is special, except that a new FILE line means the END was forgotten.
    Paths are passed through as written: the core applies the path policy.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[tuple[str, str]] = []
    seen: set[str] = set()
    done = False
    current: str | None = None
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        mark = line.strip()
        if current is not None:
            if mark == END:
                blocks.append((current, "".join(f"{ln}\n" for ln in body)))
                current, body = None, []
            elif mark.startswith(FILE_MARK):
                raise ReplyError(f"line {number}: a new {FILE_MARK} block starts before the block for "
                                 f"{current!r} ends with {END}")
            else:
                body.append(line)
            continue
        if mark.startswith(FILE_MARK):
            match = _FILE_LINE.match(mark)
            if not match:
                raise ReplyError(f"line {number}: malformed file marker {mark[:80]!r}; expected "
                                 "<<<WAZA-FILE path=relative/path>>>")
            current = match.group(1) or match.group(2)
            if current in seen:
                raise ReplyError(f"line {number}: {current!r} is given twice")
            seen.add(current)
        elif mark == END:
            raise ReplyError(f"line {number}: {END} without a {FILE_MARK} block")
        elif DONE in line:
            done = True
    if current is not None:
        raise ReplyError(f"the block for {current!r} has no {END}")
    if blocks and done:
        raise ReplyError(f"the reply has both file blocks and {DONE}")
    if done:
        return None
    if not blocks:
        raise ReplyError(f"the reply has neither file blocks nor {DONE}")
    return blocks


def merge_files(parent: list[dict[str, str]], blocks: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The complete candidate: the parent's files, with the blocks replacing or adding files."""
    new = dict(blocks)
    out = [{"path": f["path"], "content": new.pop(f["path"], f["content"])} for f in parent]
    out += [{"path": p, "content": c} for p, c in blocks if p in new]
    return out


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS] + "..."


# -- session options and usage ---------------------------------------------------------------------


def session_options(model: str, working_directory: str) -> dict[str, Any]:
    """Keyword arguments for ``CopilotClient.create_session`` (checked against the SDK by tests).

    Options the SDK drops when empty (``mcp_servers={}``, ``tools=[]``) are left out:
    they would only look like isolation.
    """
    return {
        "model": model,
        "working_directory": working_directory,  # fresh and empty, removed afterwards
        # every tool denied: an empty allow-list, and every source excluded (the SDK makes
        # exclusions win over the runtime's defaults); the permission handler denies the rest
        "available_tools": [],
        "excluded_tools": list(EXCLUDE_ALL_TOOLS),
        # no skills
        "enable_skills": False,
        "skill_directories": [],
        "included_builtin_skills": [],
        # ephemeral: no name (a name persists a session), no store, memory or workspace;
        # the session is deleted after the call
        "enable_session_store": False,
        "memory": {"enabled": False},
        "infinite_sessions": {"enabled": False},
        # ambient discovery off: no host instructions, config, agents, hooks or retrieval
        "enable_config_discovery": False,
        "skip_custom_instructions": True,
        "enable_on_demand_instruction_discovery": False,
        "instruction_directories": [],
        "agent_directories": [],
        "hook_directories": [],
        "custom_agents_local_only": True,
        "enable_file_hooks": False,
        "enable_host_git_operations": False,
        "skip_embedding_retrieval": True,
        "system_message": {"mode": "customize", "sections": {
            "environment_context": {"action": "remove"},  # CWD, OS, git root, directory listing
            "custom_instructions": {"action": "remove"},
        }},
        "streaming": False,
    }


def _count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def spend_from(metrics: dict | None, usage_events: list[dict]) -> dict[str, Any] | None:
    """Adapter spend from the session's usage (wire keys), in the report's fields.

    Session totals (``session.usage.getMetrics``) are preferred; else the per-call
    ``assistant.usage`` events are added up. A premium-request count that is missing,
    or missing for some calls, makes the spend ``partial`` (observed counters are kept):
    it is never guessed as zero. ``None`` when nothing was reported at all.
    """
    wire = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
            "cache_read_tokens": "cacheReadTokens", "cache_write_tokens": "cacheWriteTokens"}
    tokens = dict.fromkeys(wire, 0)
    seen: set[str] = set()
    premium: float | None = None
    complete = True
    if metrics and isinstance(metrics.get("modelMetrics"), dict):
        for metric in metrics["modelMetrics"].values():
            usage = (metric or {}).get("usage") or {}
            for key, name in wire.items():
                if _count(usage.get(name)):
                    tokens[key] += int(usage[name])
                    seen.add(key)
        total = metrics.get("totalPremiumRequestCost")
        if _count(total):
            premium = total
        else:
            costs = [(m or {}).get("requests", {}).get("cost") for m in metrics["modelMetrics"].values()]
            complete = bool(costs) and all(_count(c) for c in costs)
            premium = sum(c for c in costs if _count(c)) if any(_count(c) for c in costs) else None
    elif usage_events:
        costs = []
        for data in usage_events:
            for key, name in wire.items():
                if _count(data.get(name)):
                    tokens[key] += int(data[name])
                    seen.add(key)
            costs.append(data.get("cost"))
        complete = all(_count(c) for c in costs)
        premium = sum(c for c in costs if _count(c)) if any(_count(c) for c in costs) else None
    else:
        return None
    out: dict[str, Any] = {}
    if premium is not None:
        out["premium_requests"] = premium
    else:
        complete = False
    out.update({k: v for k, v in tokens.items() if k in seen})
    if not out:
        return None
    return {"status": "measured" if complete else "partial", **out}


# -- the SDK backend -------------------------------------------------------------------------------


def deny_all(request, invocation):
    """Permission handler: every request is rejected (no tool may run, whatever asks)."""
    # deferred: copilot.generated.rpc adds ~2706.6 ms to importing this module
    from copilot.generated.rpc import PermissionDecisionReject

    return PermissionDecisionReject(feedback="tools are disabled for waza copilot-reflect")


def sdk_backend():
    """The real backend: the ``copilot-sdk`` executor's ``SdkBackend`` (client creation,
    ``COPILOT_CLI_PATH``, start-up errors, login status), with permissions denied."""
    # deferred: waza_adapters.copilot_sdk adds ~28.7 ms to importing this module
    from waza_adapters.copilot_sdk import SdkBackend, _event_dict, _SdkSession

    class ReflectSdkBackend(SdkBackend):
        async def start(self) -> None:

            try:
                await super().start()
            except WazaError as exc:  # the executor's hints name its suite config; ours has none
                raise WazaError(str(exc).replace("config.copilot.cli_path or COPILOT_CLI_PATH",
                                                 "COPILOT_CLI_PATH")) from None

        async def create_session(self, options, on_event, on_user_input):
            def forward(event) -> None:
                on_event(_event_dict(event))

            session = await self.client.create_session(**options, client_name="waza-copilot-reflect",
                                                       on_permission_request=deny_all, on_event=forward)
            return _SdkSession(session)

    return ReflectSdkBackend({"log_level": "error"})


class _Stopped(Exception):
    """A coroutine on the private loop had to be cancelled outright."""


class _Call:
    """What one propose call collected; touched only on the loop thread until it ends."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.session_id: str | None = None
        self.metrics: dict | None = None
        self.error: str | None = None
        self.cancelled = False
        self.timed_out = False
        self.stop = None  # asyncio.Event, made on the loop

    def on_event(self, event: dict) -> None:
        self.events.append(event)

    async def on_user_input(self, request: dict) -> dict:
        raise RuntimeError("no user is available to a copilot-reflect session")

    def reply_text(self) -> str:
        """The main agent's messages (sub-agents' notes are not the answer)."""
        return "\n".join(str((e.get("data") or {}).get("content") or "") for e in self.events
                         if e.get("type") == "assistant.message" and not e.get("agentId"))

    def usage_events(self) -> list[dict]:
        return [e.get("data") or {} for e in self.events if e.get("type") == "assistant.usage"]

    def session_error(self) -> str | None:
        for event in reversed(self.events):
            if event.get("type") == "session.error" and not event.get("agentId"):
                return (event.get("data") or {}).get("message") or "session failed with an unknown error"
        return None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:1000] or type(exc).__name__


class CopilotReflectAdapter(OptimizerAdapter):
    """Reflect-and-rewrite through the Copilot SDK; see the module docstring."""

    name = "copilot-reflect"
    always_paid = True
    option_help = {"model": "The model that rewrites the candidate (--reflect-model); default: the eval model, "
                            "required when that is mock."}
    #: makes the backend (the seam); tests replace it with a fake
    backend_factory = staticmethod(sdk_backend)

    def __init__(self, options) -> None:
        super().__init__(options)
        self.model = options.get("model") or options.eval_model
        self.backend = None
        self._loop = None
        self._thread: threading.Thread | None = None
        self._started = False

    # -- flags -------------------------------------------------------------------------------------

    def check_options(self) -> list[str]:
        # deferred: importlib.util adds ~0.4 ms to importing this module
        import importlib.util

        problems = []
        if not self.options.get("model") and self.options.eval_model in ("", "mock"):
            problems.append("--adapter copilot-reflect needs --reflect-model when the eval model is "
                            f"{self.options.eval_model or 'not set'!r} (e.g. --reflect-model claude-haiku-4.5)")
        if type(self).backend_factory is sdk_backend and importlib.util.find_spec("copilot") is None:
            problems.append(f"--adapter copilot-reflect needs the GitHub Copilot SDK; {INSTALL_HINT}")
        return problems

    # -- the private loop --------------------------------------------------------------------------

    def _ensure_loop(self) -> None:
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="waza-copilot-reflect", daemon=True)
            self._thread.start()

    def _wait(self, coro, deadline: float | None, cancel: threading.Event, call: _Call | None = None):
        """Run ``coro`` on the loop and return its result.

        On cancellation, the deadline or Ctrl-C the coroutine is asked to stop (a propose
        session then aborts its turn, reads the usage and closes itself) and is given
        :data:`CLEANUP_GRACE` to do so; only then is it cancelled outright. Raises
        :class:`_Stopped` when it had to be cancelled.
        """
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio
        import concurrent.futures

        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        asked_at: float | None = None
        try:
            while True:
                try:
                    return future.result(0.05)
                except concurrent.futures.TimeoutError:
                    pass
                now = time.monotonic()
                if asked_at is None and (cancel.is_set() or (deadline is not None and now >= deadline)):
                    asked_at = now
                    self._ask_to_stop(future, call, cancelled=cancel.is_set())
                elif asked_at is not None and now - asked_at > CLEANUP_GRACE:
                    future.cancel()
        except concurrent.futures.CancelledError:
            raise _Stopped() from None
        except KeyboardInterrupt:
            self._ask_to_stop(future, call, cancelled=True)
            try:
                future.result(CLEANUP_GRACE)
            except BaseException:  # noqa: BLE001 - the interrupt is what matters
                future.cancel()
            raise

    def _ask_to_stop(self, future, call: _Call | None, cancelled: bool) -> None:
        if call is not None and call.stop is not None and not future.done():
            call.cancelled, call.timed_out = cancelled, not cancelled
            self._loop.call_soon_threadsafe(call.stop.set)
        else:
            if call is not None:
                call.cancelled, call.timed_out = cancelled, not cancelled
            future.cancel()

    # -- calls -------------------------------------------------------------------------------------

    def call(self, request, *, timeout, cancel) -> AdapterReply:
        deadline = time.monotonic() + timeout if timeout else None
        self._start(deadline, cancel)
        if request["operation"] == "describe":
            return AdapterReply(raw=_dump(self._describe_doc()))
        return self._propose(request, deadline, cancel)

    def _describe_doc(self) -> dict[str, Any]:

        return {
            "kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "describe",
            "contract_versions": ["1.0"], "adapter": {"name": self.name, "version": __version__},
            "required_capabilities": ["feedback.task-results", "propose.files"],
            "optional_capabilities": ["feedback.optimization-split", "target.context-overlay",
                                      "target.skill-directory", "usage.adapter-reported"],
            "paid_calls": True,
        }

    def _start(self, deadline: float | None, cancel: threading.Event) -> None:
        """Start the CLI once and check the login and the model: each problem is one clear
        ``optimizer_failure`` at ``describe``, before anything is evaluated."""
        if self._started:
            return
        self._ensure_loop()
        if self.backend is None:
            self.backend = type(self).backend_factory()
        try:
            self._wait(self._start_async(), deadline, cancel)
        except _Stopped:
            what = "cancelled" if cancel.is_set() else "timed out (--adapter-timeout)"
            raise AdapterFailure(f"copilot-reflect: starting the Copilot CLI {what}") from None
        self._started = True

    async def _start_async(self) -> None:

        try:
            await self.backend.start()
            authenticated, who = await self.backend.auth_status()
        except WazaError as exc:
            raise AdapterFailure(f"copilot-reflect: {exc}") from None
        except Exception as exc:
            raise AdapterFailure(f"copilot-reflect: cannot talk to the Copilot CLI: {_one_line(exc)}") from None
        if not authenticated:
            raise AdapterFailure(f"copilot-reflect: GitHub Copilot is not signed in"
                                 f"{f' ({who})' if who else ''}: {LOGIN_HINT}")
        models = await self.backend.list_models()
        if models and self.model not in models:
            # deferred: difflib adds ~1.8 ms to importing this module
            import difflib

            close = difflib.get_close_matches(self.model, models, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            flag = self.options.origin("model") if self.options.get("model") else \
                "the eval model (or --reflect-model)"
            raise AdapterFailure(f"copilot-reflect: model {self.model!r} from {flag} is not available to this "
                                 f"Copilot account{hint}; available: {', '.join(models)}")

    def _propose(self, request, deadline, cancel) -> AdapterReply:
        call = _Call()
        try:
            self._wait(self._session(call, build_prompt(request), deadline), deadline, cancel, call)
        except _Stopped:
            call.error = call.error or "the Copilot session did not stop in time"
        except KeyboardInterrupt:
            # The optimizer sets ``cancel`` before its Ctrl-C reaches us: then the session is
            # already closed, and a failure keeps what the aborted call cost in the report.
            if not cancel.is_set():
                raise
            call.cancelled = True
        usage = spend_from(call.metrics, call.usage_events())
        if call.cancelled:
            raise AdapterFailure("copilot-reflect: cancelled; the session was aborted", usage=usage)
        if call.timed_out:
            raise AdapterFailure("copilot-reflect: the model did not answer in time (--adapter-timeout); "
                                 "the session was aborted", usage=usage)
        if call.error:
            raise AdapterFailure(f"copilot-reflect: {call.error}", usage=usage)
        text = call.reply_text()
        try:
            blocks = parse_blocks(text)
        except ReplyError as exc:
            raise AdapterFailure(f"copilot-reflect: the model's reply is not usable: {exc}; it begins: "
                                 f"{_excerpt(text)!r}", category="malformed_proposal", usage=usage) from None
        doc: dict[str, Any] = {
            "kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "propose",
            "contract_version": request["contract_version"], "status": "done" if blocks is None else "candidate",
            "parent_id": request["parent"]["candidate_id"],
        }
        if blocks is not None:
            doc["files"] = merge_files(request["parent"]["files"], blocks)
        doc["usage"] = usage or {"status": "unavailable"}
        return AdapterReply(raw=_dump(doc), usage=usage)

    async def _session(self, call: _Call, prompt: str, deadline: float | None) -> None:
        """One ephemeral session: create, send, wait, then always abort (if needed), read
        usage, disconnect and delete, each step bounded."""
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio
        import shutil
        import tempfile

        call.stop = asyncio.Event()
        workdir = tempfile.mkdtemp(prefix="waza-reflect-")
        session = None
        in_flight = False

        def left() -> float | None:
            return None if deadline is None else max(0.001, deadline - time.monotonic())

        async def until_stopped(awaitable):
            """``awaitable``, unless the caller asks to stop first (then ``None``)."""
            task = asyncio.ensure_future(awaitable)
            stopper = asyncio.ensure_future(call.stop.wait())
            try:
                done, _ = await asyncio.wait({task, stopper}, timeout=left(),
                                             return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopper.cancel()
            if task in done:
                return task.result()
            task.cancel()
            if not call.cancelled:
                call.timed_out = True
            return None

        try:
            try:
                session = await until_stopped(self.backend.create_session(
                    session_options(self.model, workdir), call.on_event, call.on_user_input))
            except Exception as exc:
                call.error = f"cannot create a Copilot session: {_one_line(exc)}"
                return
            if session is None:
                return
            call.session_id = session.session_id
            in_flight = True
            try:
                # the SDK's own timeout is later than ours: ours aborts the turn, the SDK's would not
                timeout = left()
                await until_stopped(session.send_and_wait(prompt, timeout + 5 if timeout is not None else 3600.0))
                in_flight = call.cancelled or call.timed_out
            except (asyncio.TimeoutError, TimeoutError):
                call.timed_out = not call.cancelled
                return
            except Exception as exc:
                in_flight = False
                found = call.session_error()
                call.error = f"session error: {found}" if found else f"the session failed: {_one_line(exc)}"
                return
            found = call.session_error()
            if found:
                call.error = f"session error: {found}"
        finally:
            try:
                if session is not None:
                    await self._close_session(session, call, in_flight)
            finally:  # also when a stuck cleanup is cancelled outright
                shutil.rmtree(workdir, ignore_errors=True)

    async def _close_session(self, session, call: _Call, in_flight: bool) -> None:
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio

        async def bounded(awaitable, seconds):
            try:
                return await asyncio.wait_for(awaitable, seconds)
            except (Exception, asyncio.TimeoutError):
                return None

        if in_flight:
            await bounded(session.abort(), ABORT_SECONDS)
        call.metrics = await bounded(session.usage_metrics(), METRICS_SECONDS)  # also after a failure: it was paid
        await bounded(session.disconnect(), DISCONNECT_SECONDS)
        await bounded(self.backend.delete_session(session.session_id), DISCONNECT_SECONDS)

    def close(self) -> None:
        """Stop the Copilot CLI and the private loop (bounded)."""
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio

        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        if self.backend is not None:
            future = asyncio.run_coroutine_threadsafe(self._stop_backend(), loop)
            try:
                future.result(STOP_SECONDS + 5)
            except BaseException:  # noqa: BLE001 - best effort: never hide the run's own outcome
                future.cancel()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        if not loop.is_running():
            loop.close()

    async def _stop_backend(self) -> None:
        # deferred: asyncio adds ~95.9 ms to importing this module
        import asyncio

        try:
            await asyncio.wait_for(self.backend.stop(), STOP_SECONDS)
        except (Exception, asyncio.TimeoutError):
            pass


def _dump(doc: Any) -> bytes:
    # deferred: json adds ~2.0 ms to importing this module
    import json

    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


@hookimpl
def waza_register_optimizer_adapters(register):
    register(CopilotReflectAdapter)

