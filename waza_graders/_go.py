"""Go's string case mapping, for graders that must compare text exactly as waza (Go) does.

Go's ``strings.ToLower``/``ToUpper`` map each character on its own (Unicode simple case
mapping); Python's ``str.lower``/``upper`` use the full mapping and context. They differ
on a handful of characters ("İ" lowers to "i̇" in Python but "i" in Go; a word-final "Σ"
lowers to "ς" in Python but "σ" in Go; "ß" uppers to "SS" in Python but stays "ß" in
Go), which would change a case-insensitive verdict.
"""

from __future__ import annotations


def go_lower(text: str) -> str:
    """``strings.ToLower``: Python's lower() with the two differences undone."""
    if text.isascii():
        return text.lower()
    return text.replace("\u0130", "i").replace("\u03a3", "\u03c3").lower()


def go_upper(text: str) -> str:
    """``strings.ToUpper``: one character in, one character out."""
    if text.isascii():
        return text.upper()
    out = []
    for ch in text:
        up = ch.upper()
        out.append(up if len(up) == 1 else ch)
    return "".join(out)


#: the characters Go's unicode.IsSpace accepts (Python's str.isspace also takes \x1c-\x1f)
_GO_SPACE = ("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
             "\u200a\u2028\u2029\u202f\u205f\u3000")


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(_GO_SPACE)
