"""Reading promptfoo and AgentV files the way they read them, with a position for every node.

promptfoo reads YAML with js-yaml (YAML 1.2 core types, anchors, aliases and merge keys
allowed; a duplicate key is an error), and accepts plain scalars such as
``openai:gpt-3.5-turbo-0613`` inside a flow sequence, which some YAML 1.1 parsers reject.
ruamel.yaml's round-trip loader reads the same documents and keeps the line and column of
each key and value, so every refusal can point inside the offending assertion. Values
JavaScript would not see as plain data (dates, binary, sets) are refused when used.
"""

from __future__ import annotations

import io
from pathlib import Path

import attrs
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from waza_core import WazaError


class SourceError(WazaError):
    """A file that cannot be read: ``file:line:col: message`` (exit 2)."""


@attrs.define
class Doc:
    """A loaded file: its data as plain Python values and the position of every node."""

    file: str  # as shown in messages
    data: object
    positions: dict = attrs.field(factory=dict)  # path tuple -> (line, col), 1-based
    key_positions: dict = attrs.field(factory=dict)

    def where(self, path: tuple = (), key: bool = False) -> str:
        """``file:line:col`` of the node at ``path`` (its key with ``key=True``), or of the
        nearest ancestor that has a position."""
        table = self.key_positions if key else self.positions
        probe = tuple(path)
        while True:
            if probe in table:
                line, col = table[probe]
                return f"{self.file}:{line}:{col}"
            if not probe:
                return f"{self.file}:1:1"
            probe = probe[:-1]
            table = self.positions


def load_yaml(path: Path, shown: str) -> Doc:
    """Read one YAML (or JSON) document with positions; a syntax error names its position."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{shown}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(io.StringIO(text)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark else shown
        raise SourceError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except YAMLError as exc:
        raise SourceError(f"{shown}: invalid YAML: {' '.join(str(exc).split())}") from None
    if len(docs) > 1:
        raise SourceError(f"{shown}: several YAML documents; promptfoo reads one")
    doc = Doc(shown, None)
    doc.data = _plain(docs[0] if docs else None, (), doc)
    return doc


def doc_from_value(value, shown: str, line: int = 1, col: int = 1) -> Doc:
    """A Doc for data that did not come from YAML (a CSV row): every node at one place."""
    doc = Doc(shown, value)
    doc.positions[()] = (line, col)
    return doc


def _plain(node, path: tuple, doc: Doc):
    if isinstance(node, CommentedMap):
        out = {}
        for key in node:
            k = key if isinstance(key, str) else _scalar(key)
            sub = path + (k,)
            try:
                kl, kc = node.lc.key(key)
                doc.key_positions[sub] = (kl + 1, kc + 1)
                vl, vc = node.lc.value(key)
                doc.positions[sub] = (vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass  # a key that came from a merge (<<): its own node has no position here
            out[k] = _plain(node[key], sub, doc)
        if path not in doc.positions and node.lc.line is not None:
            doc.positions[path] = (node.lc.line + 1, node.lc.col + 1)
        return out
    if isinstance(node, CommentedSeq):
        out = []
        for i, item in enumerate(node):
            sub = path + (i,)
            try:
                il, ic = node.lc.item(i)
                doc.positions[sub] = (il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            out.append(_plain(item, sub, doc))
        if path not in doc.positions and node.lc.line is not None:
            doc.positions[path] = (node.lc.line + 1, node.lc.col + 1)
        return out
    return _scalar(node)


class Foreign:
    """A YAML value JavaScript would not read as plain data (a date, binary, a set...)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"<{type(self.value).__name__} {self.value!r}>"


def _scalar(node):
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, str):
        return str(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return Foreign(node)
