"""Text from suites, agents and graders, made safe for where it is shown.

:func:`escape_markdown` is shared by the markdown reporter, ``waza gate --format
markdown`` and ``waza compare --format markdown``: HTML becomes entities, markdown
syntax is backslash-escaped, ``|`` cannot break a table, a newline becomes ``<br>``
(our own, the only HTML that gets through), ``@`` is followed by a zero-width space so
no one is pinged, and control characters are shown as ``\\xNN``.

:func:`terminal_text` is for the plain-text outputs of ``waza gate`` and ``waza
compare``: a task name cannot send escape sequences to a terminal or break a line.
:func:`utf8_text` and :func:`json_text` make sure what is printed can be printed at
all: a lone surrogate (a broken or hostile agent output, kept as it was by the JSON
reader) cannot be written as UTF-8.
"""

from __future__ import annotations

import re
from typing import Any

#: controls, line and paragraph separators, bidirectional marks and overrides (which can
#: make a name read backwards: "Trojan source"), lone surrogates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_MARKDOWN = re.compile(r"([\\`*_\[\]|~#])")
_MENTION = "@\u200b"


def escape_markdown(value: Any, limit: int | None = None, newline: str = "<br>") -> str:
    """Plain text that renders as itself in markdown, also inside a table cell."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if limit is not None and len(text) > limit:
        text = text[:limit].rstrip() + "…"
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "\ufffd", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # no HTML, before \-escapes
    text = _MARKDOWN.sub(r"\\\1", text).replace("@", _MENTION)
    return newline.join(line.strip() for line in text.split("\n"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def terminal_text(value: Any) -> str:
    """One line of plain text for a terminal: each character that is not printable
    (controls and escape sequences, line breaks, tabs, bidirectional overrides, lone
    surrogates) is shown as a ``\\xNN`` or ``\\uNNNN`` escape."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   for c in text)


def json_text(value: Any) -> str:
    """Indented JSON for stdout: UTF-8 as it is, or all-ASCII escapes when the value holds
    a lone surrogate (which the escapes keep exactly)."""
    # deferred: json adds ~2.0 ms to importing this module
    import json

    text = json.dumps(value, indent=2, ensure_ascii=False)
    if _SURROGATE.search(text):
        text = json.dumps(value, indent=2)
    return text
