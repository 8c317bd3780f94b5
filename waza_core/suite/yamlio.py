"""YAML reading for authored suite files.

Files are parsed with ruamel.yaml's safe loader (its C parser when installed, which is
several times faster), which also rejects duplicate keys. Line and column numbers are
only looked up when there is something to report: :func:`locate` re-composes the file
and walks the node tree along a JSON path.

Hostile files are stopped before they cost anything (docs/safety.md lists the limits):

* :func:`read_text` reads regular files only (a FIFO would block for ever, a device
  never end) and at most :data:`MAX_BYTES`;
* nesting deeper than :data:`MAX_DEPTH` is refused *before* the document is composed:
  ruamel.yaml's C composer recurses in C and crashes the process (SIGSEGV) on a
  100,000-deep file, and its Python constructor raises RecursionError at ~1000. A
  cheap upper bound on the depth is computed from the text first; only a file whose
  bound passes the limit is walked event by event (the event parser is iterative and
  stops at the first level too many);
* aliases cannot multiply a document: the loaded document shares aliased values (a
  DAG), and its *expanded* size (every alias counted as a copy) must stay under
  :data:`MAX_EXPANDED_NODES`, its expanded depth under :data:`MAX_DEPTH` and its
  expanded text (keys and string values) under :data:`MAX_EXPANDED_CHARS`. A
  600-byte "billion laughs" file is refused in milliseconds with ``file:line:col``, and
  so is a few-MB string named a thousand times (few values, gigabytes of text).
"""

from __future__ import annotations

import errno
import functools
import math
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

from waza_core.lazy_re import LazyPattern
from waza_core.suite import fastyaml

#: the largest suite YAML file read (bytes)
MAX_BYTES = 16 * 1024 * 1024
#: the deepest nesting of mappings and lists in a suite YAML file
MAX_DEPTH = 100
#: the most values (mapping entries, list items, scalars) a document may expand to
#: once every alias is counted as a copy of what it names
MAX_EXPANDED_NODES = 100_000
#: the most characters of keys and strings a document may expand to through aliases:
#: no more than the largest file could hold without any
MAX_EXPANDED_CHARS = MAX_BYTES

_local = threading.local()


def _yaml():
    y = getattr(_local, "yaml", None)
    if y is None:
        # deferred: ruamel.yaml adds ~45.7 ms to importing this module
        from ruamel.yaml import YAML

        y = YAML(typ="safe")
        _local.yaml = y
    return y


