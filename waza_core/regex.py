"""Regular expressions with waza's (Go) semantics: RE2 through google-re2.

RE2 runs in time linear in the input and has no backreferences or look-around, so a
pattern in a suite can neither hang waza nor mean something else than it does in waza
(Go). Errors are not logged by RE2 itself (it writes to stderr by default); they come
back as :class:`RegexError` with RE2's own message.
"""

from __future__ import annotations

import functools
from typing import Any


class RegexError(ValueError):
    """A pattern RE2 cannot compile; the message is RE2's reason."""


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """The compiled RE2 pattern (cached). Raises :class:`RegexError`."""
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise RegexError(str(reason)) from None
