"""An RE2 pattern (waza's text grader) -> a JavaScript ``new RegExp(pattern)`` source
with the same matches, for ``waza interop export-suite``.

The reverse of :mod:`waza_interop._jsregex`, over the same subset: constructs whose
meaning differs are rewritten (RE2's ``.`` also matches CR and U+2028, its ``\\s`` is
ASCII only, ``\\A``/``\\z`` are JavaScript's ``^``/``$`` without the m flag,
``\\x{HHHH}`` is ``\\uHHHH``), and the rest of RE2 (flags, ``\\p``, POSIX classes,
``\\Q...\\E``, astral characters) raises :class:`_jsregex.NotRe2`.
"""

from __future__ import annotations

from waza_interop._jsregex import NotRe2

_JS_SYNTAX = set("^$\\.*+?()[]{}|/")
_CLASS_ESC = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}
_NEG = {"D": "[^0-9]", "W": "[^0-9A-Za-z_]", "S": "[^\\t\\n\\f\\r ]"}
_CTRL = {"n": "\\n", "r": "\\r", "t": "\\t", "f": "\\f", "v": "\\v", "a": "\\x07"}


def to_js(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    for ch in pattern:
        if ord(ch) > 0xFFFF:
            raise NotRe2("a character outside the Basic Multilingual Plane, which JavaScript without "
                         "the u flag sees as two code units")
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            text, i = _escape(pattern, i, in_class=False)
            out.append(text)
        elif ch == "[":
            text, i = _klass(pattern, i)
            out.append(text)
        elif ch == "(":
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
            elif pattern.startswith("(?P<", i):
                j = pattern.find(">", i)
                out.append("(?<" + pattern[i + 4:j] + ">")
                i = j + 1
            elif pattern.startswith("(?", i):
                raise NotRe2("inline flags or group syntax JavaScript does not have")
            else:
                out.append("(")
                i += 1
            depth += 1
        elif ch == ".":
            out.append("[^\\n]")
            i += 1
        elif ch == "$":
            out.append("$")
            i += 1
        elif ch == "{":
            j = pattern.find("}", i)
            body = pattern[i + 1:j] if j > 0 else ""
            lo, _, hi = body.partition(",")
            if j > 0 and lo.isdigit() and (not hi or hi.isdigit()):
                out.append(pattern[i:j + 1])
                i = j + 1
            else:
                out.append("\\{")
                i += 1
        elif ch in "}]":
            out.append("\\" + ch)
            i += 1
        elif ch == ")":
            depth -= 1
            out.append(")")
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _escape(p: str, i: int, in_class: bool) -> tuple[str, int]:
    if i + 1 >= len(p):
        raise NotRe2("a trailing backslash")
    ch = p[i + 1]
    if ch in _CLASS_ESC:
        return (_CLASS_ESC[ch] if in_class else "[" + _CLASS_ESC[ch] + "]"), i + 2
    if ch in _NEG:
        if in_class:
            raise NotRe2(f"\\{ch} inside a class")
        return _NEG[ch], i + 2
    if ch == "A" and not in_class:
        return "^", i + 2
    if ch == "z" and not in_class:
        return "$", i + 2
    if ch in "bB" and not in_class:
        return "\\" + ch, i + 2
    if ch in _CTRL:
        return _CTRL[ch], i + 2
    if ch == "x":
        if p.startswith("{", i + 2):
            j = p.find("}", i)
            code = int(p[i + 3:j], 16)
            if code > 0xFFFF or 0xD800 <= code <= 0xDFFF:
                raise NotRe2("a code point JavaScript without the u flag cannot name")
            return f"\\u{code:04X}", j + 1
        return f"\\x{p[i + 2:i + 4]}", i + 4
    if ch.isascii() and ch.isalnum():
        raise NotRe2(f"the RE2 escape \\{ch} has no JavaScript equivalent here")
    return "\\" + ch, i + 2


def _klass(p: str, i: int) -> tuple[str, int]:
    if p.startswith("[[:", i) or p.startswith("[^[:", i):
        raise NotRe2("POSIX classes ([[:alpha:]])")
    out = ["["]
    i += 1
    if i < len(p) and p[i] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(p):
        ch = p[i]
        if ch == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        if ch == "[":
            if p.startswith("[:", i):
                raise NotRe2("POSIX classes ([[:alpha:]])")
            out.append("\\[")
            i += 1
        elif ch == "\\":
            text, i = _escape(p, i, in_class=True)
            out.append(text)
        elif ch == "]":
            out.append("\\]")
            i += 1
        else:
            out.append(ch)
            i += 1
        first = False
    raise NotRe2("an unclosed character class")
