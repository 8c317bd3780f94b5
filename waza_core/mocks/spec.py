"""The suite keys of this package, parsed and checked: ``command_mocks``,
``mcp_mocks``, ``inputs.repos``, ``inputs.workdir`` and ``inputs.environment``.

Each ``check_*`` function takes the YAML value (already of the right JSON type where
the JSON Schema says so) and returns ``[(path, message)]`` with the rules of waza (Go)
and its messages; the loader turns the path into ``file:line:col``. Each ``parse_*``
function turns a checked value into frozen specs for the run. Nothing here touches
the file system: fixtures and repositories are checked by :mod:`waza_core.suite.mocks`.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from waza_core.lazy_re import LazyPattern

Problem = tuple[tuple, str]

#: an executable name a shim can carry (waza's pattern): no slash, no leading dot
COMMAND_NAME = LazyPattern(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_DRIVE = LazyPattern(r"^[A-Za-z]:")


def has_dotdot(path: str) -> bool:
    """Any ``..`` segment, also one that would clean away (``a/../b``), split on / and \\."""
    return ".." in re.split(r"[/\\]+", path)


def is_absolute(path: str) -> bool:
    """Absolute on any platform: ``/x``, ``\\x`` or ``C:...``."""
    return path.startswith(("/", "\\")) or bool(_DRIVE.match(path))


def _bad_relative(path: str) -> bool:
    return is_absolute(path) or has_dotdot(path)


# -- command_mocks ----------------------------------------------------------------------


@attrs.frozen
class CommandResponse:
    """One ``responses[]`` entry: how to match a call and what to answer."""

    args: tuple[str, ...] | None = None
    args_regex: tuple[str, ...] | None = None
    environment: tuple[tuple[str, str], ...] = ()
    workdir: str | None = None
    stdout: bytes | None = None  # inline ``stdout`` (a non-string is JSON as Go writes it)
    fixture: str | None = None  # path relative to the eval file's folder
    stderr: str = ""
    exit_code: int = 0


@attrs.frozen
class CommandMock:
    name: str
    responses: tuple[CommandResponse, ...]
    expect_calls: int | None = None


def check_command_mocks(mocks: Any) -> list[Problem]:
    """waza's ``ValidateCommandMocks``: every problem, each at its own path."""
    # deferred: waza_core.regex adds ~0.3 ms to importing this module
    from waza_core.regex import RegexError, compile_regex

    problems: list[Problem] = []
    if not isinstance(mocks, list):
        return problems
    seen: dict[str, int] = {}
    for i, mock in enumerate(mocks):
        if not isinstance(mock, dict):
            continue
        name = mock.get("name")
        if not isinstance(name, str) or not name.strip() or name != name.strip() or not COMMAND_NAME.match(name):
            problems.append(((i, "name"), f"command_mocks[{i}].name must be an executable name containing only "
                                          "letters, numbers, '.', '_' or '-' (no path: the shim goes first on PATH)"))
            name = str(name)
        elif name.lower() in seen:
            problems.append(((i, "name"), f"command_mocks[{i}].name {name!r} is duplicated (names are compared "
                                          f"case-insensitively; also command_mocks[{seen[name.lower()]}])"))
        else:
            seen[name.lower()] = i
        responses = mock.get("responses")
        if not isinstance(responses, list) or not responses:
            problems.append(((i, "responses"), f"command_mocks[{i}] {name!r} must define at least one response"))
            responses = responses if isinstance(responses, list) else []
        expect = mock.get("expect_calls")
        if isinstance(expect, int) and not isinstance(expect, bool) and expect < 0:
            problems.append(((i, "expect_calls"), f"command_mocks[{i}] {name!r} expect_calls must not be negative"))
        for j, resp in enumerate(responses):
            if not isinstance(resp, dict):
                continue
            prefix = f"command_mocks[{i}] {name!r} responses[{j}]"
            at = (i, "responses", j)
            if (resp.get("args") is None) == (resp.get("args_regex") is None):
                problems.append((at, f"{prefix} must specify exactly one of args or args_regex"))
            for k, pattern in enumerate(resp.get("args_regex") or []):
                if isinstance(pattern, str):
                    try:
                        compile_regex(f"^(?:{pattern})$")
                    except RegexError as exc:
                        problems.append((at + ("args_regex", k), f"{prefix} args_regex[{k}] {pattern!r} is "
                                                                  f"invalid: {exc.reason}"))
            code = resp.get("exit_code", 0)
            if isinstance(code, int) and not isinstance(code, bool) and not 0 <= code <= 255:
                problems.append((at + ("exit_code",), f"{prefix} exit_code must be between 0 and 255, got {code}"))
            fixture = resp.get("fixture")
            if fixture and resp.get("stdout") is not None:
                problems.append((at + ("fixture",), f"{prefix} cannot specify both fixture and stdout"))
            if isinstance(fixture, str) and fixture and _bad_relative(fixture):
                problems.append((at + ("fixture",), f"{prefix} fixture must be a relative path without '..' segments"))
            workdir = resp.get("workdir")
            if isinstance(workdir, str) and workdir and _bad_relative(workdir):
                problems.append((at + ("workdir",), f"{prefix} workdir must be a relative path without '..' segments"))
            env = resp.get("environment")
            if isinstance(env, dict) and any(not k.strip() or "=" in k or "\0" in k for k in env):
                problems.append((at + ("environment",), f"{prefix} environment contains an invalid variable name"))
    return problems


