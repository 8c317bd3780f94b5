"""waza_core.untrusted: the one reader of files someone else wrote (docs/safety.md)."""

from __future__ import annotations

import json
import math
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core import untrusted
from waza_core.untrusted import UntrustedInput


def test_a_link_is_refused_unfollowed_and_followed_when_asked(tmp_path):
    target = tmp_path / "outside.json"
    target.write_text('{"a": 1}')
    (tmp_path / "entry.json").symlink_to(target)
    with pytest.raises(UntrustedInput, match="entry.json: a symbolic link"):
        untrusted.read_json(tmp_path / "entry.json", limit=100)
    assert untrusted.read_json(tmp_path / "entry.json", limit=100, follow=True) == {"a": 1}


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "call-1.json"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(_refusal(fifo)), daemon=True)
    worker.start()
    worker.join(5)
    assert done and "a FIFO, not a regular file" in done[0]


def _refusal(path):
    try:
        untrusted.read_bytes(path, limit=10)
    except UntrustedInput as exc:
        return str(exc)
    return "read"


def test_folders_sizes_and_missing_files(tmp_path):
    with pytest.raises(UntrustedInput, match="a folder"):
        untrusted.read_bytes(tmp_path, limit=10)
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(UntrustedInput, match="11 bytes, more than the 10 allowed"):
        untrusted.read_bytes(tmp_path / "big", limit=10)
    with pytest.raises(FileNotFoundError):
        untrusted.read_bytes(tmp_path / "none", limit=10)


@pytest.mark.parametrize("text, message", [
    ("[NaN]", "NaN is not a JSON number"),
    ('{"a": -Infinity}', "-Infinity is not a JSON number"),
    ("[1e999]", "overflows"),
    ("[" + "9" * 30 + "]", "out of range"),
    ("[-9223372036854775809]", "out of range"),
    ("[" * 101 + "]" * 101, "nested more than 100 levels deep"),
    ("[" * 100000 + "]" * 100000, "nested more than 100 levels deep"),
    ("{half", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8 text"),
])
def test_strict_json_refusals_name_the_place(text, message):
    with pytest.raises(UntrustedInput, match=r"^f\.jsonl:3: ") as info:
        untrusted.loads(text, "f.jsonl:3")
    assert message in str(info.value)


def test_limits_that_pass():
    assert untrusted.loads("[" * 100 + "]" * 100, "x") is not None
    assert untrusted.loads("[18446744073709551615, -9223372036854775808, 1.5e300]", "x")[0] == 2 ** 64 - 1


def test_lines_are_bounded_and_numbered(tmp_path):
    path = tmp_path / "j"
    path.write_bytes(b"a\n" + b"b" * 9 + b"\n" + b"c" * 20 + b"\n")
    with untrusted.open_regular(path) as fh:
        lines = untrusted.iter_lines(fh, limit=10, where="j")
        assert next(lines) == (1, b"a\n") and next(lines) == (2, b"b" * 9 + b"\n")
        with pytest.raises(UntrustedInput, match=r"^j:3: the line is longer than the 10 bytes allowed"):
            next(lines)


def test_field_checks_say_booleans_are_not_integers():
    assert untrusted.is_int(3) and not untrusted.is_int(True) and not untrusted.is_number(False)
    assert not untrusted.is_number(math.nan) and untrusted.is_number(2.5)
    with pytest.raises(UntrustedInput, match=r"^r: 'trial' must be an integer, not true"):
        untrusted.field({"trial": True}, "trial", untrusted.is_int, "an integer", "r")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3), kids, max_size=4),
                     max_leaves=30)


@settings(max_examples=examples(300), deadline=None)
@given(_json)
def test_loads_either_returns_plain_values_or_refuses_cleanly(value):
    text = json.dumps(value)  # NaN, Infinity and big integers included: json.dumps writes them
    try:
        back = untrusted.loads(text, "x")
    except UntrustedInput as exc:
        assert str(exc).startswith("x: ")
        return
    untrusted.check_plain(back, "x")
    assert json.loads(json.dumps(back, allow_nan=False)) == back
