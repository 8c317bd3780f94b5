"""The fast path for reading suite YAML: libyaml through PyYAML, for what it reads exactly.

Why: a cold load of a large suite parses every task file; ruamel.yaml's safe loader
(with its C parser) costs about 360 us for a ten-line task file, PyYAML's C composer
about 45 us. But the two are not the same language: PyYAML implements YAML 1.1
(``yes``/``on`` are booleans, ``010`` is octal, ``1:20`` sexagesimal, dates are
timestamps, ``<<`` merges, duplicate keys silently keep the last), ruamel.yaml's safe
loader YAML 1.2, and the libyaml inside PyYAML (0.2.x) accepts a few flow-context
plain scalars the one inside ruamel.yaml.clib (0.1.7) refuses.

So :func:`load` uses PyYAML's C *composer* only, with a resolver that decides nothing,
and builds the document itself from the node tree, accepting only what both loaders
read to the same value:

* plain scalars that are text in YAML 1.1 and 1.2 alike (not starting with a digit,
  sign, dot, ``~``, ``<`` or ``=``), the YAML 1.2 words ``null``/``true``/``false`` (in
  their three spellings) and ``~``, YAML 1.1's ``yes``/``no``/``on``/``off``/``y``/``n``
  words as the text YAML 1.2 makes them, decimal integers without a leading zero and
  decimal fractions (``1.5``, ``-0.25``, ``2.0e3``); every other plain scalar
  (``1e3``, ``010``, ``0x1f``, ``1:20``, ``2026-01-01``, ``.5``, ``<<``, ``=``, ``-x``
  ...) is left to ruamel.yaml;
* quoted and block scalars (always text);
* mappings with distinct keys, lists;

and it gives up (returns :data:`MISS`) on anything else: an explicit tag (even ``!!str``
or ``!``), an alias (anchors alone are harmless), a ``%YAML``/``%TAG`` directive, a key
that is a mapping or list, a duplicate key, a ``!`` where a tag could start (after a
space, a bracket or a comma), a plain scalar with ``:`` or ``?`` inside a
flow collection, a character that YAML 1.1 and 1.2 break lines at differently (NEL,
LS, PS) or that libyaml versions treat differently (BOM inside, C0/C1 controls), any
error of PyYAML, and an integer too long to convert. The caller then parses the text
with ruamel.yaml (:func:`waza_core.suite.yamlio.parse`), which gives the value, or the
error with its ``line:col``, exactly as before. tests/suite/test_fastyaml.py checks
that both paths read the same values (hypothesis over generated YAML, every suite in
examples/ and the test data).
"""

from __future__ import annotations

import re
from typing import Any

from waza_core.lazy_re import LazyPattern

#: returned by :func:`load` when the fast path cannot read the text exactly
MISS: Any = object()

