"""Regular expressions with waza's semantics: RE2, as Go's ``regexp`` package has them.

Every regex a suite gives (text and file graders, command-mock ``args_regex``, MCP
``match_regex`` ...) goes through :func:`compile_regex`, so patterns mean in waza for
Python what they mean in waza (Go): ``\\pL``, ``(?i)``, ``[[:digit:]]`` and ``\\z`` work,
lookarounds and backreferences are rejected, and matching takes linear time, so no
pattern can backtrack for ever whatever text it meets.

The binding is google-re2 (imported on first use). One difference between RE2 (C++) and
Go's ``regexp`` is closed here: ``\\C`` (any single byte) is rejected, as Go rejects it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Regex", "RegexError", "compile_regex"]


class RegexError(ValueError):
    """A pattern that RE2 (and so waza) does not accept; the message says why."""

    def __init__(self, pattern: str, reason: str):
        self.pattern = pattern
        self.reason = reason
        super().__init__(f"invalid regular expression {pattern!r}: {reason}")


#: hints for the syntax people bring from Python's ``re`` or PCRE
_HINTS = (
    ("invalid perl operator: (?=", "lookahead is not supported (waza uses RE2 syntax)"),
    ("invalid perl operator: (?!", "negative lookahead is not supported (waza uses RE2 syntax)"),
    ("invalid perl operator: (?<=", "lookbehind is not supported (waza uses RE2 syntax)"),
    ("invalid perl operator: (?<!", "negative lookbehind is not supported (waza uses RE2 syntax)"),
    ("invalid perl operator: (?#", "inline comments are not supported (waza uses RE2 syntax)"),
    ("invalid perl operator: (?P=", "backreferences are not supported (waza uses RE2 syntax)"),
    ("invalid escape sequence: \\Z", "write \\z for the end of the text (RE2 syntax)"),
    ("invalid escape sequence: \\1", "backreferences are not supported (waza uses RE2 syntax)"),
)


class Regex:
    """A compiled RE2 pattern. ``search``/``match``/``fullmatch`` take ``str``.

    Text that is not valid Unicode (a lone surrogate from a broken agent transcript) is
    matched with each such code point read as U+FFFD, as Go reads invalid UTF-8.
    """

    __slots__ = ("_rx", "pattern")

    def __init__(self, rx: Any, pattern: str) -> None:
        self._rx = rx
        self.pattern = pattern

    def search(self, text: str) -> Any:
        try:
            return self._rx.search(text)
        except UnicodeEncodeError:
            return self._rx.search(_valid(text))

    def match(self, text: str) -> Any:
        try:
            return self._rx.match(text)
        except UnicodeEncodeError:
            return self._rx.match(_valid(text))

    def fullmatch(self, text: str) -> Any:
        try:
            return self._rx.fullmatch(text)
        except UnicodeEncodeError:
            return self._rx.fullmatch(_valid(text))

    @property
    def groups(self) -> int:
        return self._rx.groups

    def __repr__(self) -> str:
        return f"compile_regex({self.pattern!r})"


def _valid(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


_OPTIONS = None


def _options():
    global _OPTIONS
    if _OPTIONS is None:
        # deferred: re2 adds ~11.7 ms to importing this module
        import re2

        opts = re2.Options()
        opts.log_errors = False  # errors come back as exceptions; RE2 must not print them too
        _OPTIONS = opts
    return _OPTIONS


def compile_regex(pattern: str) -> Regex:
    """Compile ``pattern`` with RE2 (Go ``regexp`` syntax); :class:`RegexError` if it is not one."""
    if not isinstance(pattern, str):
        raise RegexError(str(pattern), f"a pattern must be a string, not {type(pattern).__name__}")
    bad = _byte_escape(pattern)
    if bad is not None:
        raise RegexError(pattern, f"invalid escape sequence: \\C at position {bad} (it matches single bytes; "
                                  "Go's regexp and waza reject it)")
    # deferred: re2 adds ~11.7 ms to importing this module
    import re2

    try:
        rx = re2.compile(pattern, _options())
    except re2.error as exc:
        raise RegexError(pattern, _reason(exc)) from None
    except (TypeError, ValueError, UnicodeError) as exc:  # e.g. a lone surrogate in the pattern
        raise RegexError(pattern, str(exc)) from None
    return Regex(rx, pattern)


def _byte_escape(pattern: str) -> int | None:
    """Position of a ``\\C`` escape, or None."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] == "\\":
            if pattern[i + 1] == "C":
                return i
            i += 2
        else:
            i += 1
    return None


def _reason(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else exc
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    for prefix, hint in _HINTS:
        if text.startswith(prefix):
            return f"{text} ({hint})"
    return text
