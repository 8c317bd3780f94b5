"""Load-time checks of ``command_mocks``, ``mcp_mocks`` and ``inputs.repos`` /
``workdir`` / ``environment`` (the rules are in :mod:`waza_core.mocks.spec`).

:func:`check_document` looks at one parsed file (cached with it); :func:`check_suite`
looks at what the files point to (fixtures, schema versions) on every load, since the
files it reads are not part of the cache key.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from waza_core.model import tasks_that_may_hold


def check_document(kind: str, data: dict, file: Path, text: str | None, problems) -> None:
    """Per-file rules: each problem at its key's line and column."""
    # deferred: the rules are needed only for a file parsed, or a suite with mocks (~1 ms of a warm run)
    from waza_core.mocks import spec as mock_spec

    def add(base: tuple, found: list) -> None:
        for path, message in found:
            problems.add(file, message, text, base + tuple(path))

    add(("command_mocks",), mock_spec.check_command_mocks(data.get("command_mocks")))
    if kind == "eval":
        add(("mcp_mocks",), mock_spec.check_mcp_mocks(data.get("mcp_mocks")))
        return
    inputs = data.get("inputs") if isinstance(data.get("inputs"), dict) else {}
    add(("inputs", "repos"), mock_spec.check_repos(inputs.get("repos")))
    add(("inputs", "workdir"), mock_spec.check_workdir(inputs.get("workdir")))
    add(("inputs", "environment"), mock_spec.check_environment(inputs.get("environment")))


def _version(value: Any) -> tuple[int, int] | None:
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(value)) if value is not None else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _gate(version: tuple[int, int] | None, need: tuple[int, int]) -> bool:
    """True when allowed. No ``schemaVersion`` counts as the newest (a documented choice)."""
    return version is None or version >= need


def check_suite(data: dict, eval_file: Path, tasks: list, problems) -> None:
    """Schema-version gates and fixture files, relative to the eval file's folder."""
    base = eval_file.parent
    version = _version(data.get("schemaVersion"))
    shown = data.get("schemaVersion")
    if data.get("command_mocks") is not None and not _gate(version, (1, 3)):
        problems.add(eval_file, f"command_mocks requires schemaVersion 1.3 or newer (this file says {shown!r})",
                     None, (), "command_mocks")
    if data.get("mcp_mocks") and not _gate(version, (1, 1)):
        problems.add(eval_file, f"mcp_mocks requires schemaVersion 1.1 or newer (this file says {shown!r})",
                     None, (), "mcp_mocks")
    _check_fixtures(data.get("command_mocks"), base, eval_file, problems)
    for i in tasks_that_may_hold(tasks, b"command_mocks"):
        task = tasks[i]
        mocks = task.raw.get("command_mocks")
        if mocks is None:
            continue
        if not _gate(version, (1, 3)):
            problems.add(task.file, "command_mocks requires schemaVersion 1.3 or newer in "
                                    f"{eval_file.name} (it says {shown!r})", None, (), "command_mocks")
        _check_fixtures(mocks, base, task.file, problems)
    mcp_mocks = data.get("mcp_mocks")
    for i, mock in enumerate(mcp_mocks if isinstance(mcp_mocks, list) else []):
        if isinstance(mock, dict) and isinstance(mock.get("fixtures"), str):
            try:
                load_mcp_fixtures(base, mock["fixtures"])
            except ValueError as exc:
                problems.add(eval_file, f"mcp_mocks[{i}].fixtures: {exc}", None, ("mcp_mocks", i, "fixtures"))


def _check_fixtures(mocks: Any, base: Path, file: Path, problems) -> None:
    if not isinstance(mocks, list) or not mocks:
        return  # before the imports: a suite without command mocks needs neither
    # deferred: waza_core.errors adds ~0.5 ms to importing this module; waza_core.mocks.command
    # (with tempfile, shutil, shlex, base64) is needed only by a suite with command mocks
    from waza_core.errors import WazaError
    from waza_core.mocks.command import resolve_fixture
    from waza_core.mocks import spec as mock_spec  # deferred, as in check_document

    for i, mock in enumerate(mocks):
        responses = mock.get("responses") if isinstance(mock, dict) else None
        for j, resp in enumerate(responses if isinstance(responses, list) else []):
            fixture = resp.get("fixture") if isinstance(resp, dict) else None
            if not isinstance(fixture, str) or not fixture or mock_spec.is_absolute(fixture) \
                    or mock_spec.has_dotdot(fixture):
                continue  # missing, or already reported by check_document
            try:
                resolve_fixture(base, fixture, f"command_mocks[{i}] responses[{j}]")
            except WazaError as exc:
                problems.add(file, f"{exc} (fixtures are read from the eval file's folder, "
                                   f"{base.name or base})", None, ("command_mocks", i, "responses", j, "fixture"))


