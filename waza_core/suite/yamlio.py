"""YAML reading for authored suite files.

Files are parsed with ruamel.yaml's safe loader (its C parser when installed, which is
several times faster), which also rejects duplicate keys. Line and column numbers are
only looked up when there is something to report: :func:`locate` re-composes the file
and walks the node tree along a JSON path.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

_local = threading.local()


def _yaml():
    y = getattr(_local, "yaml", None)
    if y is None:
        from ruamel.yaml import YAML

        y = YAML(typ="safe")
        _local.yaml = y
    return y


class YamlProblem(Exception):
    """A YAML syntax problem: ``line``/``col`` are 1-based."""

    def __init__(self, message: str, line: int | None, col: int | None):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def parse(text: str) -> Any:
    """Parse one YAML document; raise :class:`YamlProblem` with a position."""
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _yaml().load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        key = (exc.problem or "").split('"')[1] if '"' in (exc.problem or "") else "?"
        first = exc.context_mark
        where = f" (first defined on line {first.line + 1})" if first else ""
        raise YamlProblem(f"duplicate key {key!r}{where}", mark.line + 1, mark.column + 1) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(filter(None, [exc.context, exc.problem])) or "invalid YAML"
        if mark is None:
            raise YamlProblem(f"invalid YAML: {problem}", None, None) from None
        raise YamlProblem(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except YAMLError as exc:
        raise YamlProblem(f"invalid YAML: {exc}", None, None) from None


@functools.lru_cache(maxsize=8)
def _composed(text: str):
    """The node tree of ``text``, composed once for all the positions looked up in it
    (a file with fifty warnings would otherwise be parsed fifty times); never mutated."""
    return _yaml().compose(text)


def locate(text: str, path: tuple | list, key: str | None = None) -> tuple[int, int] | None:
    """1-based (line, column) of the node at ``path``; of ``key`` inside it when given.

    Falls back to the deepest node that exists, so a message always gets a position.
    """
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    try:
        node = _composed(text)
    except Exception:
        return None
    if node is None:
        return (1, 1)
    for part in path:
        nxt = None
        if isinstance(node, MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    nxt = v
                    break
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            break
        node = nxt
    if key is not None and isinstance(node, MappingNode):
        for k, _ in node.value:
            if k.value == key:
                return (k.start_mark.line + 1, k.start_mark.column + 1)
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def read_text(path: Path) -> str:
    """Read a UTF-8 file; a BOM is allowed."""
    data = path.read_bytes()
    return data.decode("utf-8-sig")


def scalar_text(text: str, path: tuple | list) -> str | None:
    """The source text of the scalar at ``path`` (``"1.10"``, not the float 1.1), or None.

    waza (Go) reads a plain scalar into a string field as written, so ``schemaVersion:
    1.10`` means ``"1.10"``; the safe loader would give the float 1.1."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    try:
        node = _composed(text)
    except Exception:
        return None
    for part in path:
        nxt = None
        if isinstance(node, MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    nxt = v
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            return None
        node = nxt
    return node.value if isinstance(node, ScalarNode) else None
