"""Prompt templates: the subset of Go ``text/template`` that waza (Go) suites use.

waza (Go) renders ``tasks_from`` prompts with ``text/template`` and
``missingkey=error`` over this context (``internal/template/template.go``)::

    {{.Vars.name}}   a variable: a tasks_from column, else an eval ``inputs`` entry
    {{.TaskName}}    the row's display name
    {{.JobID}}       "run-<unix seconds>"
    {{.Timestamp}}   the load time, RFC 3339
    {{.Iteration}} {{.Attempt}}   always 0 for tasks_from rows

This module implements exactly the parts of the template language that make sense
over that context, and refuses the rest with a clear error instead of guessing:

* actions holding one field chain (``.Vars.x``, ``.TaskName``...), or
  ``index .Vars "name"`` for names that are not identifiers (``"first-name"``);
* comments ``{{/* ... */}}``; trim markers ``{{-`` and ``-}}`` (a space must
  separate them from the action, as in Go);
* a text without ``{{`` is returned unchanged (no parsing at all).

A missing variable or an unknown field is an error, as with ``missingkey=error``;
``if``/``range``/``with``, pipelines, functions and variables are errors too
("not supported"). Every error names the line and column inside the template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

_SPACE = " \t\r\n"
_IDENT = re.compile(r"[^\W\d]\w*")
_FIELDS = {"JobID": "job_id", "TaskName": "task_name", "Iteration": "iteration", "Attempt": "attempt",
           "Timestamp": "timestamp", "Vars": "vars"}
_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"}


class TemplateError(ValueError):
    """The template cannot be rendered; the message names the line and column."""


@attrs.frozen
class Context:
    """What a template can read (the Go ``template.Context``)."""

    vars: Mapping[str, str] = attrs.field(factory=dict)
    task_name: str = ""
    job_id: str = ""
    timestamp: str = ""
    iteration: int = 0
    attempt: int = 0


#: ``{{ .Field }}`` / ``{{ .Vars.name }}`` with no trim marker and nothing else: the common case
_SIMPLE = re.compile(r"\{\{[ \t]*\.(JobID|TaskName|Iteration|Attempt|Timestamp|Vars\.([^\W\d]\w*))[ \t]*\}\}")


class TooLong(TemplateError):
    """The rendered text would be longer than the limit given to :func:`render`."""


def render(text: str, ctx: Context, limit: int | None = None) -> str:
    """``text`` with every action replaced; :class:`TemplateError` when one cannot be,
    :class:`TooLong` when the result would have more than ``limit`` characters (checked
    before the result is made: a variable repeated a thousand times costs nothing)."""
    if "{{" not in text:
        return text
    fast = _render_simple(text, ctx, limit)
    if fast is not None:
        return fast
    return _render(text, ctx, limit)


def _too_long(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise TooLong(f"the rendered text would be more than {limit:,} characters (a large variable "
                      "repeated too often?)")


def _render_simple(text: str, ctx: Context, limit: int | None = None) -> str | None:
    """The result when every action is a plain field (one regex pass), else None."""
    parts = _SIMPLE.split(text)
    # split gives: literal, field, var-or-None, literal, field, var, ..., literal
    literals = parts[::3]
    if any("{{" in lit for lit in literals):
        return None  # another kind of action (or an error): the full scanner says which
    out = [literals[0]]
    for i in range(1, len(parts), 3):
        field, var = parts[i], parts[i + 1]
        if var is not None:
            if var not in ctx.vars:
                return None  # let the full scanner report it with its position
            out.append(ctx.vars[var])
        else:
            out.append(str(getattr(ctx, _FIELDS[field])))
        out.append(parts[i + 2])
    _too_long(sum(map(len, out)), limit)
    return "".join(out)


def _render(text: str, ctx: Context, limit: int | None = None) -> str:
    out: list[str] = []
    pos = 0
    size = 0
    trim_next = False
    while True:
        start = text.find("{{", pos)
        chunk = text[pos:] if start < 0 else text[pos:start]
        if trim_next:
            chunk = chunk.lstrip(_SPACE)
        if start < 0:
            _too_long(size + len(chunk), limit)
            out.append(chunk)
            return "".join(out)
        body_start = start + 2
        if text[body_start:body_start + 1] == "-" and text[body_start + 1:body_start + 2] in tuple(_SPACE):
            chunk = chunk.rstrip(_SPACE)
            body_start += 2
        out.append(chunk)
        end = _action_end(text, start, body_start)
        body = text[body_start:end]
        trim_next = len(body) >= 2 and body[-1] == "-" and body[-2] in _SPACE
        if trim_next:
            body = body[:-2]
        out.append(_evaluate(body.strip(_SPACE), ctx, text, start))
        size += len(chunk) + len(out[-1])
        _too_long(size, limit)
        pos = end + 2


def _action_end(text: str, start: int, i: int) -> int:
    """Index of the ``}}`` closing the action opened at ``start`` (body from ``i``),
    skipping quoted strings and comments. Actions may span lines, as in Go >= 1.16."""
    n = len(text)
    if text.startswith("/*", i):
        close = text.find("*/", i + 2)
        if close < 0:
            raise TemplateError(f"{_where(text, start)}: unclosed comment")
        j = close + 2
        if text.startswith("}}", j):
            return j
        if text[j:j + 1] in tuple(_SPACE) and text.startswith("-}}", j + 1):
            return j + 2
        raise TemplateError(f"{_where(text, start)}: comment ends before closing delimiter")
    while i < n:
        if text[i] in "\"`'":
            close = _string_end(text, i)
            if close < 0:
                raise TemplateError(f"{_where(text, i)}: unterminated quoted string")
            i = close + 1
            continue
        if text.startswith("}}", i):
            return i
        i += 1
    raise TemplateError(f"{_where(text, start)}: unclosed action (no closing }}}})")


def _string_end(text: str, i: int) -> int:
    quote = text[i]
    j = i + 1
    while j < len(text):
        if text[j] == "\\" and quote != "`":
            j += 2
            continue
        if text[j] == quote:
            return j
        if text[j] == "\n" and quote != "`":
            return -1
        j += 1
    return -1


def _evaluate(body: str, ctx: Context, text: str, start: int) -> str:
    where = _where(text, start)
    if body.startswith("/*"):
        return ""
    if not body:
        raise TemplateError(f"{where}: missing value for command (empty action)")
    words = _split(body, where)
    head = words[0]
    if head == "index":
        return _index(words, ctx, where)
    if head.startswith("$"):
        raise TemplateError(f"{where}: template variables ({head}) are not supported")
    if head in _KEYWORDS:
        raise TemplateError(f"{where}: {{{{{head}}}}} is not supported: waza for Python templates have no "
                            "control structures; put the value in a tasks_from column instead")
    if len(words) > 1 or "|" in body:
        raise TemplateError(f"{where}: {{{{{body}}}}} is not supported: waza for Python templates take one "
                            "field (.Vars.name, .TaskName, .JobID, .Timestamp, .Iteration, .Attempt) or "
                            "index .Vars \"name\"")
    if head[:1] in "\"`'-+0123456789" or head in ("true", "false", "nil"):
        raise TemplateError(f"{where}: constants are not supported in templates; write the text directly")
    if not head.startswith("."):
        hint = f" (did you mean {{{{.Vars.{head}}}}}?)" if _IDENT.fullmatch(head) else ""
        raise TemplateError(f"{where}: function {head!r} not defined{hint}")
    return _field(head, ctx, where)


def _split(body: str, where: str) -> list[str]:
    words, i, n = [], 0, len(body)
    while i < n:
        if body[i] in _SPACE:
            i += 1
            continue
        if body[i] in "\"`":
            close = _string_end(body, i)
            if close < 0:
                raise TemplateError(f"{where}: unterminated quoted string")
            words.append(body[i:close + 1])
            i = close + 1
            continue
        j = i
        while j < n and body[j] not in _SPACE:
            j += 1
        words.append(body[i:j])
        i = j
    return words


def _field(chain: str, ctx: Context, where: str) -> str:
    if chain == ".":
        raise TemplateError(f"{where}: {{{{.}}}} prints the whole context; name a field such as .Vars.name")
    names = chain[1:].split(".")
    if not all(_IDENT.fullmatch(n) for n in names):
        raise TemplateError(f"{where}: bad field name in {chain!r}; a variable whose name is not an "
                            f"identifier is read with index .Vars \"name\"")
    first, rest = names[0], names[1:]
    if first not in _FIELDS:
        raise TemplateError(f"{where}: can't evaluate field {first} (known fields: "
                            f"{', '.join(sorted(_FIELDS))})")
    value = getattr(ctx, _FIELDS[first])
    if first == "Vars":
        if not rest:
            raise TemplateError(f"{where}: .Vars is a map; name a variable: .Vars.name")
        value = _lookup(ctx.vars, rest[0], where)
        rest = rest[1:]
    if rest:
        raise TemplateError(f"{where}: can't evaluate field {rest[0]} in type "
                            f"{'int' if isinstance(value, int) else 'string'}")
    return str(value)


def _index(words: list[str], ctx: Context, where: str) -> str:
    if len(words) != 3 or words[1] != ".Vars" or words[2][:1] not in "\"`":
        raise TemplateError(f"{where}: index is supported only as index .Vars \"name\"")
    raw = words[2]
    key = raw[1:-1] if raw[0] == "`" else _unquote(raw, where)
    return _lookup(ctx.vars, key, where)


def _unquote(raw: str, where: str) -> str:
    # deferred: json adds ~2.6 ms to importing this module
    import json

    try:
        return json.loads(raw)
    except ValueError:
        raise TemplateError(f"{where}: cannot read the string {raw}") from None


def _lookup(variables: Mapping[str, str], key: str, where: str) -> str:
    if key not in variables:
        known = ", ".join(sorted(variables)) or "none"
        raise TemplateError(f"{where}: map has no entry for key {key!r} (variables: {known})")
    return variables[key]


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"template line {line} col {col}"
