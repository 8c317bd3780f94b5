"""Many instances of a frozen attrs class, built at the speed of a plain one.

attrs makes the ``__init__`` of a frozen class set each field with ``object.__setattr__`` (the
class's own ``__setattr__`` refuses every change): a call per field, ~50 ns each, where a class
that is not frozen stores the field directly. A task spec (21 fields) took 1.8 us to build, 1.0
of it in those calls, and a 100,000-task run builds one per task as it loads, and an execution
request and a grading context per run.

:func:`fast_builder` gives a constructor with the same signature that builds an instance of a
*twin* class (the same fields, made by attrs from them, not frozen), then makes it an instance
of the frozen class by ``__class__`` assignment, which Python allows between two classes with
the same slots. The object is what ``cls(...)`` makes: the same type and field values (attrs'
own converters, defaults, factories and validators ran), frozen from then on. ``waza_core``'s
model uses it where thousands are built (``tests/test_frozen_build.py`` compares both ways).

The twin is made once it pays: the first :data:`WARM_CALLS` calls go to ``cls`` itself (making
a class costs ~0.5 ms; a run of one task never makes one). Only a class that qualifies gets a
twin, else the constructor stays ``cls``: attrs-made with attrs' own ``__init__``, slotted,
based on ``object``, without ``__new__``, ``__attrs_pre_init__`` or ``__attrs_post_init__``, every
field set by ``__init__`` without a validator and without a default or converter that takes the
instance or the field (what the twin could not do as ``cls`` does), and without a ``__weakref__`` slot
(``weakref_slot=False``: Python lays that slot out after the fields, which makes two such
classes incompatible for the assignment); the assignment is tried once on a bare object first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

T = TypeVar("T")

#: calls that build with the class itself before its twin is made
WARM_CALLS = 64


def fast_builder(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen attrs class ``cls`` (see the module doc)."""
    twin: Any = None
    calls = 0

    def build(*args: Any, **kwargs: Any) -> T:
        nonlocal twin, calls
        if twin is None:
            calls += 1
            if calls <= WARM_CALLS:
                return cls(*args, **kwargs)
            twin = make_twin(cls) or cls  # two threads may both make one: either will do
        if twin is cls:
            return cls(*args, **kwargs)
        obj = twin(*args, **kwargs)
        obj.__class__ = cls
        return obj

    build.__doc__ = f"Build a {cls.__qualname__} as ``{cls.__qualname__}(...)`` does (waza_core.frozen_build)."
    return build


def make_twin(cls: type) -> type | None:
    """The class not frozen whose instances can become instances of ``cls``; None when ``cls``
    does not qualify (see the module doc)."""
    if (not attrs.has(cls) or cls.__bases__ != (object,) or "__slots__" not in cls.__dict__
            or cls.__weakrefoffset__ or cls.__dictoffset__ or cls.__new__ is not object.__new__
            or hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__")
            or "attrs generated" not in getattr(getattr(cls.__init__, "__code__", None), "co_filename", "")
            or not all(_plain_field(a) for a in attrs.fields(cls))):
        return None
    # every field qualifies (_plain_field): set by __init__, without a validator
    fields = {a.name: attrs.field(default=a.default, converter=a.converter, alias=a.alias, kw_only=a.kw_only,
                                  eq=False, order=False, repr=False)
              for a in attrs.fields(cls)}
    twin = attrs.make_class(cls.__name__, fields, slots=True, frozen=False, weakref_slot=False, eq=False,
                            order=False, repr=False, hash=False, init=True)
    try:
        probe = object.__new__(twin)
        probe.__class__ = cls  # raises TypeError when the layouts differ
    except TypeError:
        return None
    return twin


def _plain_field(a: attrs.Attribute) -> bool:
    """A field the twin sets as ``cls`` would: set by ``__init__``, no validator (one may call the
    class's methods or read the field's metadata, which the twin has not), a default or converter
    that does not take the instance or the field."""
    if not a.init or a.validator is not None:
        return False
    if isinstance(a.default, attrs.Factory) and a.default.takes_self:  # type: ignore[arg-type]
        return False
    converter = a.converter
    return not (isinstance(converter, attrs.Converter)
                and (converter.takes_self or converter.takes_field))  # type: ignore[attr-defined]
