"""JavaScript ``new RegExp(pattern)`` (no flags) -> an RE2 pattern with the same matches.

promptfoo tests ``regex`` assertions with JavaScript's RegExp; waza's text grader uses
RE2. The two agree on most syntax but not on its meaning: JavaScript's ``.`` also stops
at CR, U+2028 and U+2029, its ``\\s`` includes the Unicode spaces, ``{`` and ``]`` alone
are literal characters. This module rewrites the constructs whose meaning differs into
explicit RE2 classes, keeps the ones that mean the same (``\\d``, ``\\w``, ``\\b``, ``^``,
``$`` without the m flag, groups, alternation, quantifiers), and raises
:class:`NotRe2` for the rest: lookaround, backreferences, named-group references,
``\\p``, inline flags, astral characters in the pattern, repeat counts over 1000 and
anything JavaScript would reject.

One difference remains and is documented (docs/interop.md): without the u flag,
JavaScript sees a character outside the Basic Multilingual Plane (an emoji) as two
UTF-16 code units, so ``.``, a negated class, ``\\S``, ``\\D`` or ``\\W`` can match half of
one there, where RE2 matches the whole character.
"""

from __future__ import annotations

#: JavaScript's WhiteSpace + LineTerminator (what \s matches), as RE2 class items
JS_SPACE = r"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"
DOT = r"[^\n\r\x{2028}\x{2029}]"
_CLASS_ESCAPES = {"d": "0-9", "w": "0-9A-Za-z_", "s": JS_SPACE}
_NEGATED = {"D": "[^0-9]", "W": "[^0-9A-Za-z_]", "S": f"[^{JS_SPACE}]"}
_CONTROL = {"n": "\\n", "r": "\\r", "t": "\\t", "f": "\\f", "v": "\\x{0B}"}
_SYNTAX = set("^$\\.*+?()[]{}|/")
MAX_REPEAT = 1000


class NotRe2(ValueError):
    """The pattern has no RE2 translation with the same meaning (the reason says why)."""


def translate(pattern: str) -> str:
    """The RE2 pattern that matches what ``new RegExp(pattern)`` matches."""
    return _Translator(pattern).run()


def quote(text: str) -> str:
    """``text`` as an RE2 literal."""
    out = []
    for ch in text:
        if ch in _SYNTAX or ch == "-":
            out.append("\\" + ch)
        elif ch == "\x00":
            out.append("\\x{0}")
        else:
            out.append(ch)
    return "".join(out)


