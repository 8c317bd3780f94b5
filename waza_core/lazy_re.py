"""Module-level regular expressions (Python's ``re``) compiled when first used, not on import.

``re.compile`` of a pattern with a large character class costs up to ~0.9 ms, and every
command imports the modules that hold waza's own patterns: compiled on import they were
~4 ms of a ~75 ms ``waza validate`` (timed around ``re._compile``), mostly for patterns
that command never uses (the fast YAML reader's on a warm load, the console's escapes for
text that needs none). A :class:`LazyPattern` stands where the compiled pattern stood and
compiles it at the first attribute read; the compiled pattern's methods then sit on the
instance itself, so each later call costs what a call on the compiled pattern does.

Only for waza's own fixed patterns. A suite's patterns go through :mod:`waza_core.regex`
(RE2, checked when the suite loads).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["LazyPattern"]

#: what a LazyPattern copies from the compiled pattern at its first use
_COPIED = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer",
           "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """``re.compile(pattern, flags)``, done at the first use of any of its attributes.

    Two threads using it first at the same time may both compile it: harmless, the
    results are equal. A pattern that does not compile raises ``re.error`` at that first
    use (a test that uses it finds that)."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # only called for attributes the instance does not have yet: the first use
        if name.startswith("__") or name not in _COPIED:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attr in _COPIED:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r}, {self._source[1]!r})"
