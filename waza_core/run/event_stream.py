"""Reading an agent's event stream into run evidence: the base of every event format.

An *event format* (``config.cli.events``) is a plugin registered through the
``waza_register_event_formats`` hook: a subclass of :class:`EventFormat` that maps one
decoded JSON event of one agent (Claude Code, Codex, Gemini CLI, ...) onto a small set of
calls (:meth:`StreamTurn.start_call`, :meth:`StreamTurn.finish_call`, ...). Everything the
formats share lives here, so every agent's run gets the same evidence, in the shape the
``copilot-sdk`` executor records: ``tool_calls`` (legacy argument fields), ``tool_events``
(full arguments, results, turn and sequence), ``skill_invocations`` (with how each was
detected), transcript events, usage and the session id.

Why a shared core: the field's most recurring complaint is that skill and tool evidence is
tied to one agent. Here the stream is read line by line (a log line, a malformed line or
an event of an unknown type is skipped and counted, never fatal), calls are matched by id
(so calls that overlap are paired right), a call with no result is recorded as
unfinished, and a skill counts as invoked however the agent invoked it: a skill tool call
or a read of the skill's ``SKILL.md`` through any read or shell tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from waza_core.run.execution import RunEvidence

_DECODER = json.JSONDecoder()

#: token-count spellings mapped to waza's usage keys (first found wins)
USAGE_KEYS = {
    "input_tokens": ("input_tokens", "inputTokens", "prompt_tokens", "promptTokens", "input"),
    "output_tokens": ("output_tokens", "outputTokens", "completion_tokens", "completionTokens", "output"),
    "cache_read_tokens": ("cache_read_tokens", "cacheReadTokens", "cache_read_input_tokens",
                          "cached_input_tokens", "cached_tokens", "cached"),
    "cache_write_tokens": ("cache_write_tokens", "cacheWriteTokens", "cache_creation_input_tokens"),
    "premium_requests": ("premium_requests", "premiumRequests"),
    "ai_credits": ("ai_credits", "aiCredits"),
    # what the run cost in USD, as the agent itself reports it (Claude Code: total_cost_usd)
    "cost_usd": ("cost_usd", "total_cost_usd", "costUSD", "costUsd", "cost"),
}

#: argument keys that fill waza's five legacy ``ToolCallArgs`` string fields (first found wins)
LEGACY_ARGS = {
    "path": ("path", "file_path", "filePath", "absolute_path", "notebook_path", "target_file"),
    "file_text": ("file_text", "content"),
    "command": ("command", "cmd"),
    "description": ("description",),
    "skill": ("skill", "skill_name", "name"),
}

#: a path to a SKILL.md (``/`` or Windows ``\\``, doubled when escaped; any case, as Windows
#: reads it): the folder holding it is the skill's name
SKILL_FILE_RE = re.compile(r"([^/\\\s'\"`=:]+)[/\\]+SKILL\.md(?![\w.])", re.IGNORECASE)
#: a folder name that is a pattern or a variable, not a skill (``skills/*/SKILL.md``, ``$DIR``)
_NOT_A_NAME_RE = re.compile(r"[*?\[\]{}$<>|%]|^\.{1,2}$")
#: tool names that write rather than read (a SKILL.md written is not a skill invoked)
_WRITE_TOOL_RE = re.compile(r"write|edit|create|patch|replace|file_change|delete|move|rename", re.IGNORECASE)
#: tool names that find or list files without reading them (a glob that lists SKILL.md files)
_FIND_TOOL_RE = re.compile(r"glob|grep|search|list|^ls(?:$|ToolCall)|find", re.IGNORECASE)
#: a shell command that writes a SKILL.md (redirect, tee, sed -i) rather than reading it
_SHELL_WRITE_RE = re.compile(r">\s*['\"]?\S*SKILL\.md|\bsed\s+(?:-\w+\s+)*-i", re.IGNORECASE)
#: shell commands that write, move or only name a file without reading what it says
_SHELL_NOT_READ = frozenset({"tee", "mv", "rm", "cp", "install", "dd", "Set-Content", "Out-File", "Remove-Item",
                             "ls", "find", "stat", "test", "[", "file", "du", "touch", "chmod", "chown", "mkdir",
                             "ln", "git", "realpath", "readlink", "dirname", "basename", "echo", "printf",
                             "Test-Path", "Get-ChildItem", "dir", "where"})
#: ``bash -lc '...'`` and the like: the command inside is what runs
_SHELL_WRAPPER_RE = re.compile(r"^(?:\S*/)?(?:ba|z|da|k)?sh\s+(?:-\w+\s+)*-\w*c\s+(.*)$", re.DOTALL)


def normalize_usage(raw: Any) -> dict[str, Any] | None:
    """Map common token-count spellings to waza's usage keys; ``None`` if none is there."""
    if not isinstance(raw, dict):
        return None
    out: dict[str, Any] = {}
    for key, names in USAGE_KEYS.items():
        for name in names:
            value = raw.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = value
                break
    return out or None


