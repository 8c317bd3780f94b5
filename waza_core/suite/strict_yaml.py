"""Strict YAML: untrusted bytes in, one plain Python document out, or a one-line error.

Why this exists: ``waza interop`` reads files written for other tools, whose YAML
parsers differ from ruamel.yaml in exactly the corners YAML is loose about. Where two
parsers could read the same bytes differently, this loader refuses instead of guessing:

* at most :data:`MAX_BYTES` (4 MiB), valid UTF-8 (one leading BOM is allowed);
* no control characters, no raw NEL/LS/PS (line breaks in YAML 1.1, ordinary text in
  YAML 1.2), no byte order mark after the first character, no noncharacters;
* exactly one document; no ``%YAML``/``%TAG`` directives;
* no anchors, no aliases, no explicit tags (not even ``!!str``), no merge keys (``<<``);
* mapping keys are strings, unique within their mapping; nesting is at most
  :data:`MAX_DEPTH` deep;
* none of the corners where ruamel.yaml reads what YAML 1.2 parsers (such as AgentV's)
  refuse: under-indented continuation lines of multi-line strings and flow collections,
  a ``#`` comment glued to the token before it, a lone ``-`` as a plain string.

Scalars resolve with the YAML 1.2 core schema as ruamel.yaml implements it, so the
caller must still check types: ``1_000`` is an int here, and ``2026-01-01`` a date.

The document is built from the parser's event stream in one pass (never composed),
which keeps alias bombs and deep recursion out and records the 1-based position of
every key and value for error messages. The C parser is used when installed.
"""

from __future__ import annotations

import io
import re
from typing import Any

import attrs

from waza_core.errors import WazaError

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"

# Everything YAML 1.2 calls printable, minus NEL, LS, PS and the BOM (see the module doc).
_BAD_CHAR = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


