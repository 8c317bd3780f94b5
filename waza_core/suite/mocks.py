"""Load-time checks of ``command_mocks``, ``mcp_mocks`` and ``inputs.repos`` /
``workdir`` / ``environment`` (the rules are in :mod:`waza_core.mocks.spec`).

:func:`check_document` looks at one parsed file (cached with it); :func:`check_suite`
looks at what the files point to (fixtures, schema versions) on every load, since the
files it reads are not part of the cache key.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from waza_core.mocks import spec as mock_spec


def check_document(kind: str, data: dict, file: Path, text: str | None, problems) -> None:
    """Per-file rules: each problem at its key's line and column."""
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
    for task in tasks:
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
    from waza_core.errors import WazaError
    from waza_core.mocks.command import resolve_fixture

    for i, mock in enumerate(mocks if isinstance(mocks, list) else []):
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


def load_mcp_fixtures(base: Path, rel: str) -> dict[str, dict]:
    """Tools of an ``mcp_mocks[].fixtures`` folder, as waza (Go) reads it.

    Every ``*.json`` below it (folders starting with ``.`` skipped) is either a bundle
    ``{"tools": {name: tool}}`` or one tool named after the file. The folder must be
    inside the eval file's folder (symlinks resolved); problems raise ValueError.
    """
    from waza_core.paths import PathEscape, display_path, resolve_inside

    try:
        folder = resolve_inside(base, rel)
    except PathEscape as exc:
        raise ValueError(f"{rel!r}: {exc}") from None
    if not folder.is_dir():
        raise ValueError(f"{display_path(folder)} is not a folder")
    tools: dict[str, dict] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if f.endswith(".json")):
            path = Path(root) / name
            try:
                resolve_inside(base, os.path.relpath(path, base))
                doc = json.loads(path.read_text("utf-8"))
            except PathEscape as exc:
                raise ValueError(f"{display_path(path)}: {exc}") from None
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise ValueError(f"{display_path(path)}: {exc}") from None
            bundle = doc.get("tools") if isinstance(doc, dict) else None
            found = bundle if isinstance(bundle, dict) and bundle else {path.stem: doc}
            for tool_name, tool in found.items():
                if not isinstance(tool, dict):
                    raise ValueError(f"{display_path(path)}: tool {tool_name!r} must be an object")
                for _, message in mock_spec.check_mcp_tool(tool):
                    raise ValueError(f"{display_path(path)}: tool {tool_name!r} {message}")
                tools[tool_name] = tool
    return tools