def _stdout_bytes(value: Any) -> bytes | None:
    # deferred: waza_core.gofmt adds ~0.7 ms to importing this module
    from waza_core.gofmt import go_json

    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    return go_json(value).encode("utf-8")


def _clean_rel(path: str) -> str:
    """``filepath.ToSlash(filepath.Clean(path))`` for a relative path without ``..``."""
    parts = [p for p in re.split(r"[/\\]+", path) if p not in ("", ".")]
    return "/".join(parts) or "."


def parse_command_mocks(mocks: list[dict]) -> tuple[CommandMock, ...]:
    """Specs of a checked ``command_mocks`` list."""
    out = []
    for mock in mocks:
        responses = []
        for resp in mock["responses"]:
            args = resp.get("args")
            regex = resp.get("args_regex")
            workdir = resp.get("workdir")
            responses.append(CommandResponse(
                args=tuple(args) if args is not None else None,
                args_regex=tuple(regex) if regex is not None and args is None else None,
                environment=tuple(sorted((resp.get("environment") or {}).items())),
                workdir=_clean_rel(workdir) if workdir else None,
                stdout=_stdout_bytes(resp.get("stdout")),
                fixture=resp.get("fixture") or None,
                stderr=resp.get("stderr") or "",
                exit_code=int(resp.get("exit_code") or 0),
            ))
        out.append(CommandMock(name=mock["name"], responses=tuple(responses), expect_calls=mock.get("expect_calls")))
    return tuple(out)


def effective_command_mocks(suite_mocks: list | None, task_raw: dict) -> list | None:
    """A task's own ``command_mocks`` replace the eval's, ``[]`` included; absent, it inherits."""
    if "command_mocks" in task_raw and task_raw["command_mocks"] is not None:
        return task_raw["command_mocks"]
    return suite_mocks


# -- mcp_mocks ----------------------------------------------------------------------------


def check_mcp_mocks(mocks: Any) -> list[Problem]:
    """Names (non-empty once trimmed, unique) and each response's matchers."""
    problems: list[Problem] = []
    if not isinstance(mocks, list):
        return problems
    seen: dict[str, int] = {}
    for i, mock in enumerate(mocks):
        if not isinstance(mock, dict):
            continue
        name = mock.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(((i, "name"), f"mcp_mocks[{i}] is missing a name"))
        elif name.strip() in seen:
            problems.append(((i, "name"), f"mcp_mocks[{i}].name {name.strip()!r} is duplicated "
                                          f"(also mcp_mocks[{seen[name.strip()]}])"))
        else:
            seen[name.strip()] = i
        tools = mock.get("tools")
        if not mock.get("fixtures") and not tools:
            problems.append(((i,), f"mcp mock {str(name).strip()!r} must define at least one tool via tools or "
                                   "fixtures"))
        for tool_name, tool in (tools or {}).items() if isinstance(tools, dict) else ():
            for path, message in check_mcp_tool(tool):
                problems.append(((i, "tools", tool_name) + path,
                                 f"mcp mock {str(name).strip()!r} tool {tool_name!r} {message}"))
    return problems