class YamlProblem(Exception):
    """A YAML syntax problem: ``line``/``col`` are 1-based."""

    def __init__(self, message: str, line: int | None, col: int | None):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def parse(text: str, fast: bool = True) -> Any:
    """Parse one YAML document; raise :class:`YamlProblem` with a position.

    With ``fast`` (the default) a file that :mod:`waza_core.suite.fastyaml` reads exactly
    is read by it; any other file, and every error, goes through ruamel.yaml."""
    if quick_depth_bound(text) > MAX_DEPTH and depth_bound(text) > MAX_DEPTH:
        check_depth(text)  # raises YamlProblem at the first level too deep
    if fast:
        data = fastyaml.load(text)  # the common case, ~10x faster; MISS: anything it cannot read exactly
        if data is not fastyaml.MISS:
            # the fast path reads a float only from digits '.' digits: without them in the
            # text the document has none, and non_finite() need not walk it
            _local.no_float = data if _FRACTION.search(text) is None else None
            return data
    # deferred, and after the fast path: ruamel.yaml.constructor adds ~23.7 ms to importing this
    # module, and a first load whose files all take the fast path needs none of ruamel.yaml
    # (a `from` import of a module that is not a package also costs an AttributeError a call)
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    y = _yaml()
    try:
        data = y.load(text)
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
    except RecursionError:  # the depth check makes this unreachable; never a traceback anyway
        raise YamlProblem(f"the document is nested more than {MAX_DEPTH} levels deep", None, None) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (Python's guard)
        line, col = _long_number(text)
        raise YamlProblem(f"invalid YAML: a value cannot be read ({_clip(str(exc), 120)})", line, col) from None
    except Exception as exc:  # a parser corner nobody foresaw: one line, never a traceback
        raise YamlProblem(f"invalid YAML: {type(exc).__name__}: {_clip(str(exc), 120)}", None, None) from None
    finally:
        # the reused YAML object appends a DocInfo per document and never lets one go
        # (~100 bytes a file: 10 MB over a cold load of 100,000 task files)
        y.doc_infos.clear()
    if "*" in text:
        _check_aliases(text, data)
    return data


_FRACTION = LazyPattern(r"[0-9]\.[0-9]")
_BLOCK_PREFIX = LazyPattern(r"(?m)^[ ]*(?:[-?:][ \t]+)*")
_BRACKETS = LazyPattern(r"[\[\]{}]")


def quick_depth_bound(text: str) -> int:
    """A looser upper bound on the nesting depth than :func:`depth_bound`, ~10x cheaper.

    Every level of nesting is a collection of its own, and each holds at least one
    character of its own among ``[``, ``{`` (flow), ``:``, ``?`` (a block mapping's key)
    and ``-`` (a block list's item)."""
    return (text.count(":") + text.count("-") + text.count("[") + text.count("{") + text.count("?")) + 1


def depth_bound(text: str) -> int:
    """An upper bound on the nesting depth of ``text``, from the text alone.

    In block style a nested collection starts at a greater column than its parent
    at least every second level (a list may sit at its key's column), and starts
    within a line's indentation and its run of ``- ``/``? `` indicators; flow style
    adds at most the bracket nesting (counted even inside strings: the bound only
    errs upwards, which costs an exact check, never a wrong verdict).
    """
    widest = max(map(len, _BLOCK_PREFIX.findall(text)), default=0)
    level = deepest = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            level += 1
            deepest = max(deepest, level)
        elif level:
            level -= 1
    return 2 * (widest + 1) + deepest + 1


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """Walk the event stream (no composing, no recursion) and raise :class:`YamlProblem`
    at the first collection nested deeper than ``limit``. Syntax errors are left to
    the loader, which reports them with their own message."""
    # deferred: ruamel.yaml adds ~22.2 ms to importing this module
    from ruamel.yaml import events as E
    from ruamel.yaml.error import YAMLError

    depth = 0
    try:
        for ev in _yaml().parse(text):
            if isinstance(ev, (E.MappingStartEvent, E.SequenceStartEvent)):
                depth += 1
                if depth > limit:
                    mark = ev.start_mark
                    raise YamlProblem(f"the document is nested more than {limit} levels deep "
                                      f"(see docs/safety.md)", mark.line + 1, mark.column + 1)
            elif isinstance(ev, (E.MappingEndEvent, E.SequenceEndEvent)):
                depth -= 1
    except YAMLError:
        return


def _check_aliases(text: str, data: Any) -> None:
    """Refuse a document whose aliases expand it past the limits (see the module doc)."""
    size, chars, depth = _expanded(data)
    if size <= MAX_EXPANDED_NODES and chars <= MAX_EXPANDED_CHARS and depth <= MAX_DEPTH:
        return
    if size > MAX_EXPANDED_NODES:
        why = f"aliases expand the document to more than {MAX_EXPANDED_NODES} values"
    elif chars > MAX_EXPANDED_CHARS:
        why = f"aliases expand the document to more than {MAX_EXPANDED_CHARS // (1024 * 1024)} MiB of text"
    else:
        why = f"aliases nest the document more than {MAX_DEPTH} levels deep"
    line, col = _first_alias(text)
    raise YamlProblem(f"{why} (see docs/safety.md)", line, col)


def _expanded(root: Any) -> tuple[int, int, int]:
    """(values, characters, depth) of ``root`` with shared containers counted once per
    use; each distinct container is visited once, without recursion."""
    too_big = (MAX_EXPANDED_NODES + 1, MAX_EXPANDED_CHARS + 1, MAX_DEPTH + 1)
    sizes: dict[int, tuple[int, int, int]] = {}
    opened: set[int] = set()  # being visited: meeting one again is a cycle
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not isinstance(node, (dict, list)) or (not done and (id(node) in sizes or id(node) in opened)):
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not done:
            opened.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if isinstance(c, (dict, list)) and id(c) not in sizes)
            continue
        total, chars, deepest = 1 + (len(node) if isinstance(node, dict) else 0), 0, 0
        if isinstance(node, dict):
            chars += sum(len(k) if isinstance(k, str) else 1 for k in node)
        for c in children:
            if isinstance(c, (dict, list)):
                cs, cc, cd = sizes.get(id(c), too_big)  # a cycle: too big
                total += cs
                chars += cc
                deepest = max(deepest, cd)
            else:
                total += 1
                chars += len(c) if isinstance(c, str) else 1
        sizes[id(node)] = (min(total, 10 * MAX_EXPANDED_NODES), min(chars, 10 * MAX_EXPANDED_CHARS), deepest + 1)
    return sizes.get(id(root), (1, len(root) if isinstance(root, str) else 1, 0))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _long_number(text: str) -> tuple[int | None, int | None]:
    m = re.search(r"[-+]?[0-9][0-9_]{3000,}", text)
    if not m:
        return None, None
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def non_finite(data: Any, limit: int = 10, skip: tuple[tuple, ...] = ()) -> list[tuple[tuple, float]]:
    """Paths of ``.inf``/``.nan`` values (at most ``limit``), outside the ``skip`` subtrees
    (free-form data such as ``inputs.context``): no setting of a suite may be one.

    JSON Schema's ``minimum``/``maximum`` let NaN through (every comparison with NaN is
    false), so a timeout of ``.nan`` would mean "no timeout", and ``.inf`` overflows.
    """

    if data is getattr(_local, "no_float", None) or not _has_float(data):  # most documents have none
        return []
    found: list[tuple[tuple, float]] = []
    stack: list[tuple[tuple, Any]] = [((), data)]
    seen: set[int] = set()
    while stack and len(found) < limit:
        path, node = stack.pop()
        if path in skip:
            continue
        if isinstance(node, float):
            if not math.isfinite(node):
                found.append((path, node))
        elif isinstance(node, (dict, list)) and id(node) not in seen:
            seen.add(id(node))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((path + (k,), v) for k, v in items)
    return sorted(found, key=lambda f: [str(p) for p in f[0]])


