"""``waza migrate``: bring an eval.yaml to the newest schema form, keeping every comment.

What counts as "older" (waza Go has had only additive 1.x changes, so no key changes
meaning between minors):

* ``schemaVersion`` missing, older than :data:`versions.CURRENT_EVAL`, or written as a
  YAML number (``1.2``, which YAML reads as a float) becomes ``"1.5"``. Pinning the
  version keeps the suite's meaning stable when a later waza moves the default;
* ``config.max_workers`` (the March 2026 spelling) becomes ``config.workers``;
  waza (Go) now ignores ``max_workers`` with a warning.

A scenario suite (``schemaVersion: "2.0"``) is already the newest form. A minor newer
than this waza knows (``"1.99"``) is left alone. Another major is an error (exit 2):
there is no migration path to or from it yet.

The rewrite is a minimal text edit at the positions the YAML parser reports, so
comments, quoting, indentation and key order stay byte-for-byte; the result is parsed
again and must equal the original document plus exactly the intended changes, or
nothing is written. A results file older than :data:`versions.CURRENT_RESULTS` gets only
its ``schemaVersion`` rewritten: every 1.x results field is optional and additive, as in
waza (Go), so the rest is already valid.
"""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.paths import display_path
from waza_core.safe_write import write_file
from waza_core.suite import globs, migrate_graders, versions, yamlio
from waza_core.suite.problems import Problems

EVAL_NAMES = ("eval.yaml", "eval.yml")
EVAL_KEYS = {"name", "skill", "scenario", "tasks", "tasks_from", "config", "graders", "metrics", "schemaVersion"}


@attrs.frozen
class Migration:
    """What ``waza migrate`` found for one file, and the new text when it changes."""

    file: Path
    kind: str  # "eval" or "results"
    declared: str | None
    target: str
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    new_text: str | None = None
    bom: bool = False  # the file started with a UTF-8 byte-order mark (kept on write)

    @property
    def needed(self) -> bool:
        return bool(self.changes)