class _Translator:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        self.depth = 0
        self.can_repeat = False  # the previous item can take a quantifier

    def run(self) -> str:
        for ch in self.p:
            if ord(ch) > 0xFFFF or 0xD800 <= ord(ch) <= 0xDFFF:
                raise NotRe2("it contains a character outside the Basic Multilingual Plane, which "
                             "JavaScript without the u flag matches as two code units")
        while self.i < len(self.p):
            self.step()
        if self.depth:
            raise NotRe2("a group is not closed (JavaScript rejects the pattern)")
        return "".join(self.out)

    def emit(self, text: str, repeatable: bool) -> None:
        self.out.append(text)
        self.can_repeat = repeatable

    def step(self) -> None:
        p, i = self.p, self.i
        ch = p[i]
        if ch == "\\":
            self.escape()
        elif ch == "[":
            self.char_class()
        elif ch == "(":
            self.group()
        elif ch == ")":
            if not self.depth:
                raise NotRe2("an unmatched ) (JavaScript rejects the pattern)")
            self.depth -= 1
            self.i += 1
            self.emit(")", True)
        elif ch == "|":
            self.i += 1
            self.emit("|", False)
        elif ch in "^$":
            self.i += 1
            self.emit(ch, False)
        elif ch == ".":
            self.i += 1
            self.emit(DOT, True)
        elif ch in "*+?":
            self.quantifier(ch, 1)
        elif ch == "{":
            count = self.braces()
            if count is None:
                self.i += 1
                self.emit("\\{", True)
            else:
                self.quantifier(count[0], count[1])
        else:
            self.i += 1
            self.emit(quote(ch), True)

    def quantifier(self, text: str, length: int) -> None:
        if not self.can_repeat:
            raise NotRe2(f"the quantifier {text} has nothing to repeat (JavaScript rejects the pattern)")
        self.i += length
        lazy = self.i < len(self.p) and self.p[self.i] == "?"
        if lazy:
            self.i += 1
        self.emit(text + ("?" if lazy else ""), False)
        if self.i < len(self.p) and self.p[self.i] in "*+?{" and (self.p[self.i] != "{" or self.braces()):
            raise NotRe2("a quantifier follows a quantifier (JavaScript rejects the pattern)")

    def braces(self):
        """(text, length) of a ``{n}``, ``{n,}`` or ``{n,m}`` at the cursor, else None."""
        j = self.p.find("}", self.i)
        if j < 0:
            return None
        body = self.p[self.i + 1:j]
        lo, comma, hi = body.partition(",")
        if not lo.isdigit() or not lo.isascii() or (hi and (not hi.isdigit() or not hi.isascii())):
            return None
        if int(lo) > MAX_REPEAT or (hi and int(hi) > MAX_REPEAT):
            raise NotRe2(f"the repeat count {{{body}}} is over RE2's limit of {MAX_REPEAT}")
        if hi and int(hi) < int(lo):
            raise NotRe2(f"the repeat {{{body}}} is out of order (JavaScript rejects the pattern)")
        return "{" + body + "}", j + 1 - self.i

    def group(self) -> None:
        rest = self.p[self.i:]
        if rest.startswith("(?:"):
            self.i += 3
            self.emit("(?:", False)
        elif rest.startswith(("(?=", "(?!", "(?<=", "(?<!")):
            raise NotRe2("lookaround ((?=, (?!, (?<=, (?<!) has no RE2 equivalent")
        elif rest.startswith("(?<"):
            end = rest.find(">")
            name = rest[3:end] if end > 0 else ""
            if not name or not name.replace("_", "a").isalnum() or not name.isascii() or name[0].isdigit():
                raise NotRe2("a named group whose name RE2 does not accept")
            self.i += end + 1
            self.emit(f"(?P<{name}>", False)
        elif rest.startswith("(?"):
            raise NotRe2("an inline group flag such as (?i) (JavaScript rejects the pattern)")
        else:
            self.i += 1
            self.emit("(", False)
        self.depth += 1

    def escape(self) -> None:
        p = self.p
        if self.i + 1 >= len(p):
            raise NotRe2("the pattern ends with \\ (JavaScript rejects the pattern)")
        ch = p[self.i + 1]
        self.i += 2
        if ch in _CLASS_ESCAPES:
            self.emit("[" + _CLASS_ESCAPES[ch] + "]", True)
        elif ch in _NEGATED:
            self.emit(_NEGATED[ch], True)
        elif ch in "bB":
            self.emit("\\" + ch, False)
        else:
            self.emit(self.char_escape(ch), True)

    def char_escape(self, ch: str) -> str:
        """One escaped character (outside or inside a class) as RE2 text."""
        if ch in _CONTROL:
            return _CONTROL[ch]
        if ch == "0" and not (self.i < len(self.p) and self.p[self.i].isdigit()):
            return "\\x{0}"
        if ch.isdigit():
            raise NotRe2("a backreference (\\1) or octal escape has no RE2 equivalent")
        if ch == "x":
            return self.hex_escape(2)
        if ch == "u":
            return self.hex_escape(4)
        if ch == "c":
            nxt = self.p[self.i] if self.i < len(self.p) else ""
            if nxt.isascii() and nxt.isalpha():
                self.i += 1
                return f"\\x{{{ord(nxt) % 32:X}}}"
            raise NotRe2("\\c without a letter")
        if ch == "k":
            raise NotRe2("a named backreference (\\k<name>) has no RE2 equivalent")
        if ch.isascii() and ch.isalnum():
            raise NotRe2(f"the escape \\{ch} means a literal {ch!r} only in JavaScript's legacy mode")
        return quote(ch) if ch in _SYNTAX or ch == "-" else ch

    def hex_escape(self, n: int) -> str:
        digits = self.p[self.i:self.i + n]
        if len(digits) != n or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise NotRe2(f"\\{'x' if n == 2 else 'u'} without {n} hex digits means a literal letter in "
                         "JavaScript's legacy mode")
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF:
            raise NotRe2("a surrogate code unit escape has no RE2 equivalent")
        self.i += n
        return f"\\x{{{code:X}}}"

    def char_class(self) -> None:
        p = self.p
        self.i += 1
        negated = self.i < len(p) and p[self.i] == "^"
        if negated:
            self.i += 1
        items: list[str] = []
        pending: list[tuple[str, int | None]] = []  # (rendered item, code point or None for a set)
        while True:
            if self.i >= len(p):
                raise NotRe2("a character class is not closed (JavaScript rejects the pattern)")
            ch = p[self.i]
            if ch == "]":
                self.i += 1
                break
            item = self.class_atom()
            if (self.i + 1 < len(p) and p[self.i] == "-" and p[self.i + 1] != "]"
                    and item[1] is not None):
                self.i += 1
                hi = self.class_atom()
                if hi[1] is None:
                    raise NotRe2("a range that ends in a class escape (\\d, \\w, \\s)")
                if hi[1] < item[1]:
                    raise NotRe2("a character range out of order (JavaScript rejects the pattern)")
                pending.append((f"{item[0]}-{hi[0]}", None))
                continue
            pending.append(item)
        items = [text for text, _ in pending]
        if not items:
            raise NotRe2("an empty class ([] or [^]) has no RE2 equivalent")
        self.emit("[" + ("^" if negated else "") + "".join(items) + "]", True)

    def class_atom(self) -> tuple[str, int | None]:
        p = self.p
        ch = p[self.i]
        if ch != "\\":
            self.i += 1
            rendered = "\\" + ch if ch in "[]\\^-" else ("\\x{0}" if ch == "\x00" else ch)
            return rendered, ord(ch)
        if self.i + 1 >= len(p):
            raise NotRe2("the pattern ends with \\ (JavaScript rejects the pattern)")
        esc = p[self.i + 1]
        self.i += 2
        if esc in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[esc], None
        if esc in _NEGATED:
            raise NotRe2(f"\\{esc} inside a character class has no exact RE2 translation here")
        if esc == "b":
            return "\\x{8}", 8
        if esc == "B":
            raise NotRe2("\\B inside a class means a literal B only in JavaScript's legacy mode")
        text = self.char_escape(esc)
        code = _code_of(text, esc)
        return text, code


def _code_of(text: str, esc: str) -> int | None:
    if text.startswith("\\x{"):
        return int(text[3:-1], 16)
    if esc in _CONTROL:
        return {"n": 10, "r": 13, "t": 9, "f": 12, "v": 11}[esc]
    raw = text[1:] if text.startswith("\\") else text
    return ord(raw) if len(raw) == 1 else None
