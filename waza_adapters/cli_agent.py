"""``executor: cli``: any agent with a command line (Claude Code, Codex, Gemini CLI,
Aider, a user's own script).

``config.cli`` gives an argv template and how to read the agent's answer::

    config:
      executor: cli
      model: claude-sonnet-4-5
      cli:
        command: ["claude", "-p", "{prompt}", "--output-format", "json", "--model", "{model}"]
        env: ["ANTHROPIC_API_KEY"]      # names (or globs) passed through from waza's environment
        output: json                    # text (default) | json | jsonl
        output_path: result             # where the answer is in the JSON
        usage_path: usage               # optional: token counts, else usage stays null

Each turn runs from argv without a shell (:func:`waza_core.run_process`), in the run's
workspace, with a minimal environment, bounded output capture and the task timeout
killing the whole process group. The agent's changes to the workspace are what file
and program graders then see. See docs/executors.md for every option.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import string
import tempfile
import time
from pathlib import Path
from typing import Any

from waza_core import (
    EventFormat,
    ExecutionRequest,
    Executor,
    RunEvidence,
    WazaError,
    add_usage,
    child_environment,
    display_path,
    find_registered,
    get_console,
    hookimpl,
    normalize_usage,
    registered_names,
)

#: placeholders an argv template may use
PLACEHOLDERS = frozenset({"prompt", "prompt_file", "workspace", "model", "suite_dir", "session_id", "mcp_config",
                          "events_file"})
#: the built-in event formats (``events``); plugins add more through waza_register_event_formats
EVENT_FORMATS = ("claude-stream-json", "codex-json", "gemini-stream-json", "opencode-json",
                 "cursor-stream-json", "copilot-cli-json")
#: a JSON field path: ``result``, ``.result``, ``.messages[-1].content``, ``[0].text``
PATH_RE = r"^\.?(?:[A-Za-z_][A-Za-z0-9_-]*|\[-?[0-9]+\])(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[-?[0-9]+\])*$"
DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024
STDERR_CAP = 64 * 1024
ERROR_TAIL = 2000

_ARGV = {"type": "array", "minItems": 1, "items": {"type": "string"}}
_PATH = {"type": "string", "pattern": PATH_RE}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["command"],
    "properties": {
        "command": {**_ARGV, "description": "argv template of one turn; placeholders: {prompt}, "
                    "{prompt_file}, {workspace}, {model}, {suite_dir}, {mcp_config}"},
        "follow_up_command": {**_ARGV, "description": "argv template of follow-up turns; may also use "
                              "{session_id} (default: command)"},
        "env": {"type": "array", "items": {"type": "string", "minLength": 1},
                "description": "names or globs of variables passed through from waza's environment"},
        "set_env": {"type": "object", "additionalProperties": {"type": "string"},
                    "description": "variables set to fixed values"},
        "stdin": {"enum": ["none", "prompt"], "description": "what the agent reads on stdin"},
        "output": {"enum": ["text", "json", "jsonl"], "description": "how to read stdout"},
        "output_path": {**_PATH, "description": "JSON field path of the answer (json/jsonl)"},
        "usage_path": {**_PATH, "description": "JSON field path of token usage (json/jsonl)"},
        "session_id_path": {**_PATH, "description": "JSON field path of the agent's session id"},
        "max_output_bytes": {"type": "integer", "minimum": 1024, "description": "stdout cap per turn"},
        "success_exit_codes": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
        "events": {"type": "string", "minLength": 1,
                   "description": "read tool calls, skill invocations and usage from the agent's event "
                                  "stream in this format (an event format plugin: "
                                  + ", ".join(EVENT_FORMATS) + ", ...)"},
        "events_from": {"enum": ["stdout", "file"],
                        "description": "where the event stream is: stdout (output: jsonl) or the file "
                                       "{events_file} / WAZA_EVENTS_FILE the agent writes"},
    },
    "allOf": [
        {"if": {"properties": {"output": {"enum": ["json", "jsonl"]}}, "required": ["output"],
                "not": {"required": ["events"]}},
         "then": {"required": ["output_path"]}},
        {"if": {"anyOf": [{"required": ["usage_path"]}, {"required": ["session_id_path"]}]},
         "then": {"required": ["output"], "properties": {"output": {"enum": ["json", "jsonl"]}}}},
    ],
}


# -- argv templates -------------------------------------------------------------------


def parse_template(arg: str, allowed: frozenset[str], where: str) -> list[tuple[str, str | None]]:
    """Split one argv element into (literal, placeholder) pieces; ``{{``/``}}`` are braces."""
    try:
        parts = list(string.Formatter().parse(arg))
    except ValueError as exc:
        raise WazaError(f"{where}: bad template {arg!r}: {exc} (write {{{{ and }}}} for literal braces)") from None
    out = []
    for literal, field, spec, conv in parts:
        if field is not None:
            if field not in allowed or spec or conv:
                known = ", ".join("{%s}" % p for p in sorted(allowed))
                raise WazaError(f"{where}: unknown placeholder {{{field}}} in {arg!r}; known: {known}")
        out.append((literal, field))
    return out


def render(template: list[list[tuple[str, str | None]]], values: dict[str, str]) -> list[str]:
    return ["".join(lit + (values[field] if field else "") for lit, field in arg) for arg in template]


def uses(template: list[list[tuple[str, str | None]]], name: str) -> bool:
    return any(field == name for arg in template for _, field in arg)


# -- JSON field paths -----------------------------------------------------------------

_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(-?[0-9]+)\]")
_MISSING = object()


def compile_path(path: str) -> tuple[str | int, ...]:
    if not re.match(PATH_RE, path):
        raise WazaError(f"bad JSON field path {path!r} (examples: result, .messages[-1].content)")
    return tuple(m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _TOKEN.finditer(path))


def lookup(doc: Any, steps: tuple[str | int, ...]) -> Any:
    """The value at ``steps`` in ``doc``, or ``_MISSING``."""
    cur = doc
    for step in steps:
        if isinstance(step, int):
            if not isinstance(cur, list) or not -len(cur) <= step < len(cur):
                return _MISSING
            cur = cur[step]
        else:
            if not isinstance(cur, dict) or step not in cur:
                return _MISSING
            cur = cur[step]
    return cur


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, dict) and isinstance(v.get("text"), str) for v in value):
        return "".join(v["text"] for v in value)  # content blocks: [{"type": "text", "text": ...}]
    return json.dumps(value, ensure_ascii=False)


# -- the executor ---------------------------------------------------------------------


class _TurnFailed(Exception):
    pass


class CliExecutor(Executor):
    """Runs the agent's command once per turn; see the module docstring."""

    name = "cli"
    paid = True
    reports_turns = True  # request.on_turn after each turn (task checkpoints)
    supports_mocks = True
    config_key = "cli"
    config_schema = CONFIG_SCHEMA

    def __init__(self, suite, options: dict | None = None) -> None:
        super().__init__(suite, options)
        # deferred: waza_core adds ~4.7 ms to importing this module
        from waza_core import CancelEvent

        opts = self.options
        where = f"{_display(suite.file)}: config.cli"
        if not opts.get("command"):
            raise WazaError(f"{where}.command is required by executor 'cli' (the agent's argv, "
                            'e.g. ["my-agent", "--prompt", "{prompt}"])')
        first_turn = PLACEHOLDERS - {"session_id"}
        self.command = [parse_template(a, first_turn, f"{where}.command") for a in opts["command"]]
        self.follow_up = ([parse_template(a, PLACEHOLDERS, f"{where}.follow_up_command")
                           for a in opts["follow_up_command"]] if opts.get("follow_up_command") else None)
        for name, tpl in (("command", self.command), ("follow_up_command", self.follow_up)):
            if tpl and any(field not in (None, "suite_dir") for _, field in tpl[0]):
                raise WazaError(f"{where}.{name}[0] (the program) may only use the {{suite_dir}} placeholder")
        self.output = opts.get("output", "text")
        self.output_path = compile_path(opts["output_path"]) if opts.get("output_path") else None
        self.usage_path = compile_path(opts["usage_path"]) if opts.get("usage_path") else None
        self.session_id_path = compile_path(opts["session_id_path"]) if opts.get("session_id_path") else None
        if self.output in ("json", "jsonl") and self.output_path is None and not opts.get("events"):
            raise WazaError(f"{where}.output_path is required with output: {self.output}")
        if self.follow_up and uses(self.follow_up, "session_id") and self.session_id_path is None:
            raise WazaError(f"{where}.follow_up_command uses {{session_id}}: set {where}.session_id_path too")
        #: ``env``: what passes from waza's environment beside the baseline of waza's one policy
        #: (:func:`waza_core.child_environment`)
        self.env_allow = tuple(opts.get("env", ()))
        self.set_env = {str(k): str(v) for k, v in (opts.get("set_env") or {}).items()}
        self.stdin_prompt = opts.get("stdin", "none") == "prompt"
        self.max_output = int(opts.get("max_output_bytes", DEFAULT_MAX_OUTPUT))
        self.ok_codes = frozenset(opts.get("success_exit_codes", (0,)))
        self.suite_dir = str(Path(suite.file).parent.absolute())
        self.events, self.events_from = _event_options(opts, where)
        if self.events_from != "file" and any(tpl and uses(tpl, "events_file")
                                              for tpl in (self.command, self.follow_up)):
            raise WazaError(f"{where} uses {{events_file}}, which needs events_from: file (and events)")
        self._cancel = CancelEvent()

    # -- lifecycle ----------------------------------------------------------------------

    def environment_allow_list(self) -> tuple[str, ...]:
        """``env``: what a run elsewhere (``--backend ray``) gets from the driver."""
        return self.env_allow

    def start(self) -> None:
        """Fail once, clearly, when the agent's program is missing (not once per task)."""
        for key, template in (("command", self.command), ("follow_up_command", self.follow_up)):
            if template is None:
                continue
            prog = self._program(template)
            where = f"{_display(self.suite.file)}: config.cli.{key}[0]"
            if os.sep in prog:
                if not os.path.isfile(prog):
                    raise WazaError(f"{where}: agent program not found: {prog}")
                if not os.access(prog, os.X_OK):
                    raise WazaError(f"{where}: agent program {prog} is not executable (chmod +x it, "
                                    "or run it through its interpreter)")
            elif shutil.which(prog, path=self._env().get("PATH")) is None:
                raise WazaError(f"{where}: agent program {prog!r} is not on PATH; install it or give its full path")

    def _program(self, template) -> str:
        """argv[0]: a relative path is taken from the suite's folder, not the run's workspace."""
        prog = render([template[0]], {"suite_dir": self.suite_dir})[0]
        if os.sep in prog and not os.path.isabs(prog):
            prog = os.path.join(self.suite_dir, prog)
        return prog

    def shutdown(self) -> None:
        """Kill every agent still running (after Ctrl-C the workers may still be in one)."""
        self._cancel.set()

    # -- one run --------------------------------------------------------------------------

    def _env(self, extra: dict[str, str] | None = None, request: ExecutionRequest | None = None) -> dict[str, str]:
        """The agent's environment: the allowed part of waza's (the baseline and ``env``),
        ``set_env``, the run's ``environment`` (``inputs.environment``, command-mock
        variables), waza's own ``WAZA_*`` values, and the run's ``path_prepend`` folders
        first on PATH."""
        env = child_environment(self.env_allow)
        env.update(self.set_env)
        if request is not None:
            env.update(request.environment)
        env.update(extra or {})
        if request is not None and request.path_prepend:
            env["PATH"] = os.pathsep.join([*request.path_prepend, *([env["PATH"]] if env.get("PATH") else [])])
        return env

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        # deferred: waza_core adds ~5.4 ms to importing this module
        from waza_core import ProcessStartError

        started = time.monotonic()
        deadline = started + request.timeout_seconds if request.timeout_seconds else None
        prompts = [request.prompt, *request.task.follow_up_prompts]
        evidence = RunEvidence(output="", transcript=[], tool_calls=[])
        stream = self.events() if self.events else None
        if stream is not None:
            evidence.tool_events, evidence.skill_invocations = [], []
        outputs: list[str] = []
        private = tempfile.mkdtemp(prefix="waza-cli-")  # the prompt file lives outside the workspace
        prompt_file = os.path.join(private, "prompt.txt")
        mcp_config = write_mcp_config(private, request.mcp_servers)
        cwd = agent_cwd(request)
        session_id: str | None = None
        try:
            for turn, prompt in enumerate(prompts, start=1):
                template = self.command if turn == 1 or self.follow_up is None else self.follow_up
                if uses(template, "model") and not request.model:
                    raise _TurnFailed("config.cli uses {model} but no model is set (config.model or --model)")
                fd = os.open(prompt_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(prompt)
                events_file = os.path.join(private, f"events-{turn}.jsonl")
                values = {"prompt": prompt, "prompt_file": prompt_file, "workspace": request.workspace_dir,
                          "model": request.model or "", "suite_dir": self.suite_dir,
                          "session_id": session_id or "", "mcp_config": mcp_config, "events_file": events_file}
                argv = render(template, values)
                argv[0] = self._program(template)
                evidence.transcript.append({"type": "user.message", "content": prompt})
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise _TurnFailed(f"timed out after {request.timeout_seconds}s before turn {turn}")
                env = self._env({
                    "WAZA_WORKSPACE_DIR": request.workspace_dir, "WAZA_PROMPT_FILE": prompt_file,
                    "WAZA_TASK_ID": request.task.id, "WAZA_RUN_NUMBER": str(request.run_number),
                    "WAZA_ATTEMPT": str(request.attempt), "WAZA_TURN": str(turn),
                    "WAZA_MODEL": request.model or "",
                    "WAZA_SKILL_DIRECTORIES": os.pathsep.join(request.skill_directories),
                    **({"WAZA_MCP_CONFIG": mcp_config} if request.mcp_servers else {}),
                    **({"WAZA_EVENTS_FILE": events_file} if self.events_from == "file" else {}),
                }, request)
                try:
                    result = _run(argv, cwd, env, prompt if self.stdin_prompt else None,
                                  remaining, self.max_output, self._cancel)
                except ProcessStartError as exc:
                    raise _TurnFailed(str(exc)) from None
                text, usage, sid, problem = self._read_turn(result, request, turn)
                if stream is not None:
                    said_before = len(stream.messages)
                    events_problem = self._read_events(stream, result, events_file, turn, evidence)
                    if text is None and self.output_path is None and len(stream.messages) > said_before:
                        text = stream.messages[-1]  # no output_path: the stream's last message is the answer
                    problem = problem or events_problem
                    if sid is None and self.session_id_path is None:
                        sid = stream.session_id
                    if usage is None and self.usage_path is None:
                        usage = stream.take_usage()
                if text is not None:
                    outputs.append(text)
                    event = {"type": "assistant.message", "content": text}
                    if result.stdout_truncated and self.output == "text":
                        event["truncated"] = True
                    if stream is None or not stream.said(text):  # the stream may have recorded it already
                        evidence.transcript.append(event)
                evidence.usage = add_usage(evidence.usage, usage)
                if sid:
                    session_id = evidence.session_id = sid
                if problem:
                    raise _TurnFailed(problem)
                if request.on_turn is not None and request.on_turn(turn, RunEvidence(
                        output="\n".join(o for o in outputs if o), transcript=list(evidence.transcript),
                        tool_calls=list(evidence.tool_calls), usage=evidence.usage, session_id=evidence.session_id,
                        duration_ms=int((time.monotonic() - started) * 1000))):
                    break  # a checkpoint asked to stop the conversation after this turn
            if self.usage_path is not None and evidence.usage is not None:
                evidence.usage["turns"] = len(prompts)
            elif stream is not None and evidence.usage is not None:
                stream.finish_usage(evidence.usage)
            if evidence.usage is not None and "cost_usd" in evidence.usage:
                evidence.usage["cost_source"] = "agent"  # the agent's own figure, not a price table
        except _TurnFailed as exc:
            evidence.error = str(exc)
            evidence.transcript.append({"type": "session.error", "message": str(exc)})
        finally:
            shutil.rmtree(private, ignore_errors=True)
        evidence.output = "\n".join(o for o in outputs if o)
        evidence.duration_ms = int((time.monotonic() - started) * 1000)
        return evidence

    def _read_turn(self, result, request: ExecutionRequest, turn: int):
        """(answer text or None, usage or None, session id or None, problem or None)."""
        label = f"agent {result.argv[0]!r}" + (f" (turn {turn})" if turn > 1 else "")
        if result.cancelled:
            return None, None, None, f"{label} was cancelled (waza is shutting down)"
        failure = None
        if result.timed_out:
            failure = f"{label} timed out after {request.timeout_seconds}s (its process group was killed)"
        elif result.returncode not in self.ok_codes:
            how = (f"was killed by signal {-result.returncode}" if result.returncode < 0
                   else f"exited with code {result.returncode}")
            failure = f"{label} {how}" + _excerpt(result.stderr_text(), "stderr")
        text = usage = sid = None
        problem = None
        stdout = result.stdout_text()
        if self.output == "text":
            text = stdout.rstrip("\r\n")
        elif result.stdout_truncated:
            problem = (f"{label} printed more than {self.max_output} bytes; its JSON cannot be read "
                       "(raise config.cli.max_output_bytes)")
        else:
            docs = _json_docs(stdout, self.output)
            if docs is None:
                problem = f"{label} did not print valid JSON" + _excerpt(stdout)
            elif self.output_path is None:
                pass  # events without output_path: the answer is the stream's last message
            else:
                value = _last(docs, self.output_path)
                if value is _MISSING or value is None:
                    problem = f"{label} printed JSON without {self._key('output_path')}" + _excerpt(stdout)
                else:
                    text = as_text(value)
                if self.usage_path is not None:
                    usage = normalize_usage(_last(docs, self.usage_path))
                if self.session_id_path is not None:
                    found = _last(docs, self.session_id_path)
                    sid = found if isinstance(found, str) and found else None
        # A failed process explains a missing answer better than the parse error would.
        return text, usage, sid, failure or problem

    def _key(self, name: str) -> str:
        return f"config.cli.{name} {self.options.get(name)!r}"

    def _read_events(self, stream: EventFormat, result, events_file: str, turn: int,
                     evidence: RunEvidence) -> str | None:
        """Map this turn's event stream into the evidence, line by line; a problem or None."""
        if self.events_from == "file":
            lines, problem = _events_from_file(events_file, self.max_output)
            if problem:
                return f"agent {result.argv[0]!r}: {problem}"
        else:
            # cut at max_output_bytes: the calls read up to the cut are kept (the cut line
            # is skipped as malformed); _read_turn reports the cut itself
            lines = _lines(result.stdout_text())
        stream.feed_lines(lines, turn, evidence)
        summary = stream.summary()
        if summary["unknown_event_types"] or summary["malformed_lines"] or summary["results_without_call"]:
            get_console().detail(f"{request_label(result)}: events {stream.name}: skipped "
                                 f"{sum(summary['unknown_event_types'].values())} event(s) of unknown types "
                                 f"{sorted(summary['unknown_event_types'])}, {summary['malformed_lines']} "
                                 f"line(s) that are not JSON events, {summary['results_without_call']} "
                                 "result(s) of no known call")
        return None


# -- agent event streams (tool calls, skills, usage) ---------------------------------


def _event_options(opts: dict, where: str) -> tuple[type[EventFormat] | None, str]:
    """(``events`` format class or None, ``events_from``), checked against ``output``."""
    events = opts.get("events")
    source = opts.get("events_from", "stdout")
    if events is None:
        if "events_from" in opts:
            raise WazaError(f"{where}.events_from is set but events is not (e.g. events: claude-stream-json)")
        return None, source
    fmt = find_registered("event_format", events)
    if fmt is None:
        known = ", ".join(registered_names("event_format")) or ", ".join(EVENT_FORMATS)
        raise WazaError(f"{where}.events: unknown format {events!r}; known: {known} (a plugin may add more; "
                        "see `waza plugins`)")
    if source == "stdout" and opts.get("output") != "jsonl":
        raise WazaError(f"{where}.events reads the event stream from stdout, which needs output: jsonl "
                        "(or set events_from: file)")
    return fmt, source


def _events_from_file(path: str, limit: int) -> tuple[list[str], str | None]:
    """The lines the agent wrote to ``{events_file}``; a missing file means no events."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        return [], None
    except OSError as exc:
        return [], f"cannot read its events file {path}: {exc.strerror or exc}"
    if len(data) > limit:
        return [], f"its events file is larger than {limit} bytes (raise config.cli.max_output_bytes)"
    return _lines(data.decode("utf-8", errors="replace")), None


def _lines(text: str) -> list[str]:
    """JSON Lines split at ``\\n`` only: ``str.splitlines`` also splits at U+2028, U+2029,
    U+0085 and form feeds, which JSON strings may hold raw (Node's ``JSON.stringify`` writes
    them so, and Claude Code, Gemini CLI, OpenCode and Copilot CLI are Node programs), and
    would cut one event into two malformed lines."""
    return text.split("\n")


def request_label(result) -> str:
    return f"agent {result.argv[0]!r}"


def agent_cwd(request: ExecutionRequest) -> str | None:
    """The workspace, or its ``inputs.workdir`` subfolder (checked by the core)."""
    if request.workdir and request.workspace_dir:
        return os.path.join(request.workspace_dir, request.workdir)
    return request.workspace_dir


def write_mcp_config(folder: str, servers) -> str:
    """The run's MCP servers as the common ``{"mcpServers": {...}}`` JSON file (the format
    of Claude Code's ``--mcp-config``, Gemini CLI and Cursor), private to the run; its path
    is the ``{mcp_config}`` placeholder and ``WAZA_MCP_CONFIG``. Empty when there are none."""
    entries = {}
    for name, server in (servers or {}).items():
        entry = {"type": "stdio", "command": server["command"], "args": list(server.get("args") or [])}
        if server.get("env"):
            entry["env"] = dict(server["env"])
        if server.get("cwd"):
            entry["cwd"] = server["cwd"]
        entries[name] = entry
    path = os.path.join(folder, "mcp.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"mcpServers": entries}, fh, indent=2)
    return path


def _display(path) -> str:

    return display_path(Path(path))


def _run(argv, cwd, env, prompt, timeout, max_output, cancel):
    # deferred: waza_core adds ~4.8 ms to importing this module
    from waza_core import run_process

    return run_process(argv, cwd=cwd, env=env, input=prompt.encode("utf-8") if prompt is not None else None,
                     timeout=timeout, max_stdout=max_output, max_stderr=STDERR_CAP, cancel=cancel)


def _json_docs(stdout: str, mode: str) -> list[Any] | None:
    if mode == "json":
        try:
            return [json.loads(stdout)]
        except (ValueError, RecursionError):  # nested past the parser: not a document we can read
            return None
    docs = []
    for line in _lines(stdout):
        line = line.strip().lstrip("\ufeff")
        if not line:
            continue
        try:
            docs.append(json.loads(line))
        except (ValueError, RecursionError):
            continue  # agents interleave log lines with their JSON events
    return docs or None


def _last(docs: list[Any], path) -> Any:
    """The value at ``path`` in the last document that has it (JSON Lines: the final event)."""
    for doc in reversed(docs):
        value = lookup(doc, path)
        if value is not _MISSING:
            return value
    return _MISSING


def _excerpt(text: str, what: str = "output") -> str:
    text = text.strip()
    if not text:
        return ""
    if len(text) > ERROR_TAIL:
        text = "..." + text[-ERROR_TAIL:]
    return f"; {what}: {text}"


@hookimpl
def waza_register_executors(register):
    register(CliExecutor)