def _has_float(data: Any) -> bool:
    """Whether ``data`` holds a float anywhere (each shared container looked at once)."""
    stack = [data]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict or kind is list:
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node.values() if kind is dict else node)
        elif isinstance(node, float):
            return True
        elif isinstance(node, (dict, list)):  # a subclass
            stack.append(dict(node) if isinstance(node, dict) else list(node))
    return False


def _first_alias(text: str) -> tuple[int | None, int | None]:
    # deferred: ruamel.yaml adds ~22.2 ms to importing this module
    from ruamel.yaml import events as E

    try:
        for ev in _yaml().parse(text):
            if isinstance(ev, E.AliasEvent):
                return ev.start_mark.line + 1, ev.start_mark.column + 1
    except Exception:
        pass
    return None, None


@functools.lru_cache(maxsize=8)
def _composed(text: str):
    """The node tree of ``text``, composed once for all the positions looked up in it
    (a file with fifty warnings would otherwise be parsed fifty times); never mutated."""
    return _yaml().compose(text)


def locate(text: str, path: tuple | list, key: str | None = None) -> tuple[int, int] | None:
    """1-based (line, column) of the node at ``path``; of ``key`` inside it when given.

    Falls back to the deepest node that exists, so a message always gets a position.
    """
    # deferred: ruamel.yaml.nodes adds ~25.2 ms to importing this module
    from ruamel.yaml.nodes import MappingNode

    try:
        node = _composed(text)
    except Exception:
        return None
    if node is None:
        return (1, 1)
    node, _found = _walk(node, path)
    if key is not None and isinstance(node, MappingNode):
        for k, _ in node.value:
            if k.value == key:
                return (k.start_mark.line + 1, k.start_mark.column + 1)
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _walk(node, path: tuple | list):
    """(the node at ``path``, True), or (the deepest node on the way, False)."""
    # deferred: ruamel.yaml.nodes adds ~25.6 ms to importing this module
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    for part in path:
        nxt = None
        if isinstance(node, MappingNode):
            nxt = next((v for k, v in node.value if k.value == str(part)), None)
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            return node, False
        node = nxt
    return node, True


def read_text(path: Path) -> str:
    """Read a UTF-8 file; a BOM is allowed.

    Only a regular file of at most :data:`MAX_BYTES` is read: anything else raises an
    ``OSError`` whose ``strerror`` says why (a FIFO is never opened for reading, so
    it cannot block).
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO, device or socket)"
        raise OSError(errno.EINVAL, f"it is {kind}; name a regular file", str(path))
    if st.st_size > MAX_BYTES:
        raise OSError(errno.EFBIG, f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB, the limit for a "
                                   "suite file (see docs/safety.md)", str(path))
    # sized by the stat: read(MAX_BYTES + 1) allocates (and faults in) a 16 MiB buffer for
    # every file, ~50 us of a ten-line task file; a file that grew since is read on.
    # os.open/os.read: no buffered file object for a file read in one go
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(fd, st.st_size + 1)  # fewer bytes: the end of the file (a regular file)
        while st.st_size < len(data) <= MAX_BYTES:
            more = os.read(fd, MAX_BYTES + 1 - len(data))
            if not more:
                break
            data += more
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise OSError(errno.EFBIG, f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB, the limit for a "
                                   "suite file (see docs/safety.md)", str(path))
    return data.decode("utf-8-sig")


def scalar_text(text: str, path: tuple | list) -> str | None:
    """The source text of the scalar at ``path`` (``"1.10"``, not the float 1.1), or None.

    waza (Go) reads a plain scalar into a string field as written, so ``schemaVersion:
    1.10`` means ``"1.10"``; the safe loader would give the float 1.1."""
    # deferred: ruamel.yaml.nodes adds ~27.5 ms to importing this module
    from ruamel.yaml.nodes import ScalarNode

    try:
        node = _composed(text)
    except Exception:
        return None
    if node is None:
        return None
    node, found = _walk(node, path)
    if not found:
        return None
    return node.value if isinstance(node, ScalarNode) else None