def plan(path: str | os.PathLike[str]) -> Migration:
    """Work out the migration of ``path`` (an eval.yaml, its folder, or a results JSON)."""
    file = Path(path)
    if file.is_dir():
        for name in EVAL_NAMES:
            if (file / name).is_file():
                file = file / name
                break
        else:
            raise WazaError(f"{display_path(file)}: no eval.yaml in this folder")
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise WazaError(f"cannot read {display_path(file)}: {exc.strerror or exc}") from None
    if file.suffix.lower() == ".json":
        return _plan_results(file, raw)
    if file.suffix.lower() not in (".yaml", ".yml"):
        raise _unsupported(file)
    try:
        text = raw.decode("utf-8-sig")
        data = yamlio.parse(text, fast=False)
    except UnicodeDecodeError as exc:
        raise WazaError(f"{display_path(file)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yamlio.YamlProblem as exc:
        where = f":{exc.line}:{exc.col}" if exc.line else ""
        raise WazaError(f"{display_path(file)}{where}: {exc.message}") from None
    if isinstance(data, dict) and "id" in data and "inputs" in data:
        raise WazaError(f"{display_path(file)} is a task file; task files are unversioned, so there is nothing "
                        "to migrate (migrate the suite's eval.yaml)")
    if not isinstance(data, dict) or not (file.name in EVAL_NAMES or EVAL_KEYS & set(data)):
        raise _unsupported(file)
    return attrs.evolve(_plan_eval(file, text, data), bom=raw.startswith(codecs.BOM_UTF8))


def _unsupported(file: Path) -> WazaError:
    return WazaError(f"unsupported schema artifact {display_path(file)}: expected eval.yaml, eval.yml (or another "
                     "YAML eval suite), or a JSON results artifact")


def _plan_results(file: Path, raw: bytes) -> Migration:
    """Raise an older results file to :data:`versions.CURRENT_RESULTS` by rewriting only
    its ``schemaVersion`` (every 1.x field is optional and additive, so the content is
    already valid 1.8; ``is_significant`` of files up to 1.4 stays, as waza still reads it)."""
    try:
        text = raw.decode("utf-8-sig")
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WazaError(f"{display_path(file)} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not {"eval_id", "eval_name", "summary", "tasks"} & set(doc):
        raise _unsupported(file)
    try:
        version = versions.check_results(doc.get("schemaVersion"))
    except versions.VersionError as exc:
        raise WazaError(f"{display_path(file)}: {exc}") from None
    declared = doc.get("schemaVersion")
    target = versions.CURRENT_RESULTS
    if declared is not None and versions.parse(version) >= versions.parse(target):
        notes = () if version == target else (f"schemaVersion {declared!r} is newer than this waza ({target}); "
                                              "left as is",)
        return Migration(file, "results", declared, version, (), notes)
    span = _top_level_value_span(text, "schemaVersion")
    if span is not None:
        edit = (span[0], span[1], f'"{target}"')
        change = f"schemaVersion {declared!r} -> \"{target}\"" if declared else f'set schemaVersion "{target}"'
    else:
        brace = text.index("{")
        after = text[brace + 1:]
        indent = after[:len(after) - len(after.lstrip(" \t\r\n"))]
        edit = (brace + 1, brace + 1, f'{indent or ""}"schemaVersion": "{target}",' + ("" if indent else " "))
        change = f'set schemaVersion "{target}" (none was declared: it read as the current version)'
    new_text = _apply(text, [edit])
    expected = dict(doc, schemaVersion=target)
    if json.loads(new_text) != expected:
        raise WazaError(f"{display_path(file)}: the migrated text would change more than intended; nothing was "
                        "written (please report this)")
    return Migration(file, "results", declared, target, (change,), (), new_text, bom=raw.startswith(codecs.BOM_UTF8))


def _top_level_value_span(text: str, key: str) -> tuple[int, int] | None:
    """(start, end) of the value of ``key`` in the top-level JSON object of ``text``, or None."""
    depth, i, n = 0, 0, len(text)
    decoder = json.JSONDecoder()
    while i < n:
        c = text[i]
        if c == '"':
            value, end = decoder.raw_decode(text, i)
            if depth == 1 and value == key:
                j = end
                while text[j] in " \t\r\n":
                    j += 1
                if text[j] == ":":
                    j += 1
                    while text[j] in " \t\r\n":
                        j += 1
                    _, value_end = decoder.raw_decode(text, j)
                    return j, value_end
            i = end
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return None


def _plan_eval(file: Path, text: str, data: dict) -> Migration:
    # deferred: waza_core.suite.load adds ~43.0 ms to importing this module
    from waza_core.suite.load import eval_version

    problems = Problems()
    version = eval_version(file, data, text, problems)
    if version is None:
        raise WazaError(problems.items[0] if problems.items else f"{display_path(file)}: unreadable schemaVersion")
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    notes: list[str] = []
    expected = json.loads(json.dumps(data, default=str))
    root = yamlio._yaml().compose(text)
    if version.scenario:
        target = versions.SCENARIO
    elif version.declared is not None and versions.parse(version.declared) > versions.parse(versions.CURRENT_EVAL):
        target = version.declared
        notes.append(f"schemaVersion {version.declared!r} is newer than this waza ({versions.CURRENT_EVAL}); "
                     "left as is")
    else:
        target = versions.CURRENT_EVAL
        raw_value = data.get("schemaVersion")
        if version.declared is None:
            if "schemaVersion" in data:  # present but null or blank
                edits.append(_replace_value(text, root, "schemaVersion", f'"{target}"'))
            else:
                edits.append(_insert_first(text, root, f'schemaVersion: "{target}"'))
            changes.append(f'set schemaVersion "{target}" (none was declared: it read as {versions.CURRENT_EVAL})')
        elif version.declared != target or not isinstance(raw_value, str):
            edits.append(_replace_value(text, root, "schemaVersion", f'"{target}"'))
            changes.append(f'schemaVersion {version.declared!r} -> "{target}"')
        expected["schemaVersion"] = target
    cfg = data.get("config")
    if isinstance(cfg, dict) and "max_workers" in cfg:
        if "workers" in cfg:
            notes.append("config.max_workers is ignored because config.workers is set; remove it")
        else:
            key = _key_node(_value_node(root, "config"), "max_workers")
            edits.append((key.start_mark.index, key.end_mark.index, "workers"))
            changes.append("config.max_workers -> config.workers")
            expected["config"] = {("workers" if k == "max_workers" else k): v for k, v in expected["config"].items()}
    graders = migrate_graders.rewrite(file, text, data, root, task=False)
    if graders.edits:
        edits += graders.edits
        changes += graders.changes
        expected = migrate_graders.expected(expected, task=False)
    notes += graders.notes
    if not edits:
        return Migration(file, "eval", version.declared, target, (), tuple(notes))
    new_text = _apply(text, edits)
    _verify(file, new_text, expected)
    return Migration(file, "eval", version.declared, target, tuple(changes), tuple(notes), new_text)


def plan_suite(path: str | os.PathLike[str]) -> list[Migration]:
    """:func:`plan` of ``path`` and, for an eval suite, of every task file its ``tasks``
    globs load (task files are listed only when they change)."""
    first = plan(path)
    if first.kind != "eval":
        return [first]
    data = yamlio.parse(first.file.read_bytes().decode("utf-8-sig"), fast=False)
    out = [first]
    patterns = data.get("tasks") if isinstance(data, dict) and not data.get("tasks_from") else None
    seen: set[Path] = set()
    for pattern in patterns if isinstance(patterns, list) else ():
        if not isinstance(pattern, str) or os.path.isabs(pattern):
            continue  # the loader reports these; nothing to migrate
        for task_file in globs.task_files(first.file.parent, pattern).paths:
            if task_file not in seen:
                seen.add(task_file)
                m = plan_task(task_file)
                if m.needed or m.notes:
                    out.append(m)
    return out


def plan_task(file: Path) -> Migration:
    """The grader rewrite of one task file (task files are unversioned: only old grader
    kinds and dropped keys change)."""
    try:
        raw = file.read_bytes()
        text = raw.decode("utf-8-sig")
        data = yamlio.parse(text, fast=False)
    except OSError as exc:
        raise WazaError(f"cannot read {display_path(file)}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise WazaError(f"{display_path(file)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yamlio.YamlProblem as exc:
        where = f":{exc.line}:{exc.col}" if exc.line else ""
        raise WazaError(f"{display_path(file)}{where}: {exc.message}") from None
    if not isinstance(data, dict):
        return Migration(file, "task", None, "")
    root = yamlio._yaml().compose(text)
    graders = migrate_graders.rewrite(file, text, data, root, task=True)
    if not graders.edits:
        return Migration(file, "task", None, "", (), graders.notes)
    new_text = _apply(text, list(graders.edits))
    _verify(file, new_text, json.loads(json.dumps(migrate_graders.expected(data, task=True), default=str)))
    return Migration(file, "task", None, "", graders.changes, graders.notes, new_text,
                     bom=raw.startswith(codecs.BOM_UTF8))


def _key_node(mapping, key: str):
    for k, _ in getattr(mapping, "value", []):
        if getattr(k, "value", None) == key:
            return k
    raise WazaError(f"cannot locate {key!r} in the file")


def _value_node(mapping, key: str):
    for k, v in getattr(mapping, "value", []):
        if getattr(k, "value", None) == key:
            return v
    raise WazaError(f"cannot locate {key!r} in the file")


def _replace_value(text: str, root, key: str, new: str) -> tuple[int, int, str]:
    """An edit replacing the value of top-level ``key``; an empty value (``key:``) gets
    ``new`` right after the colon."""
    node = _value_node(root, key)
    start, end = node.start_mark.index, node.end_mark.index
    if start == end:  # an empty scalar: its mark may sit on the next line
        colon = text.index(":", _key_node(root, key).end_mark.index)
        return colon + 1, colon + 1, " " + new
    return start, end, new


def _insert_first(text: str, root, line: str) -> tuple[int, int, str]:
    """An edit inserting ``line`` before the first top-level key (after leading comments)."""
    first = root.value[0][0].start_mark if root is not None and root.value else None
    if first is None or getattr(root, "flow_style", False) or first.column != 0:
        raise WazaError("the top-level mapping is written in flow style ({...}); add schemaVersion by hand")
    return first.index, first.index, line + "\n"


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _verify(file: Path, new_text: str, expected: Any) -> None:
    """The edited text must parse to exactly the intended document, or nothing is written."""
    try:
        got = json.loads(json.dumps(yamlio.parse(new_text, fast=False), default=str))
    except yamlio.YamlProblem as exc:
        raise WazaError(f"{display_path(file)}: the migrated text does not parse ({exc.message}); "
                        "nothing was written") from None
    if got != expected:
        raise WazaError(f"{display_path(file)}: the migrated text would change more than intended; "
                        "nothing was written (please report this)")


def write(migration: Migration) -> None:
    """Write the migrated text atomically, keeping the file's permission bits."""

    if migration.new_text is None:
        return
    mode = migration.file.stat().st_mode & 0o7777
    data = migration.new_text.encode("utf-8")
    write_file(migration.file, codecs.BOM_UTF8 + data if migration.bom else data, mode)
