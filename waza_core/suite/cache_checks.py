"""Fast "yes" answers to the suite cache's trust checks, for the lines waza wrote itself.

A cached task document is used only after two checks (:meth:`SuiteCache._trusted`): the
untrusted-input rule (:func:`waza_core.untrusted.check_plain`: depth, 64-bit integers,
finite floats) and the shape of every field the loader reads (``TASK_SHAPE``). Both walk
the document in Python, node by node: ~12 us per task, a fifth of a warm run's per-task
cost. Here the same questions get a cheaper answer that is only ever trusted when it says
"yes"; on "no" (or "cannot tell") the caller asks the exact check, so a line that fails
is refused with the same outcome as before:

* :func:`surely_plain`: the JSON text itself is searched (bytes methods) for what could make
  :func:`check_plain` refuse: more opening brackets than the depth allowed, a run of 19
  digits (an integer outside 64 bits has at least 19) or a digit before an exponent (the
  only way a float of fewer than 309 digits overflows);
* :func:`shape_checker`: the shape compiled once into msgspec Structs and checked with
  ``msgspec.convert`` (C speed): a bool is not a number, an int is a number, null only where
  the shape allows it (a number), other keys not looked at, as ``_fits`` reads it
  (``tests/suite/test_cache_checks.py`` compares both on generated documents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional, Union

#: every byte of a JSON text to ``0`` (a digit), ``e`` (an exponent's letter) or a space:
#: :func:`surely_plain` then searches for 19 digits in a row (an integer that may not fit
#: 64 bits) and a digit before an ``e`` (a float that may overflow to infinity)
_DIGITS = bytes(ord("0") if chr(b).isdigit() and b < 128 else ord("e") if b in b"eE" else ord(" ")
                for b in range(256))
_LONG, _EXPONENT = b"0" * 19, b"0e"


def surely_plain(blob: bytes, max_depth: int) -> bool:
    """True when the JSON text ``blob`` cannot hold a value :func:`check_plain` refuses
    (nested deeper than ``max_depth``, an integer outside 64 bits, a non-finite float).
    False means "cannot tell" (brackets or digits inside strings count too)."""
    if blob.count(b"[") + blob.count(b"{") > max_depth:
        return False
    digits = blob.translate(_DIGITS)
    return _LONG not in digits and _EXPONENT not in digits


def shape_checker(shape: dict, required: dict[int, tuple[str, ...]], number: tuple) -> Callable[[Any], bool]:
    """A function telling (True) that a decoded JSON value has ``shape``: the shape
    language of ``waza_core.suite.cache._fits`` (a type, a one-item list, a mapping of
    optional keys; ``required`` maps ``id(mapping)`` to its required keys, ``number`` is the
    type tuple of a number). False: it does not, or could not be told. The Structs are made
    at the first call: a line waza sealed is never checked, and a command that reads only such
    lines does not import msgspec (:mod:`waza_core.cache_json`)."""
    made: list[Any] = []  # (msgspec.convert, the target type), at the first call

    def fits(value: Any) -> bool:
        if not made:
            # deferred: msgspec (~13 ms of import) only once an unsealed line is checked
            import msgspec

            made.append((msgspec.convert, _type_of(shape, required, number, "Shape")))
        convert, target = made[0]
        try:
            convert(value, target)
        except (TypeError, ValueError):  # msgspec.ValidationError is a ValueError
            return False
        return True

    return fits


def _type_of(shape: Any, required: dict[int, tuple[str, ...]], number: tuple, name: str) -> Any:
    import msgspec  # deferred: called by fits() only, once msgspec is wanted (see shape_checker)

    if isinstance(shape, dict):
        needed = required.get(id(shape), ())
        fields: list[Any] = []
        for key, sub in shape.items():
            kind = _type_of(sub, required, number, f"{name}_{key}")
            fields.append((key, kind) if key in needed else (key, kind, None))  # defaults are not checked
        fields.sort(key=lambda field: len(field) == 3)  # required fields first
        return msgspec.defstruct(name, fields)
    if isinstance(shape, list):
        return list[_type_of(shape[0], required, number, f"{name}_item")]
    if shape is number:  # a number or null
        return Optional[Union[int, float]]
    if shape is int:  # an integer or null
        return Optional[int]
    if shape in (str, bool, list, dict):  # never null
        return shape
    raise TypeError(f"no fast check for the shape {shape!r}")


__all__ = ["shape_checker", "surely_plain"]