#: the largest ``mcp_mocks`` fixture file (the replies a mock server gives): as a suite YAML file
MAX_FIXTURE_BYTES = 16 * 1024 * 1024
#: all the fixture files of one mock together (every run's server reads its whole configuration)
MAX_FIXTURES_BYTES = 64 * 1024 * 1024


def load_mcp_fixtures(base: Path, rel: str) -> dict[str, dict]:
    """Tools of an ``mcp_mocks[].fixtures`` folder, as waza (Go) reads it.

    Every ``*.json`` below it (folders starting with ``.`` skipped) is either a bundle
    ``{"tools": {name: tool}}`` or one tool named after the file. The folder must be
    inside the eval file's folder (symlinks resolved); problems raise ValueError.

    The files hold the replies the mock server gives, so they are read under the rule for
    files someone else wrote (docs/safety.md): a regular file only (a FIFO is refused
    unopened), at most :data:`MAX_FIXTURE_BYTES` each and :data:`MAX_FIXTURES_BYTES` in
    all, strict JSON (no ``NaN``, finite numbers, 64-bit integers, 100 levels at most),
    and every tool of the types the inline ``tools`` have (the eval schema's
    ``mcp_mock_tool``), each refusal naming the file (and its line and column when the
    JSON itself is broken).
    """
    # deferred: waza_core adds ~9.0 ms to importing this module
    from waza_core import untrusted
    from waza_core.paths import PathEscape, display_path, resolve_inside
    from waza_core.mocks import spec as mock_spec  # deferred, as in check_document

    try:
        folder = resolve_inside(base, rel)
    except PathEscape as exc:
        raise ValueError(f"{rel!r}: {exc}") from None
    if not folder.is_dir():
        raise ValueError(f"{display_path(folder)} is not a folder")
    tools: dict[str, dict] = {}
    total = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if f.endswith(".json")):
            path = Path(root) / name
            shown = display_path(path)
            try:
                resolve_inside(base, os.path.relpath(path, base))
                data = untrusted.read_bytes(path, limit=MAX_FIXTURE_BYTES, follow=True)
                total += len(data)
                if total > MAX_FIXTURES_BYTES:
                    raise ValueError(f"{shown}: with it the fixture files of this mock hold {total:,} bytes, more "
                                     f"than the {MAX_FIXTURES_BYTES:,} allowed together (see docs/safety.md)")
                doc = untrusted.loads(data, shown, positions=True)
            except PathEscape as exc:
                raise ValueError(f"{shown}: {exc}") from None
            except untrusted.UntrustedInput as exc:
                raise ValueError(_fixture_problem(str(exc).replace(str(path), shown))) from None
            except OSError as exc:
                raise ValueError(f"{shown}: {exc.strerror or exc}") from None
            bundle = doc.get("tools") if isinstance(doc, dict) else None
            found = bundle if isinstance(bundle, dict) and bundle else {path.stem: doc}
            for tool_name, tool in found.items():
                if not isinstance(tool, dict):
                    raise ValueError(f"{shown}: tool {tool_name!r} must be an object")
                for where, message in _tool_type_errors(tool):
                    raise ValueError(f"{shown}: tool {tool_name!r}{where}: {message}")
                for _, message in mock_spec.check_mcp_tool(tool):
                    raise ValueError(f"{shown}: tool {tool_name!r} {message}")
                tools[tool_name] = tool
    return tools


def _fixture_problem(message: str) -> str:
    """An :class:`~waza_core.untrusted.UntrustedInput` message, with the limit's reason."""
    if "allowed" in message:
        return f"{message} (a fixture file holds at most {MAX_FIXTURE_BYTES:,} bytes; see docs/safety.md)"
    return message


def _tool_type_errors(tool: dict) -> list[tuple[str, str]]:
    """(where, what) for each value of ``tool`` whose type the eval schema's ``mcp_mock_tool``
    refuses; unknown keys are let through (waza (Go) ignores them in fixture files)."""
    validator = _tool_validator()
    problems = []
    for error in validator.iter_errors(tool):
        if error.validator == "additionalProperties":
            continue
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append((where and f" {where.lstrip('.')}", error.message[:200]))
    return problems


@functools.lru_cache(maxsize=1)
def _tool_validator():
    # deferred: jsonschema adds ~67.6 ms to importing this module
    from jsonschema import Draft202012Validator

    # deferred: waza_core.suite.schema adds ~14.9 ms to importing this module
    from waza_core.suite.schema import load

    return Draft202012Validator({"$ref": "#/$defs/mcp_mock_tool", "$defs": load("eval")["$defs"]})
