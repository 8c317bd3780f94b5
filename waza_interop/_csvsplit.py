"""promptfoo's comma-separated assertion values (``contains-any: a, "b, c"``) and
JavaScript's white space, which its ``trim()`` and ``/\\s/`` use (not Python's)."""

from __future__ import annotations

JS_WHITESPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                          "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in JS_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in JS_WHITESPACE:
        end -= 1
    return text[start:end]


def split_values(value: str) -> list[str]:
    """promptfoo's ``parseCommaSeparatedValues``: fields separated by commas, white space
    around them trimmed, repeated commas skipped, double-quoted fields keep their commas
    (``\\"``, ``\\\\`` and ``""`` escapes). Raises ValueError where promptfoo throws."""
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n:
            while i < n and value[i] in JS_WHITESPACE:
                i += 1
            if i < n and value[i] == ",":
                i += 1
                continue
            break
        if i >= n:
            break
        if value[i] == '"':
            i += 1
            field = []
            terminated = False
            while i < n:
                if value[i] == "\\" and i + 1 < n and value[i + 1] in '"\\':
                    field.append(value[i + 1])
                    i += 2
                elif value[i] == '"' and i + 1 < n and value[i + 1] == '"':
                    field.append('"')
                    i += 2
                elif value[i] == '"':
                    i += 1
                    terminated = True
                    break
                else:
                    field.append(value[i])
                    i += 1
            if not terminated:
                raise ValueError("an unterminated quoted field in the value")
            out.append("".join(field))
            while i < n and value[i] in JS_WHITESPACE:
                i += 1
            if i < n and value[i] != ",":
                raise ValueError("a quoted field is not followed by a comma")
        else:
            j = value.find(",", i)
            j = n if j < 0 else j
            out.append(js_trim(value[i:j]))
            i = j
    return out