def add_usage(total: dict[str, Any] | None, turn: dict[str, Any] | None) -> dict[str, Any] | None:
    if turn is None:
        return total
    total = dict(total or {})
    for key, value in turn.items():
        total[key] = total.get(key, 0) + value
    return total


def text_of(content: Any) -> str:
    """A tool result or message as text: a string, content blocks, or JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        texts = [b["text"] for b in content if isinstance(b.get("text"), str)]
        if texts or not content:
            return "".join(texts)
    return json.dumps(content, ensure_ascii=False)


def _error_text(error: Any) -> str:
    """An error as one line of text: its ``message`` when it is an object."""
    if isinstance(error, dict):
        for key in ("message", "error"):
            if isinstance(error.get(key), str) and error[key]:
                return error[key]
        data = error.get("data")
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            return data["message"]
    return text_of(error)


def legacy_args(args: dict) -> dict[str, str]:
    """waza's five ``ToolCallArgs`` string fields, filled from the agent's argument names."""
    return {field: next((args[n] for n in names if isinstance(args.get(n), str)), "")
            for field, names in LEGACY_ARGS.items()}


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """Every string inside an argument value (commands may be lists, paths nested)."""
    if depth > 6:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


def skills_read_by(text: str) -> list[str]:
    """The skills whose SKILL.md this argument (a path, or a shell command) reads, in order.

    A path is read as given (``~/.claude/skills/pdf/SKILL.md``, ``./skills/pdf/SKILL.md``,
    ``C:\\Users\\me\\.github\\skills\\pdf\\SKILL.md``, quoted or not); in a shell command, a
    part that writes the file (``>``, ``tee``, ``sed -i``, ``cp``) or only names it (``ls``,
    ``find``, ``test -f``) does not count. A folder that is a pattern (``skills/*/SKILL.md``)
    or a variable (``$DIR/SKILL.md``) names no skill.
    """
    if "skill.md" not in text.lower():
        return []
    names: list[str] = []
    for part in _shell_parts(text):
        if _SHELL_WRITE_RE.search(part) or _first_word(part) in _SHELL_NOT_READ:
            continue
        for match in SKILL_FILE_RE.finditer(part):
            name = match.group(1)
            if not _NOT_A_NAME_RE.search(name) and name not in names:
                names.append(name)
    return names


def _shell_parts(text: str) -> list[str]:
    """A command split at ``;``, ``&&``, ``||``, ``|`` and new lines (a path is one part)."""
    wrapped = _SHELL_WRAPPER_RE.match(text.strip())
    if wrapped:
        text = wrapped.group(1).strip().strip("'\"")
    return [part.strip() for part in re.split(r"&&|\|\||[;|\n]", text) if part.strip()]


def _first_word(part: str) -> str:
    words = [w for w in part.split() if "=" not in w or w.startswith(("-", "/", "."))]
    while words and words[0] in ("sudo", "command", "env", "xargs", "time", "nice"):
        words = words[1:]
    return words[0].strip("'\"(") if words else ""


class _Call:
    __slots__ = ("id", "name", "args", "turn", "sequence", "result", "success", "error")

    def __init__(self, call_id: str, name: str, args: dict, turn: int, sequence: int) -> None:
        self.id, self.name, self.args, self.turn, self.sequence = call_id, name, args, turn, sequence
        self.result: str | None = None
        self.success: bool | None = None  # None: no result yet (unfinished)
        self.error: str | None = None


class StreamTurn:
    """What an :class:`EventFormat` reports while reading one turn's stream."""

    def __init__(self, reader: EventFormat, turn: int, evidence: RunEvidence) -> None:
        self.reader = reader
        self.turn = turn
        self.evidence = evidence
        self.calls: list[_Call] = []
        self.open: dict[str, _Call] = {}
        self.generated: set[str] = set()  # ids made up for calls the agent gave none

    # -- what a format calls --------------------------------------------------------

    def session(self, session_id: Any) -> None:
        if isinstance(session_id, str) and session_id:
            self.reader.session_id = session_id

    def message(self, text: Any) -> None:
        """One assistant message (already joined when the agent streams deltas)."""
        if isinstance(text, str) and text.strip():
            self.evidence.transcript.append({"type": "assistant.message", "content": text})
            self.reader.messages.append(text.strip())

    def start_call(self, call_id: Any, name: Any, args: Any = None) -> None:
        """A tool call began. A second start of an open id updates it (``item.updated``)."""
        if not isinstance(name, str) or not name:
            return
        key = self._key(call_id)
        args = args if isinstance(args, dict) else ({} if args is None else {"input": args})
        if key in self.open:
            call = self.open[key]
            call.args = args or call.args
            return
        self.reader.sequence += 1
        call = _Call(key, name, args, self.turn, self.reader.sequence)
        self.calls.append(call)
        self.open[key] = call
        event = {"type": "tool.execution_start", "tool_call_id": key, "tool_name": name}
        if args:
            event["arguments"] = args
        self.evidence.transcript.append(event)

    def finish_call(self, call_id: Any, success: bool, result: Any = None, error: Any = None,
                    name: Any = None, args: Any = None) -> None:
        """A tool call ended. A result for an id never started starts it first (when
        the format gives the name), so a stream cut at its head still counts the call."""
        key = self._key(call_id) if call_id not in (None, "") else self._oldest_without_id()
        if key not in self.open:
            if not name:
                self.reader.orphan_results += 1
                return
            self.start_call(call_id, name, args)
            if key not in self.open:
                return
        call = self.open.pop(key)
        if isinstance(args, dict) and args and not call.args:
            call.args = args
        call.success = bool(success)
        call.result = text_of(result)
        if not success:
            call.error = _error_text(error) or call.result or "tool failed"
        self.evidence.transcript.append({"type": "tool.execution_complete", "tool_call_id": key,
                                         "success": call.success, "tool_result": {"content": call.result}})
        if call.success:
            self._skill_tool(call)
            self._skill_file(call)

    def usage(self, raw: Any, *, cost_usd: Any = None) -> None:
        usage = normalize_usage(raw)
        if isinstance(cost_usd, (int, float)) and not isinstance(cost_usd, bool):
            usage = dict(usage or {}, cost_usd=cost_usd)
        if usage:
            self.reader.pending_usage = add_usage(self.reader.pending_usage, usage)

    def error(self, message: Any) -> None:
        """An error event of the agent's stream (API error, failed turn); not fatal."""
        text = _error_text(message) or "error"
        self.reader.errors.append(str(text))
        self.evidence.transcript.append({"type": "agent.error", "message": str(text)})

    def skill(self, name: str, detected_by: str, tool: str) -> None:
        """Record a skill once per run, with how it was first detected."""
        if name in self.reader.skills:
            return
        self.reader.skills.add(name)
        if self.evidence.skill_invocations is None:
            self.evidence.skill_invocations = []
        self.evidence.skill_invocations.append({"name": name, "detected_by": detected_by, "tool": tool})
        self.evidence.transcript.append({"type": "skill.invoked", "skill": {"name": name},
                                         "detected_by": detected_by})

    def unknown(self, kind: Any) -> None:
        key = str(kind)[:80]
        self.reader.unknown[key] = self.reader.unknown.get(key, 0) + 1

    # -- internals ------------------------------------------------------------------

    def _key(self, call_id: Any) -> str:
        if isinstance(call_id, str) and call_id:
            return call_id
        if call_id is None or call_id == "":
            self.reader.sequence_ids += 1
            self.generated.add(f"call-{self.reader.sequence_ids}")
            return f"call-{self.reader.sequence_ids}"
        return json.dumps(call_id, ensure_ascii=False) if not isinstance(call_id, (int, float)) else str(call_id)

    def _skill_tool(self, call: _Call) -> None:
        """A skill tool call loads its skill unless it failed (Claude answers ``Unknown
        skill: ...`` with ``is_error``); one the run cut short still asked for it."""
        skill = self.reader.skill_from_tool(call.name, call.args)
        if skill:
            self.skill(skill, "skill_tool", call.name)

    def _oldest_without_id(self) -> str:
        """A result that names no call ends the oldest open call that had no id either
        (an agent that gives no ids answers its calls in order)."""
        return next((key for key in self.open if key in self.generated), "")

    def _skill_file(self, call: _Call) -> None:
        """A successful read of a SKILL.md through any read or shell tool loads the skill
        (each SKILL.md the call read: ``cat a/SKILL.md b/SKILL.md`` loads two)."""
        viewing = call.args.get("command") == "view"  # an editor tool's read (str_replace_editor)
        if (_WRITE_TOOL_RE.search(call.name) and not viewing) or _FIND_TOOL_RE.search(call.name):
            return
        for text in _strings(call.args):
            for name in skills_read_by(text):
                self.skill(name, "skill_file_read", call.name)

    def close(self) -> None:
        """Record every call in start order; one with no result is unfinished."""
        for call in self.calls:
            if call.success is None:
                self._skill_tool(call)
        for call in self.calls:
            success = bool(call.success)
            legacy = {"id": call.id, "name": call.name, "arguments": legacy_args(call.args), "success": success}
            record: dict[str, Any] = {"turn": call.turn, "sequence": call.sequence, "tool_call_id": call.id,
                                      "tool_name": call.name, "success": success, "args": call.args}
            if call.success is not None:
                legacy["result"] = record["result"] = {"content": call.result or ""}
            if call.success is None:
                record["error"] = "no tool result (the run ended first)"
                record["unfinished"] = True
            elif not success:
                record["error"] = call.error or "tool failed"
            self.evidence.tool_calls.append(legacy)
            if self.evidence.tool_events is None:
                self.evidence.tool_events = []
            self.evidence.tool_events.append(record)


class EventFormat:
    """One agent's event stream format (``config.cli.events``); one instance per run.

    A subclass sets ``name`` and ``description``, ``agent``, ``skill_tools`` (tool name ->
    argument keys that name the skill), as class attributes or as class keywords
    (``class MyEvents(EventFormat, name="my-json", agent="my -p PROMPT", ...)``), sets up its
    own per-run state in :meth:`start` and implements :meth:`read_event`. The stream is fed
    line by line; what is not a JSON object is skipped and counted.
    """

    name: str = ""
    description: str = ""
    #: the agent's command in one line, for ``waza plugins`` and the docs
    agent: str = ""
    #: tool name -> argument keys naming the skill it loads (first found wins)
    skill_tools: dict[str, tuple[str, ...]] = {}

    def __init__(self) -> None:
        self.sequence = 0
        self.sequence_ids = 0
        self.session_id: str | None = None
        self.messages: list[str] = []
        self.pending_usage: dict[str, Any] | None = None
        self.turns = 0
        self.model_metrics: dict[str, dict] = {}
        self.skills: set[str] = set()
        self.errors: list[str] = []
        self.unknown: dict[str, int] = {}
        self.malformed = 0
        self.orphan_results = 0
        self.start()

    def __init_subclass__(cls, *, name: str | None = None, description: str | None = None, agent: str | None = None,
                          skill_tools: dict[str, tuple[str, ...]] | None = None, **kwargs: Any) -> None:
        """The format's description given as class keywords, in one place at the top."""
        super().__init_subclass__(**kwargs)
        for key, value in (("name", name), ("description", description), ("agent", agent),
                           ("skill_tools", skill_tools)):
            if value is not None:
                setattr(cls, key, value)

    # -- to implement ---------------------------------------------------------------

    def start(self) -> None:
        """Set up the format's own state of one run (called once, by ``__init__``)."""

    def read_event(self, event: dict, turn: StreamTurn) -> None:  # pragma: no cover - abstract
        """Map one decoded event; call ``turn.unknown(kind)`` for a type not understood."""
        raise NotImplementedError

    def end_turn(self, turn: StreamTurn) -> None:
        """Flush what the format buffers (streamed message deltas) at the stream's end."""

    # -- shared ---------------------------------------------------------------------

    def skill_from_tool(self, name: str, args: dict) -> str | None:
        keys = self.skill_tools.get(name)
        if not keys:
            return None
        for key in keys:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip().lstrip("/")
        return None

    def feed_lines(self, lines: Iterable[str], turn: int, evidence: RunEvidence) -> None:
        """Read one turn's stream. A line that is not a JSON object (a log line, a cut
        line) is skipped and counted; a reader that trips on an odd event skips it too."""
        state = StreamTurn(self, turn, evidence)
        for line in lines:
            events = self._events_in(line)
            for event in events:
                try:
                    self.read_event(event, state)
                except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
                    self.malformed += 1  # an event shaped unlike its type: skipped, never fatal
        self.end_turn(state)
        state.close()

    def _events_in(self, line: str) -> list[dict]:
        """The JSON objects on one line: usually one; none for a log line (counted).

        Real streams hold more than clean lines: a byte-order mark or ``\\r`` from Windows,
        a spinner or log text printed without a new line before an event (``⠋ Working\\r{...}``),
        two events on one line when two writers met. The text before an object is skipped;
        a line that holds no whole object is counted as malformed.
        """
        line = line.strip().lstrip("\ufeff").strip()
        if not line:
            return []
        events: list[dict] = []
        clean, tries, pos = True, 0, line.find("{")
        while pos >= 0:
            try:
                event, end = _DECODER.raw_decode(line, pos)
            except (ValueError, RecursionError):
                event, end = None, pos
            if not isinstance(event, dict):
                if events or tries >= 8 or line.startswith("{"):  # a cut event: never read its inner parts
                    clean = False
                    break
                tries += 1  # log text holding a brace before the event: try the next one
                pos = line.find("{", pos + 1)
                continue
            events.append(event)
            pos = end + len(line[end:]) - len(line[end:].lstrip())
            if pos >= len(line):
                break
            if line[pos] != "{":
                clean = False  # text after the event
                break
        if not events or not clean:
            self.malformed += 1  # a log line, a cut line, or text after the events
        return events

    def said(self, text: str) -> bool:
        """Whether the stream already put this answer into the transcript."""
        return bool(text) and text.strip() in self.messages

    def take_usage(self) -> dict[str, Any] | None:
        usage, self.pending_usage = self.pending_usage, None
        return usage

    def finish_usage(self, usage: dict[str, Any]) -> None:
        if self.turns:
            usage["turns"] = self.turns
        if self.model_metrics:
            usage["model_metrics"] = self.model_metrics

    def summary(self) -> dict[str, Any]:
        """What was skipped while reading (shown with ``-v``)."""
        return {"format": self.name, "unknown_event_types": dict(self.unknown), "malformed_lines": self.malformed,
                "results_without_call": self.orphan_results, "error_events": len(self.errors)}
