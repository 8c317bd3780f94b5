"""The compact JSON of waza's own cache lines: written by msgspec, read by the standard
library in a process that reads few of them.

msgspec decodes a cached task document about three times faster than the standard library
(~0.7 against ~2 us), but importing it costs ~13 ms, a sixth of a ``waza validate`` of a
small suite. So a process decodes its first :data:`SWITCH_AFTER` documents with the standard
library's C decoder and imports msgspec only then (at once when the command has imported it for
something else, as ``waza run`` has for its results): a command on a small suite never imports
it.

Both readers give the same values for the JSON waza writes (``tests/test_cache_json.py``
compares them on generated documents) and refuse the same inputs: anything that is not JSON,
not UTF-8, or has bytes after the value; ``NaN`` and infinities; a number that overflows a
float (the standard library would make it ``inf``). A document holding a ``\\u`` escape goes to
msgspec straight away (those are rare in what msgspec writes, and the two differ on lone
surrogates, which msgspec refuses). Nested too deeply, either raises ``RecursionError`` or a
``ValueError``; every other refusal is a ``ValueError`` (``msgspec.DecodeError`` is one).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

__all__ = ["SWITCH_AFTER", "decode", "encode", "encode_plain"]

#: documents decoded by the standard library in a process before msgspec takes over
SWITCH_AFTER = 200
#: Python's default limit on the digits of an integer read from text
_DEFAULT_DIGITS = 4300

_decoded = 0
_msgspec_decode: Any = None
_msgspec_encode: Any = None
_EncodeError: Any = ()  # msgspec.EncodeError once msgspec is imported


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # "1e400": msgspec says "number out of range"
        raise ValueError(f"number out of range: {text}")
    return value


def _constant(text: str) -> float:
    raise ValueError(f"not JSON: {text}")  # NaN, Infinity, -Infinity


_stdlib = json.JSONDecoder(parse_float=_finite, parse_constant=_constant).decode


def decode(data: bytes | bytearray | memoryview) -> Any:
    """The value of the JSON text ``data`` (see the module doc for what is refused)."""
    global _decoded
    if _msgspec_decode is None:
        text = data if type(data) is bytes else bytes(data)
        # msgspec at once when the command imported it anyway (``waza run``: its results), and
        # when Python's limit on integer digits is off: the standard library would then read an
        # integer of millions of digits (quadratic time) where msgspec refuses it at once
        if (_decoded < SWITCH_AFTER and text.find(b"\\u") < 0 and "msgspec" not in sys.modules
                and 0 < sys.get_int_max_str_digits() <= _DEFAULT_DIGITS):
            _decoded += 1
            return _stdlib(text.decode("utf-8"))
        _load_msgspec()
    return _msgspec_decode(data)


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``: msgspec's bytes. A value JSON cannot hold raises
    ``TypeError``, ``ValueError`` (msgspec's EncodeError, turned into one), ``OverflowError``
    or ``UnicodeEncodeError`` (a lone surrogate)."""
    if _msgspec_encode is None:
        _load_msgspec()
    try:
        return _msgspec_encode(value)
    except _EncodeError as exc:
        raise ValueError(str(exc)) from None


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False, allow_nan=False).encode


def encode_plain(value: Any) -> bytes:
    """:func:`encode` of a value made of strings, integers, lists and string-keyed mappings
    only (a cache line's head, a cache file's header): the same bytes (both libraries write
    strings and integers alike), from the standard library while msgspec is not imported. A
    lone surrogate raises ``UnicodeEncodeError``, as in :func:`encode`."""
    if _msgspec_encode is not None or "msgspec" in sys.modules:
        return encode(value)
    return _dumps(value).encode("utf-8")


def compact(value: Any) -> bytes | None:
    """Compact UTF-8 JSON of ``value``, a plain JSON value (decoded from JSON: no NaN or
    infinity, which msgspec would write as ``null``), to be read back with :func:`decode`:
    msgspec when it is imported, else the standard library (the bytes may differ between the
    two; the value read back does not). None when it cannot be written so (a lone surrogate
    in a string): keep the value itself then."""
    try:
        if _msgspec_encode is not None or "msgspec" in sys.modules:
            return encode(value)
        return _dumps(value).encode("utf-8")
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        return None


def _load_msgspec() -> None:
    global _msgspec_decode, _msgspec_encode, _EncodeError
    # deferred: ~13 ms of import, paid once a process decodes many documents (see the module doc)
    import msgspec

    _EncodeError = msgspec.EncodeError  # before the functions: a thread that sees them sees this
    _msgspec_decode, _msgspec_encode = msgspec.json.decode, msgspec.json.encode
