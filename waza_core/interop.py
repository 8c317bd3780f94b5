"""The interop dialect interface and the helpers every dialect shares.

A dialect translates one assertion of a foreign eval format into one native grader
(``import``) and back (``export``). It is a plugin: a class with ``name`` (the
``--adapter`` id, which pins the foreign format's exact version) registered through
the ``waza_register_interop_dialects`` hook. Dialects get the raw input bytes and
return the complete output, so the CLI can write it once or not at all.

The helpers here keep every dialect equally strict: the YAML double-quoted scalar
emitter (a dumper's plain style is not safe across YAML 1.1 and 1.2 readers), the
template-marker check, and the ``--assertion`` position parser.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import attrs

from waza_core.errors import WazaError

#: Text that AgentV and similar tools would interpolate instead of reading literally:
#: ``${`` (environment), ``{{``/``}}`` (expressions), ``{%`` (statements), ``{#`` (comments).
TEMPLATE_MARKERS = ("${", "{{", "}}", "{%", "{#")


class InteropError(WazaError):
    """The input cannot be converted without changing its meaning (exit 2). One line."""

    def __init__(self, message: str) -> None:
        # deferred: waza_core.suite.strict_yaml adds ~7.2 ms to importing this module
        from waza_core.suite.strict_yaml import one_line

        super().__init__(one_line(message))


@attrs.frozen
class Conversion:
    """The complete result of one conversion: written to stdout at once, or not at all."""

    output: bytes
    notice: str | None = None  # one line for stderr after the output was delivered


class Dialect:
    """Base class for interop dialects.

    Subclasses set ``name`` (the exact, versioned adapter id) and ``summary`` (one line
    for ``waza interop list``) and implement the two conversions. Both raise
    :class:`InteropError` (or another :class:`WazaError`) for anything they cannot
    convert faithfully; they never read files, run programs or call models.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def import_assertion(self, source: bytes, test: str, position: int) -> Conversion:
        """Convert assertion ``position`` (1-based) of test ``test`` into one native grader."""
        raise InteropError(f"dialect {show(self.name)} translates whole suites only: use "
                           "`waza interop import-suite` / `export-suite`")

    def export_grader(self, source: bytes) -> Conversion:
        """Convert one native grader mapping into one foreign assertion."""
        raise InteropError(f"dialect {show(self.name)} translates whole suites only: use "
                           "`waza interop import-suite` / `export-suite`")

    # ---- whole suites (waza interop import-suite / export-suite) ----------------------
    def import_suite(self, config: Path, approximate: bool) -> SuiteConversion:
        """Translate the foreign suite at ``config`` (it may read the files that config
        names, nothing else) into the files of a waza suite. Refusals raise
        :class:`waza_core.errors.SuiteError` with one ``file:line:col: message`` per problem."""
        raise InteropError(f"dialect {show(self.name)} does not import whole suites")

    def export_suite(self, suite: Path) -> SuiteConversion:
        """Translate the waza suite at ``suite`` (its eval.yaml) into foreign files."""
        raise InteropError(f"dialect {show(self.name)} does not export whole suites")


@attrs.frozen
class SuiteConversion:
    """The complete result of a whole-suite translation, written all at once or not at all.

    ``files`` maps relative paths (``/``-separated) to their bytes; ``notes`` are the
    approximations taken (printed on stderr, one per line, after the files were written)."""

    files: dict
    notes: tuple = ()


_POSITION = re.compile(r"[1-9][0-9]{0,8}")


def parse_position(text: str) -> int:
    """A 1-based position written as plain decimal digits: no sign, no leading zero."""
    if not isinstance(text, str) or not _POSITION.fullmatch(text):
        raise InteropError(f"--assertion must be a position counted from 1, written as plain digits "
                           f"(like 1 or 12); got {show(text) if isinstance(text, str) else repr(text)}")
    return int(text)


def find_template_marker(text: str) -> str | None:
    """The first template marker in ``text``, or None."""
    hits = [(text.find(m), m) for m in TEMPLATE_MARKERS if m in text]
    return min(hits)[1] if hits else None


# Characters written as escapes inside double quotes: backslash and quote, every C0 and
# C1 control, DEL, the line breaks of YAML 1.1 (NEL, LS, PS), the BOM and the two
# noncharacters. Everything else is written as UTF-8, so no reader recombines surrogates.
_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}
_ESCAPE = re.compile('[\\\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]')


def quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that every YAML 1.1 and 1.2 reader reads back
    unchanged, on one line."""

    def esc(m: re.Match) -> str:
        ch = m.group()
        return _NAMED.get(ch) or f"\\u{ord(ch):04x}"

    return '"' + _ESCAPE.sub(esc, text) + '"'


def show(text: str, limit: int = 60) -> str:
    """A quoted, one-line, shortened rendering of user text for error messages."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return quote(text)
