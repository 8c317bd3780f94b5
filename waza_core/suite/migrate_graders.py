"""``waza migrate``: old grader kinds and dropped grader keys, rewritten to today's form.

waza (Go) folded its ``regex`` and ``keyword`` graders into ``text`` (v0.12, March 2026).
Suites written before that still say ``type: regex`` or ``type: keyword``, and some carry
keys waza never read. This module works out the text edits that bring one YAML file (an
eval.yaml or a task file) forward with exactly the old meaning:

* ``regex`` -> ``text``: ``must_match`` -> ``regex_match``, ``must_not_match`` ->
  ``regex_not_match``. Old waza compiled each pattern with Go's ``regexp`` (RE2, case
  sensitive unless the pattern says ``(?i)``) and searched anywhere in the output, as
  ``text`` does; the score was passed checks over checks, as it is.
* ``keyword`` -> ``text``: ``must_contain`` (and its late alias ``keywords``) ->
  ``contains``, ``must_not_contain`` -> ``not_contains``. Old waza lowered both sides with
  Go's ``strings.ToLower``, which is what ``contains`` does.
* Keys old waza decoded its config without (it used mapstructure without
  ``ErrorUnused``, so they were silently ignored) are removed with a note saying the old
  run ignored them too: any key of a ``regex``/``keyword`` config other than the above, and
  ``behavior``'s ``skip_if_no_digest``.

What has no exact translation is refused, naming the file, line and column: a pattern RE2
cannot compile (old waza counted it as a failed check on every run; today the suite would
not load), a grader with no check key at all (old waza passed it; ``text`` needs a key, and an
empty list like ``must_match: []`` translates exactly, scoring 1 as before), both
``must_contain`` and ``keywords`` in one grader, a value that is not a list of strings, and a
key to delete inside a flow-style (``{...}``) mapping.

The edits are positions in the text, so comments and layout outside the changed spans stay
as they were; the caller re-parses the result and compares it with :func:`expected`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.paths import display_path
from waza_core.regex import RegexError, compile_regex
from waza_core.suite.yamlio import _walk

#: old kind -> {old config key: new config key}
RENAMES: dict[str, dict[str, str]] = {
    "regex": {"must_match": "regex_match", "must_not_match": "regex_not_match"},
    "keyword": {"must_contain": "contains", "keywords": "contains", "must_not_contain": "not_contains"},
}
#: (kind, config key) -> why removing it changes nothing
DROPPED: dict[tuple[str, str], str] = {
    ("behavior", "skip_if_no_digest"): "waza (Go) never read it (the grader always ran)",
}


@attrs.frozen
class GraderRewrite:
    """The edits of one file: (start, end, new text) spans, what changed, and notes."""

    edits: tuple[tuple[int, int, str], ...] = ()
    changes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def grader_lists(data: Any, task: bool) -> list[tuple]:
    """Paths of the grader lists of an eval (``graders``) or a task (``graders`` and each
    ``checkpoints[i].graders``)."""
    paths: list[tuple] = [("graders",)]
    if task and isinstance(data, dict) and isinstance(data.get("checkpoints"), list):
        paths += [("checkpoints", i, "graders") for i, c in enumerate(data["checkpoints"]) if isinstance(c, dict)]
    return paths


def rewrite(file: Path, text: str, data: Any, root, task: bool) -> GraderRewrite:
    """The grader edits of one parsed file (``root`` is its composed node tree)."""
    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    notes: list[str] = []
    for path in grader_lists(data, task):
        node, found = _walk(root, path)
        entries = _value_at(data, path)
        if not found or not isinstance(entries, list) or not hasattr(node, "value"):
            continue
        for i, (entry, entry_node) in enumerate(zip(entries, node.value, strict=False)):
            if isinstance(entry, dict):
                where = ".".join(str(p) for p in path) + f"[{i}]"
                _grader(file, text, entry, entry_node, where, edits, changes, notes)
    return GraderRewrite(tuple(edits), tuple(changes), tuple(notes))


def expected(data: Any, task: bool) -> Any:
    """The document as it must read after the edits (the check that nothing else moved)."""
    out = copy.deepcopy(data)
    for path in grader_lists(out, task):
        entries = _value_at(out, path)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict):
                continue
            kind = entry.get("type")
            config = entry.get("config")
            if kind in RENAMES:
                entry["type"] = "text"
                renames = RENAMES[kind]
                if isinstance(config, dict):
                    entry["config"] = {renames[k]: v for k, v in config.items() if k in renames}
            elif isinstance(config, dict):
                for key in [k for k in config if (kind, k) in DROPPED]:
                    del config[key]
    return out


def _value_at(data: Any, path: tuple) -> Any:
    for part in path:
        if isinstance(data, dict) and isinstance(part, str):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data


def _pair(mapping_node, key: str):
    for k, v in getattr(mapping_node, "value", ()):
        if getattr(k, "value", None) == key:
            return k, v
    return None, None


def _where(file: Path, node) -> str:
    return f"{display_path(file)}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def _grader(file: Path, text: str, entry: dict, node, where: str, edits: list, changes: list, notes: list) -> None:
    kind = entry.get("type")
    name = entry.get("name") or where
    config = entry.get("config")
    _, config_node = _pair(node, "config")
    if kind in RENAMES:
        _old_kind(file, text, kind, name, entry, node, config, config_node, where, edits, changes, notes)
        return
    if not isinstance(config, dict) or config_node is None:
        return
    for key in list(config):
        reason = DROPPED.get((kind, key))
        if reason is None:
            continue
        key_node, value_node = _pair(config_node, key)
        edits.append(_delete(file, text, config_node, key_node, value_node, name))
        changes.append(f"{where} ({name}): removed {kind} config key {key!r}")
        notes.append(f"grader {name!r}: {key} removed; {reason}, so results do not change")


def _old_kind(file: Path, text: str, kind: str, name: str, entry: dict, node, config: Any, config_node,
              where: str, edits: list, changes: list, notes: list) -> None:
    renames = RENAMES[kind]
    if not isinstance(config, dict) or config_node is None:
        raise WazaError(f"{_where(file, node)}: grader {name!r} (type {kind}) has no config, so old waza passed "
                        "it on every run; today's text grader needs at least one check: add one or remove the "
                        "grader, then run waza migrate again")
    if kind == "keyword" and "must_contain" in config and "keywords" in config:
        raise WazaError(f"{_where(file, config_node)}: grader {name!r} sets both must_contain and keywords; "
                        "move the keywords items into must_contain by hand, then run waza migrate again")
    if not renames.keys() & config.keys():
        raise WazaError(f"{_where(file, config_node)}: grader {name!r} (type {kind}) has no "
                        f"{' or '.join(sorted(renames))} list, so old waza passed it on every run; today's text "
                        "grader needs at least one check key: add one or remove the grader, then run waza "
                        "migrate again")
    for key, value in config.items():
        if key not in renames:
            continue
        value_node = _pair(config_node, key)[1]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise WazaError(f"{_where(file, value_node)}: grader {name!r}: {key} must be a list of strings "
                            "(old waza refused this too)")
        if kind == "regex":
            for j, pattern in enumerate(value):
                try:
                    compile_regex(pattern)
                except RegexError as exc:
                    raise WazaError(f"{_where(file, value_node.value[j])}: grader {name!r}: {key} pattern "
                                    f"{pattern!r} is not valid RE2 ({exc}); old waza counted it as a failed check "
                                    "on every run and today the suite would not load: fix or remove the "
                                    "pattern, then run waza migrate again") from None
    _, type_node = _pair(node, "type")
    edits.append((type_node.start_mark.index, type_node.end_mark.index, "text"))
    renamed = []
    for key in list(config):
        key_node, value_node = _pair(config_node, key)
        if key in renames:
            edits.append((key_node.start_mark.index, key_node.end_mark.index, renames[key]))
            renamed.append(f"{key} -> {renames[key]}")
        else:
            edits.append(_delete(file, text, config_node, key_node, value_node, name))
            renamed.append(f"removed {key}")
            notes.append(f"grader {name!r}: config key {key!r} removed; old waza's {kind} grader never read it, "
                         "so results do not change")
    changes.append(f"{where} ({name}): type {kind} -> text; " + ", ".join(renamed))


def _last_end(node) -> int:
    """Where the text of ``node`` really ends: a block collection's end mark sits at the
    next token, possibly lines further down, so take its last leaf's end instead."""
    while getattr(node, "flow_style", None) is False and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return node.end_mark.index


def _delete(file: Path, text: str, mapping_node, key_node, value_node, name: str) -> tuple[int, int, str]:
    """An edit removing one ``key: value`` entry (with its line and same-line comment) from
    a block mapping."""
    if mapping_node.flow_style:
        raise WazaError(f"{_where(file, key_node)}: grader {name!r}: its config is written in flow style "
                        f"({{...}}); remove {key_node.value!r} by hand, then run waza migrate again")
    start = text.rfind("\n", 0, key_node.start_mark.index) + 1
    if text[start:key_node.start_mark.index].strip():
        start = key_node.start_mark.index
    end = _last_end(value_node)
    newline = text.find("\n", end)
    rest = text[end:] if newline < 0 else text[end:newline]
    if not rest.strip() or rest.lstrip().startswith("#"):
        end = len(text) if newline < 0 else newline + 1
    return start, end, ""
