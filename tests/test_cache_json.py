"""waza_core.cache_json: the standard library and msgspec read waza's cache lines alike."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from waza_core import cache_json

# what a cache line can hold: anything msgspec writes (no lone surrogate: it cannot encode one)
_text = st.text(st.characters(blacklist_categories=("Cs",)))
_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_text, inner, max_size=5),
    max_leaves=30)


def _same(a, b) -> bool:
    """Equal, of the same types, floats to the bit (-0.0 is not 0.0, 1 is not 1.0)."""
    return a == b and msgspec.json.encode(a) == msgspec.json.encode(b)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_both_readers_give_the_value_msgspec_wrote(value):
    blob = msgspec.json.encode(value)
    by_stdlib = cache_json._stdlib(blob.decode("utf-8"))
    assert _same(by_stdlib, value) and _same(msgspec.json.decode(blob), value)
    assert _same(cache_json.decode(blob), value)


@pytest.mark.parametrize("blob", [
    b"NaN", b"[Infinity]", b"-Infinity", b"1e400", b"[-1e999]", b"[1, 2", b'{"a": 1} x', b"", b"\xff",
    b'"\xc3"', b"[" * 100_000 + b"]" * 100_000, b'{"a" 1}', b"'single'",
])
def test_both_readers_refuse_what_waza_never_writes(blob):
    with pytest.raises((ValueError, RecursionError)):
        msgspec.json.decode(blob)
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return  # refused before the standard library's decoder sees it (a ValueError too)
    with pytest.raises((ValueError, RecursionError)):
        cache_json._stdlib(text)


def test_an_escape_goes_to_msgspec_which_refuses_a_lone_surrogate():
    with pytest.raises(ValueError):
        cache_json.decode(b'"\\ud800"')
    assert cache_json.decode(b'"\\u00e9\\n"') == "\u00e9\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(_text | st.integers(min_value=-(2**63), max_value=2**64), max_size=8)
       | st.dictionaries(_text, _text, max_size=4))
def test_plain_values_are_written_as_msgspec_writes_them(value):
    expected = msgspec.json.encode(value)
    assert cache_json._dumps(value).encode("utf-8") == expected
    assert cache_json.encode_plain(value) == expected


def test_a_lone_surrogate_is_refused_by_both_writers():
    for write in (msgspec.json.encode, lambda v: cache_json._dumps(v).encode("utf-8")):
        with pytest.raises(UnicodeEncodeError):
            write(["\udcff.yaml", "task", 1])


def test_a_process_reads_its_first_documents_without_msgspec_then_switches(monkeypatch):
    import sys

    loaded = []

    def load():
        loaded.append(True)
        monkeypatch.setattr(cache_json, "_msgspec_decode", msgspec.json.decode)

    monkeypatch.setattr(cache_json, "_msgspec_decode", None)
    monkeypatch.setattr(cache_json, "_decoded", cache_json.SWITCH_AFTER - 1)
    monkeypatch.setattr(cache_json, "_load_msgspec", load)
    monkeypatch.delitem(sys.modules, "msgspec")  # as in a command that never imported it
    assert cache_json.decode(b'{"a":[1,2.5,null]}') == {"a": [1, 2.5, None]} and not loaded
    assert cache_json.decode(memoryview(b"[1]")) == [1] and loaded == [True]  # one past SWITCH_AFTER


def test_without_the_integer_digit_limit_msgspec_reads_even_the_first_documents(monkeypatch):
    """With the limit off, the standard library would read an integer of millions of digits in
    quadratic time; msgspec refuses it at once."""
    import sys

    used = []
    monkeypatch.setattr(cache_json, "_msgspec_decode", None)
    monkeypatch.setattr(cache_json, "_decoded", 0)
    monkeypatch.setattr(cache_json, "_load_msgspec",
                        lambda: (used.append(True), monkeypatch.setattr(cache_json, "_msgspec_decode", msgspec.json.decode)))
    monkeypatch.delitem(sys.modules, "msgspec")
    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: 0)
    assert cache_json.decode(b"[1]") == [1] and used == [True]


@settings(max_examples=300, deadline=None)
@given(_json)
def test_compact_reads_back_the_same_value_with_or_without_msgspec(value):
    """compact() writes with msgspec when it is imported, else with the standard library; both
    read back (decode) to the same value, floats to the bit, key order kept."""
    for encode in (cache_json.compact, lambda v: cache_json._dumps(v).encode("utf-8")):
        blob = encode(value)
        assert blob is not None and _same(cache_json.decode(blob), value)
        assert list(_keys(cache_json.decode(blob))) == list(_keys(value))


def _keys(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def test_compact_gives_none_for_a_lone_surrogate_and_the_stdlib_writer_refuses_nan():
    """A lone surrogate cannot be written as UTF-8: None, the caller keeps the value. The
    values compact() gets come decoded from JSON, so never NaN (msgspec would write null);
    the standard library's writer refuses one rather than write what decode refuses."""
    assert cache_json.compact({"a": "\ud800"}) is None
    for value in ([float("nan")], {"a": float("inf")}):
        with pytest.raises(ValueError):
            cache_json._dumps(value)
