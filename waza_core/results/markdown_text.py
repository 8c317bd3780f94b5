"""Text from suites, agents and graders, made safe for markdown (and thus for GitHub).

Shared by the markdown reporter, ``waza gate --format markdown`` and ``waza compare
--format markdown``: HTML becomes entities, markdown syntax is backslash-escaped,
``|`` cannot break a table, a newline becomes ``<br>`` (our own, the only HTML that
gets through), ``@`` is followed by a zero-width space so no one is pinged, and
control characters are shown as ``\\xNN``.
"""

from __future__ import annotations

import re
from typing import Any

# (bidirectional controls too: text that reads differently from what it is, "Trojan Source")
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
