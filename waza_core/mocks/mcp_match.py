"""How an ``mcp_mocks`` server answers ``tools/call``: waza's (Go) rules, without the
protocol (that is :mod:`.mcp_server`'s job), so they are tested on their own.

Responses are tried in list order; one matches when every matcher it sets passes
(none set: a catch-all). ``match`` is equality of the whole argument object (extra
arguments fail it), ``match_regex`` an unanchored RE2 search per field (the field must
be present), ``match_schema`` JSON Schema validation. A matching ``error`` answers
with ``isError``; otherwise ``return`` is JSON-encoded into one text item, so a string
return arrives quoted (``"ok"``), as in waza.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from waza_core.gofmt import go_json, go_quote
from waza_core.regex import RegexError, compile_regex


def call(config: dict, tool_name: str, args: dict) -> tuple[str, bool, int]:
    """(text, is_error, index of the matching response or -1) for one tool call."""
    name = config.get("name", "")
    tool = (config.get("tools") or {}).get(tool_name)
    if tool is None:
        return (f"mcp mock {go_quote(name)}: unknown tool {go_quote(tool_name)}; add a fixture for this tool",
                True, -1)
    for index, response in enumerate(tool.get("responses") or []):
        if not matches(response, args):
            continue
        if response.get("error"):
            return (f"mcp mock {go_quote(name)} tool {go_quote(tool_name)} fixture error: {response['error']}",
                    True, index)
        return go_json(response.get("return")), False, index
    return (f"mcp mock {go_quote(name)}: unmatched tool call {go_quote(tool_name)} (arguments omitted); "
            "add a matching fixture response", True, -1)


def matches(response: dict, args: dict) -> bool:
    match, regex, schema = response.get("match"), response.get("match_regex"), response.get("match_schema")
    if match and go_json(match) != go_json(args):
        return False
    if regex and not _regex_match(regex, args):
        return False
    if schema and not _schema_match(schema, args):
        return False
    return True


def _regex_match(patterns: dict, args: dict) -> bool:

    for field, pattern in patterns.items():
        if field not in args:
            return False
        try:
            if compile_regex(str(pattern)).search(go_sprint(args[field])) is None:
                return False
        except RegexError:
            return False
    return True


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str):
    # deferred: jsonschema.validators adds ~233.4 ms to importing this module
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    return validator_for(schema)(schema)


def _schema_match(schema: dict, args: dict) -> bool:
    try:
        return _validator(json.dumps(schema, sort_keys=True)).is_valid(args)
    except Exception:  # an unusable schema matches nothing, as in waza
        return False


def tool_list(config: dict) -> list[dict[str, Any]]:
    """``tools/list``: sorted by name, ``inputSchema`` defaulting to ``{"type": "object"}``."""
    tools = config.get("tools") or {}
    return [{"name": name, "description": tools[name].get("description") or "",
             "inputSchema": tools[name].get("input_schema") or {"type": "object"}}
            for name in sorted(tools)]


def go_sprint(value: Any) -> str:
    """The text an ``match_regex`` pattern is matched against.

    waza (Go) uses ``fmt.Sprint``: strings as they are, ``true``/``false``, numbers in
    their shortest form (``1``, not ``1.0``). For objects and lists Go prints its own
    map syntax (``map[a:1]``) and ``1e+06`` for one million, which no fixture author
    expects; waza for Python prints integral numbers as integers and objects, lists and
    null as compact JSON instead (documented differences).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return go_json(value)