# text that either loader may read differently, or that the fast path never tries:
# characters (C0/C1 controls, NEL, LS, PS, a BOM inside, noncharacters), a directive, and
# a `!` where a tag could start (libyaml marks a scalar tagged with the non-specific `!`
# as plain, so the node cannot tell; "Hello!" stays fast)
_REFUSE_CHARS = LazyPattern("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_DIRECTIVE = LazyPattern("^%", re.M)
_TAG_START = LazyPattern("(?:^|[ \t\\[{,])!", re.M)
# plain scalars that are not plain text in YAML 1.1 or 1.2 (classified one by one below)
_SPECIAL_START = frozenset("0123456789-+.~<=")
_INT = LazyPattern(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = LazyPattern(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")
_WORDS: dict[str, Any] = {
    "null": None, "Null": None, "NULL": None, "~": None, "": None,
    "true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False,
}


class _Giveup(Exception):
    """The text needs ruamel.yaml."""


_composer: list = []  # [the composer class] once imported; [None] without PyYAML's C extension
_ScalarNode: Any = None
_MappingNode: Any = None


def _composer_class():
    """PyYAML's C composer, resolving nothing: each node's tag is left as
    ``slice(node class, value, implicit)`` (``implicit``: (plain, quoted) for a scalar)
    and the builder decides; a tag written in the file stays a string. The three
    resolver hooks are builtins, so composing calls no Python code (~15% fewer
    instructions than a Python ``resolve``).

    Imported on first use: PyYAML's package import costs ~10 ms, which `waza <command>
    --help` should not pay (a deferred import for a measured start-up cost)."""
    global _ScalarNode, _MappingNode
    if not _composer:
        try:
            # deferred: yaml._yaml is optional; a missing one is handled here
            from yaml._yaml import CParser
            from yaml.nodes import MappingNode, ScalarNode
        except ImportError:  # pragma: no cover - a PyYAML wheel without libyaml
            _composer.append(None)
            return None

        class Composer(CParser):
            resolve = staticmethod(slice)  # (kind, value, implicit) -> slice(kind, value, implicit)
            descend_resolver = staticmethod(slice)  # (parent, index): no path resolvers
            ascend_resolver = staticmethod(tuple)  # (): nothing to undo

        _ScalarNode, _MappingNode = ScalarNode, MappingNode
        _composer.append(Composer)
    return _composer[0]


def load(text: str) -> Any:
    """The document of ``text``, or :data:`MISS` (see the module doc). Never raises."""
    composer = _composer_class()
    if (composer is None or _REFUSE_CHARS.search(text) or ("%" in text and _DIRECTIVE.search(text))
            or ("!" in text and _TAG_START.search(text))):
        return MISS
    try:
        loader = composer(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
        if node is None:
            return None
        return _build(node, "&" in text)
    except (_Giveup, RecursionError, MemoryError):
        return MISS
    except Exception:  # a PyYAML error: ruamel.yaml reports it with its position
        return MISS


def _scalar(node) -> Any:
    tag = node.tag
    if type(tag) is not slice:
        raise _Giveup  # a tag written in the file (`!!str`, `!x`)
    plain, quoted = tag.step
    if plain:
        return _plain(node.value)
    if quoted:
        return node.value
    raise _Giveup  # the non-specific tag `!`


def _plain(value: str) -> Any:
    """A plain scalar's value, as YAML 1.2 (ruamel.yaml) reads it, or give up."""
    if not value or value[0] in _SPECIAL_START:
        if value in _WORDS:
            return _WORDS[value]
        if _INT.match(value):
            if len(value) > 4000:
                raise _Giveup  # Python's digit limit; ruamel.yaml reports it
            return int(value)
        if _FLOAT.match(value):
            number = float(value)
            if number - number != 0.0:  # 1.0e999 is inf: ruamel.yaml's path reports it
                raise _Giveup
            return number
        raise _Giveup
    word = _WORDS.get(value, _Giveup)
    return value if word is _Giveup else word


def _build(root, anchors: bool) -> Any:
    """The value of the node tree, without recursion (the depth is checked before).
    One loop with the node checks inline: this runs for every task file of a cold load."""
    if isinstance(root, _ScalarNode):
        return _scalar(root)
    seen: set[int] | None = set() if anchors else None
    out = _new(root, seen)
    stack = [(root, out)]
    scalar_node, mapping_node, special_start, words = _ScalarNode, _MappingNode, _SPECIAL_START, _WORDS
    while stack:
        node, value = stack.pop()
        flow = node.flow_style
        is_map = type(node) is mapping_node
        for pair in node.value:
            if is_map:
                knode, child = pair
                if type(knode) is not scalar_node:
                    raise _Giveup  # a mapping or list as a key
                if seen is not None:
                    _once(knode, seen)
                if flow and not knode.style and (":" in knode.value or "?" in knode.value):
                    raise _Giveup  # see _FLOW_PLAIN
                key = _scalar(knode)
                if key in value:
                    raise _Giveup  # a duplicate key: ruamel.yaml refuses it with its position
            else:
                child = pair
            if type(child) is scalar_node:
                if seen is not None:
                    _once(child, seen)
                tag, item = child.tag, child.value
                if type(tag) is not slice:
                    raise _Giveup  # a tag written in the file
                plain, quoted = tag.step
                if plain:
                    if flow and (":" in item or "?" in item):
                        raise _Giveup  # see _FLOW_PLAIN
                    if not item or item[0] in special_start or item in words:
                        item = _plain(item)
                elif not quoted:
                    raise _Giveup  # the non-specific tag `!`
            else:
                item = _new(child, seen)
                stack.append((child, item))
            if is_map:
                value[key] = item
            else:
                value.append(item)
    return out


# _FLOW_PLAIN: libyaml 0.2.x reads the plain scalars `[a:b]` and `[a?b]` in a flow
# collection; the 0.1.7 of ruamel.yaml.clib refuses them, so the fast path gives up.


def _new(node, seen) -> Any:
    if seen is not None:
        _once(node, seen)
    if type(node.tag) is not slice:
        raise _Giveup  # a tag written in the file (`!!set`, `!!omap`)
    return {} if type(node) is _MappingNode else []


def _once(node, seen: set[int]) -> None:
    """An alias is the same node met again: give up (ruamel.yaml checks its expansion)."""
    if id(node) in seen:
        raise _Giveup
    seen.add(id(node))