def check_mcp_tool(tool: Any) -> list[Problem]:
    """One tool: at least one response, each with compilable matchers."""
    # deferred: jsonschema adds ~110.6 ms to importing this module
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    # deferred: waza_core.regex adds ~0.3 ms to importing this module
    from waza_core.regex import RegexError, compile_regex

    if not isinstance(tool, dict):
        return []
    responses = tool.get("responses")
    if not isinstance(responses, list) or not responses:
        return [(("responses",), "must define at least one response")]
    problems: list[Problem] = []
    for j, resp in enumerate(responses):
        if not isinstance(resp, dict):
            continue
        for field, pattern in (resp.get("match_regex") or {}).items() if isinstance(resp.get("match_regex"), dict) \
                else ():
            try:
                compile_regex(str(pattern))
            except RegexError as exc:
                problems.append((("responses", j, "match_regex", field),
                                 f"response {j}: match_regex field {field!r} has invalid regex {pattern!r}: "
                                 f"{exc.reason}"))
        schema = resp.get("match_schema")
        if isinstance(schema, dict) and schema:
            try:
                validator_for(schema).check_schema(schema)
            except SchemaError as exc:
                problems.append((("responses", j, "match_schema"),
                                 f"response {j}: match_schema is invalid: {exc.message}"))
    return problems


# -- inputs.repos / workdir / environment --------------------------------------------------


@attrs.frozen
class RepoSpec:
    """One ``inputs.repos`` entry (``type: worktree``)."""

    source: str  # as written; relative to the eval file's folder
    dest: str
    commit: str | None = None
    type: str = "worktree"


def check_repos(repos: Any) -> list[Problem]:
    """waza's ``GitResource.Validate``: only ``worktree``; ``source`` and a relative,
    ``..``-free ``dest`` are required."""
    problems: list[Problem] = []
    if not isinstance(repos, list):
        return problems
    dests: dict[str, int] = {}
    for i, repo in enumerate(repos):
        if not isinstance(repo, dict):
            continue
        where = f"inputs.repos[{i}]"
        kind = repo.get("type")
        if kind != "worktree":
            problems.append(((i, "type"), f"{where}: unsupported type {kind!r}; the only type is 'worktree' "
                                          "(a checkout of a local git repository)"))
        if not isinstance(repo.get("source"), str) or not repo.get("source"):
            problems.append(((i,), f"{where}: source is required (a local git repository)"))
        dest = repo.get("dest")
        if not isinstance(dest, str) or not dest:
            problems.append(((i,), f"{where}: dest is required (a folder in the workspace that does not exist "
                                   "yet)"))
        elif is_absolute(dest):
            problems.append(((i, "dest"), f"{where}: dest {dest!r} must be a relative path"))
        elif has_dotdot(dest):
            problems.append(((i, "dest"), f"{where}: dest {dest!r} must not contain '..' segments"))
        elif _clean_rel(dest) == ".":
            problems.append(((i, "dest"), f"{where}: dest {dest!r} must name a folder below the workspace, which "
                                          "already exists"))
        else:
            clean = _clean_rel(dest)
            for other, j in dests.items():
                if clean == other or clean.startswith(other + "/") or other.startswith(clean + "/"):
                    problems.append(((i, "dest"), f"{where}: dest {dest!r} overlaps inputs.repos[{j}].dest"))
            dests[clean] = i
    return problems


def parse_repos(repos: list[dict] | None) -> tuple[RepoSpec, ...]:
    return tuple(RepoSpec(source=r["source"], dest=_clean_rel(r["dest"]), commit=r.get("commit") or None)
                 for r in repos or ())


def check_workdir(workdir: Any) -> list[Problem]:
    """Relative, inside the workspace, with no ``..`` segment even one that cleans away."""
    if not isinstance(workdir, str):
        return []
    if not workdir:
        return [((), "inputs.workdir must not be empty (leave it out to run in the workspace root)")]
    if is_absolute(workdir):
        return [((), f"inputs.workdir {workdir!r} must be a relative path inside the workspace")]
    if has_dotdot(workdir):
        return [((), f"inputs.workdir {workdir!r} must not contain '..' segments")]
    return []


def check_environment(env: Any) -> list[Problem]:
    """Names a process environment can hold: non-blank, no ``=``, no NUL (values no NUL)."""
    problems: list[Problem] = []
    if not isinstance(env, dict):
        return problems
    for key, value in env.items():
        if not str(key).strip() or "=" in str(key) or "\0" in str(key):
            problems.append(((), f"inputs.environment has an invalid variable name {key!r}"))
        elif isinstance(value, str) and "\0" in value:
            problems.append(((key,), f"inputs.environment.{key} contains a NUL character"))
    return problems
