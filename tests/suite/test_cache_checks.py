"""The suite cache's fast trust checks (waza_core/suite/cache_checks.py) never say "yes"
where the exact checks say "no": ``surely_plain`` against ``untrusted.check_plain`` and the
msgspec shape check against ``cache._fits`` (they agree on every generated document)."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core import untrusted
from waza_core.suite import cache
from waza_core.suite.cache_checks import shape_checker, surely_plain

_scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.integers(min_value=-(10 ** 18), max_value=10 ** 18),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=30)


def _plain(value) -> bool:
    try:
        untrusted.check_plain(value, "x", max_depth=6)
    except untrusted.UntrustedInput:
        return False
    return True


@settings(max_examples=examples(300), deadline=None)
@given(_values)
def test_surely_plain_only_when_check_plain_passes(value):
    for text in (msgspec.json.encode(value), json.dumps(value).encode()):
        decoded = msgspec.json.decode(text)
        if surely_plain(text, 6):
            assert _plain(decoded), text


@pytest.mark.parametrize("text", [
    b"[1e400]", b"[1E400]", b"[-1e400]", b"[18446744073709551616]", b"[-9223372036854775809]",
    b"[[[[[[[[1]]]]]]]]", b'{"a":{"b":{"c":{"d":{"e":{"f":{}}}}}}}', b"[" + b"9" * 400 + b".5]"])
def test_what_check_plain_refuses_is_never_surely_plain(text):
    assert not _plain(json.loads(text))  # msgspec itself refuses a float out of range
    assert not surely_plain(text, 6)


def test_a_usual_task_line_is_surely_plain():
    text = (b'{"id":"task-000001","inputs":{"prompt":"Explain item 1."},'
            b'"graders":[{"type":"text","name":"m","config":{"contains":["item 1"]}}]}')
    assert surely_plain(text, untrusted.MAX_DEPTH)


_TASK = {"id": "t", "name": "n", "description": "d", "tags": ["a"], "enabled": True, "timeout_seconds": 3,
         "first_event_timeout_seconds": 1.5, "context_dir": "c", "skill_directories": ["s"], "golden": False,
         "requirements": [{"x": 1}], "instruction_files": ["i.md"], "expected": {"k": 1},
         "graders": [{"type": "text", "name": "g", "config": {}, "weight": 1}],
         "checkpoints": [{"after_turn": 1, "on_failure": "stop", "graders": [{"type": "t", "name": "g"}]}],
         "inputs": {"prompt": "p", "prompt_file": "f", "files": [{"path": "a", "content": "b"}], "context": {},
                    "follow_up_prompts": ["x"], "responder": {}}}

_PATHS = [("id",), ("name",), ("tags",), ("tags", 0), ("enabled",), ("timeout_seconds",),
          ("first_event_timeout_seconds",), ("requirements",), ("expected",), ("graders",), ("graders", 0),
          ("graders", 0, "type"), ("graders", 0, "config"), ("graders", 0, "weight"), ("checkpoints", 0, "after_turn"),
          ("checkpoints", 0, "graders", 0, "name"), ("inputs",), ("inputs", "prompt"), ("inputs", "files", 0),
          ("inputs", "files", 0, "path"), ("inputs", "context"), ("inputs", "follow_up_prompts", 0),
          ("inputs", "responder"), ("unknown",)]
_DROP = object()


_replacements = st.one_of(_scalars, st.just(_DROP), st.lists(_scalars, max_size=2),
                          st.dictionaries(st.text(max_size=3), _scalars, max_size=2))


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PATHS), _replacements), max_size=3))
def test_the_fast_shape_check_agrees_with_fits(edits):
    fits = shape_checker(cache.TASK_SHAPE, cache._REQUIRED, cache._NUM)
    doc = msgspec.json.decode(msgspec.json.encode(_TASK))
    for path, value in edits:
        parent = doc
        for key in path[:-1]:
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                break
        else:
            if isinstance(parent, dict) and value is _DROP:
                parent.pop(path[-1], None)
            elif isinstance(parent, dict) or (isinstance(parent, list) and isinstance(path[-1], int)
                                              and len(parent) > path[-1]):
                parent[path[-1]] = value if value is not _DROP else None
    assert fits(doc) == cache._fits(doc, cache.TASK_SHAPE)