_BREAKS = re.compile("[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def one_line(message: str) -> str:
    """``message`` with every line break turned into a space: errors are one line."""
    return _BREAKS.sub(" ", str(message))


class StrictYamlError(WazaError):
    """The input broke a strict-YAML rule; the message is one line, with ``source:line:col``."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 source: str = "<stdin>") -> None:
        self.line, self.column, self.source = line, column, source
        where = f"{source}:{line}:{column}" if line is not None else source
        super().__init__(f"{where}: {one_line(message)}")


@attrs.frozen
class StrictDocument:
    """A loaded document with the 1-based ``(line, column)`` of every node.

    Paths are tuples of mapping keys and list indices from the root, e.g.
    ``("tests", 0, "id")``. ``marks`` holds where each value starts, ``key_marks``
    where the key of a mapping entry starts.
    """

    data: Any
    marks: dict = attrs.field(factory=dict, repr=False)
    key_marks: dict = attrs.field(factory=dict, repr=False)

    def position(self, path: tuple, key: bool = False) -> tuple[int, int] | None:
        return (self.key_marks if key else self.marks).get(tuple(path))


def decode(data: bytes, source: str = "<stdin>") -> str:
    """Check size, UTF-8 and characters; return the text without a leading BOM."""
    if len(data) > MAX_BYTES:
        raise StrictYamlError(f"input is larger than {MAX_BYTES} bytes (4 MiB)", source=source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise StrictYamlError(f"input is not valid UTF-8 (byte 0x{data[exc.start]:02X})",
                              line, col, source) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    bad = _BAD_CHAR.search(text)
    if bad:
        ch = bad.group()
        line, col = _line_col(text, bad.start())
        code = f"U+{ord(ch):04X}"
        if ch in "\x85\u2028\u2029":
            why = (f"raw line separator {code} is not allowed (YAML 1.1 and 1.2 parsers read it "
                   f"differently); write it as \\u{ord(ch):04x} inside a double-quoted string")
        elif ch == "\ufeff":
            why = "byte order mark U+FEFF is only allowed as the first character"
        elif ch in "\ufffe\uffff":
            why = f"noncharacter {code} is not allowed"
        else:
            why = (f"control character {code} is not allowed; "
                   "write it as an escape inside a double-quoted string")
        raise StrictYamlError(why, line, col, source)
    return text


def load(data: bytes, source: str = "<stdin>") -> StrictDocument:
    """Load one strict YAML document from ``data`` (see the module doc for the rules)."""
    text = decode(data, source)
    return _Builder(text, source, _pure_yaml() if _root_is_block_scalar(text) else None).build()


def _root_is_block_scalar(text: str) -> bool:
    """Whether the document's root node is a block scalar (``|`` or ``>``, after directives,
    comments, ``---`` and node properties). Its content may start at column 0, where libyaml
    (the C parser) reads a line starting with ``#`` as a comment and the YAML spec (and the pure
    parser) as content: ``>\n#,`` is ``""`` to one and ``"#,"`` to the other. Such a document
    is read with the pure parser."""
    for line in io.StringIO(text.lstrip("\ufeff"), newline=None):  # split only up to the root node
        rest = line.strip()
        if rest.startswith("---"):
            rest = rest[3:].strip()
        if not rest or rest[0] in "#%":
            continue
        while rest[:1] in ("!", "&"):  # a tag or an anchor before the node
            rest = rest.partition(" ")[2].strip()
        return rest[:1] in ("|", ">")
    return False


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


_yaml_cache: list = []


def _yaml():
    """One safe (never round-trip, never unsafe) ruamel.yaml instance; C parser if present."""
    if not _yaml_cache:
        # deferred: ruamel.yaml adds ~17.2 ms to importing this module
        from ruamel.yaml import YAML

        try:
            y = YAML(typ="safe", pure=False)
            y.parser  # noqa: B018 - fails here when the C extension is missing
        except Exception:  # pragma: no cover - depends on ruamel.yaml.clib being installed
            y = YAML(typ="safe", pure=True)
        _yaml_cache.append(y)
    return _yaml_cache[0]


def _pure_yaml():
    """The pure-Python safe parser (for the documents the C parser reads apart from the spec)."""
    if len(_yaml_cache) < 2:
        # deferred: ruamel.yaml adds ~17.2 ms to importing this module
        from ruamel.yaml import YAML

        _yaml()
        _yaml_cache.append(YAML(typ="safe", pure=True))
    return _yaml_cache[1]


_UNSET = object()


class _Frame:
    __slots__ = ("container", "path", "key", "is_map", "indent", "flow", "line")

    def __init__(self, container, path, is_map, indent, flow, line):
        self.container, self.path, self.is_map, self.key = container, path, is_map, _UNSET
        self.indent, self.flow, self.line = indent, flow, line


class _Builder:
    def __init__(self, text: str, source: str, yaml=None) -> None:
        self.text, self.source = text, source
        self.yaml = yaml or _yaml()
        self.marks: dict = {}
        self.key_marks: dict = {}
        self.stack: list[_Frame] = []
        self.root: Any = _UNSET
        self.documents = 0
        self._lines: list[str] | None = None

    def fail(self, message: str, mark=None):
        if mark is None:
            raise StrictYamlError(message, source=self.source)
        raise StrictYamlError(message, mark.line + 1, mark.column + 1, self.source)

    def build(self) -> StrictDocument:
        # deferred: ruamel.yaml.error adds ~17.8 ms to importing this module
        from ruamel.yaml.error import MarkedYAMLError, YAMLError

        try:
            for event in self.yaml.parse(self.text):
                self.on_event(event)
        except StrictYamlError:
            raise
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or "invalid YAML"
            if exc.context:
                problem += f" ({exc.context}"
                if exc.context_mark is not None and exc.context_mark is not mark:
                    problem += f" at {exc.context_mark.line + 1}:{exc.context_mark.column + 1}"
                problem += ")"
            self.fail(f"invalid YAML: {problem}", mark)
        except YAMLError as exc:
            self.fail(f"invalid YAML: {exc}")
        except (RecursionError, MemoryError):
            self.fail("invalid YAML: the document is nested too deeply")
        except Exception as exc:  # a parser corner we do not know: refuse, never crash
            self.fail(f"invalid YAML: {type(exc).__name__}: {exc}")
        if self.documents == 0:
            self.fail("expected one YAML document, found none (the input is empty or only comments)")
        return StrictDocument(self.root, self.marks, self.key_marks)

    def on_event(self, ev) -> None:
        # deferred: ruamel.yaml adds ~17.9 ms to importing this module
        from ruamel.yaml import events as E

        if isinstance(ev, E.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self.fail("several YAML documents; expected exactly one", ev.start_mark)
            if getattr(ev, "version", None):
                self.fail("the %YAML directive is not allowed", ev.start_mark)
            if getattr(ev, "tags", None):
                self.fail("the %TAG directive is not allowed", ev.start_mark)
        elif isinstance(ev, E.AliasEvent):
            self.fail(f"alias *{ev.anchor} is not allowed (anchors and aliases are rejected)", ev.start_mark)
        elif isinstance(ev, (E.ScalarEvent, E.MappingStartEvent, E.SequenceStartEvent)):
            if ev.anchor is not None:
                self.fail(f"anchor &{ev.anchor} is not allowed (anchors and aliases are rejected)",
                          ev.start_mark)
            if ev.tag is not None:
                self.fail(f"explicit tag {_short_tag(ev.tag)} is not allowed", ev.start_mark)
            if isinstance(ev, E.ScalarEvent):
                if ev.style not in ("|", ">"):
                    self.check_continuation(ev.start_mark.line, ev.end_mark.line)
                    self.check_comment_gap(ev.end_mark)
                self.add(self.scalar(ev), ev, scalar=True)
            else:
                if len(self.stack) >= MAX_DEPTH:
                    self.fail(f"the document is nested more than {MAX_DEPTH} levels deep", ev.start_mark)
                is_map = isinstance(ev, E.MappingStartEvent)
                container: Any = {} if is_map else []
                path = self.add(container, ev, scalar=False)
                flow = bool(ev.flow_style)
                indent = self.indent() if flow else ev.start_mark.column
                self.stack.append(_Frame(container, path, is_map, indent, flow, ev.start_mark.line))
        elif isinstance(ev, (E.MappingEndEvent, E.SequenceEndEvent)):
            frame = self.stack.pop()
            if frame.flow:
                self.check_continuation(frame.line, ev.start_mark.line, frame.indent)
                self.check_comment_gap(ev.end_mark)

    def check_comment_gap(self, end) -> None:
        """`"x"#c` and `]#c`: ruamel.yaml reads a comment, YAML 1.2 requires a space before `#`."""
        if self.text[end.index:end.index + 1] == "#":
            self.fail("a comment needs a space before its #", end)

    def indent(self) -> int:
        """The column that continuation lines of the current node must be indented past."""
        return self.stack[-1].indent if self.stack else -1

    def check_continuation(self, first: int, last: int, indent: int | None = None) -> None:
        """Multi-line quoted or plain strings and flow collections must stay indented past
        their parent block: libyaml and ruamel.yaml accept less, other parsers do not."""
        if last <= first:
            return
        indent = self.indent() if indent is None else indent
        if self._lines is None:
            self._lines = self.text.splitlines()
        for n in range(first + 1, min(last, len(self._lines) - 1) + 1):
            line = self._lines[n]
            if line.strip(" \t") and len(line) - len(line.lstrip(" ")) <= indent:
                raise StrictYamlError(
                    f"this line continues a multi-line string or flow collection (from line {first + 1}) "
                    f"but is not indented past column {indent + 1}; other YAML parsers end it earlier, "
                    "so indent it more", n + 1, len(line) - len(line.lstrip(" ")) + 1, self.source)

    def scalar(self, ev) -> Any:
        # deferred: ruamel.yaml.nodes adds ~21.4 ms to importing this module
        from ruamel.yaml.nodes import ScalarNode

        if ev.value == "-" and ev.style in (None, ""):  # ruamel reads `{a: -}`; YAML 1.2 does not
            self.fail("a lone - is not a plain string in YAML 1.2; quote it", ev.start_mark)
        tag = str(self.yaml.resolver.resolve(ScalarNode, ev.value, ev.implicit))
        if tag == _STR:
            return ev.value
        if tag == _MERGE:  # only a key can merge; elsewhere a plain << is text
            return _Merge()
        node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style)
        try:
            return self.yaml.constructor.construct_object(node, deep=True)
        except Exception:  # e.g. `._` resolves as a float that cannot be built
            self.fail(f"cannot read the plain scalar {_quote(ev.value)} as {_short_tag(tag)}; quote it to keep it "
                      "as text", ev.start_mark)

    def add(self, value: Any, ev, scalar: bool) -> tuple:
        mark = (ev.start_mark.line + 1, ev.start_mark.column + 1)
        frame = self.stack[-1] if self.stack else None
        if isinstance(value, _Merge) and (frame is None or not frame.is_map or frame.key is not _UNSET):
            value = "<<"
        if frame is None:
            self.root = value
            self.marks[()] = mark
            return ()
        if not frame.is_map:
            path = frame.path + (len(frame.container),)
            frame.container.append(value)
            self.marks[path] = mark
            return path
        if frame.key is _UNSET:  # this node is a key
            if isinstance(value, _Merge) or value == "<<":
                self.fail("merge key << is not allowed", ev.start_mark)
            if not scalar:
                self.fail("a mapping key must be a string, found a " +
                          ("mapping" if isinstance(value, dict) else "list"), ev.start_mark)
            if not isinstance(value, str):
                self.fail(f"a mapping key must be a string, found {describe_type(value)} "
                          f"{_quote(ev.value)}; quote it", ev.start_mark)
            if value in frame.container:
                first = self.key_marks[frame.path + (value,)]
                self.fail(f"duplicate key {_quote(value)} (first defined at {first[0]}:{first[1]})", ev.start_mark)
            frame.key = value
            frame.container[value] = None
            self.key_marks[frame.path + (value,)] = mark
            return frame.path + (value,)
        path = frame.path + (frame.key,)
        frame.container[frame.key] = value
        frame.key = _UNSET
        self.marks[path] = mark
        return path


class _Merge:
    """Stands for a plain ``<<`` key, which the resolver tags as a merge."""


#: longest quotation of a value in an error message
QUOTE_LIMIT = 60


def _quote(value: str) -> str:
    """``repr(value)``, cut to :data:`QUOTE_LIMIT` characters: errors stay one short line."""
    shown = repr(value)
    return shown if len(shown) <= QUOTE_LIMIT else shown[: QUOTE_LIMIT - 3] + "..."


def _short_tag(tag: str) -> str:
    tag = str(tag)
    if tag.startswith("tag:yaml.org,2002:"):
        return "!!" + tag[len("tag:yaml.org,2002:"):]
    return tag


def describe_type(value: Any) -> str:
    """'a string', 'an integer', ... for messages about a YAML value."""
    # deferred: datetime adds ~1.9 ms to importing this module
    import datetime

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"
