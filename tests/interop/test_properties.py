"""Property tests: round trips keep the meaning, and no input escapes the exit-2 contract."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.depth import examples
from tests.interop.helpers import (
    assert_rejected,
    contains,
    exp,
    grader,
    imp,
    load_output,
    suite,
    suite_around,
)
from waza_core.interop import TEMPLATE_MARKERS, quote

SETTINGS = settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])

_any_char = st.characters(blacklist_categories=("Cs",))
_edge = st.sampled_from(["\x00", "\u2028", "\u2029", "\x85", "\ufeff", "\U0001f600", "e\u0301", "\t", "\r\n",
                         "\\", '"', "'", "# x", "- x", "key: v", " ", "\u00a0", "\x7f", "\x9f", "\ufffe", "~", "!"])
_value = st.lists(st.text(_any_char, max_size=8) | _edge, min_size=1, max_size=6).map("".join).filter(
    lambda s: s != "" and not any(m in s for m in TEMPLATE_MARKERS))
_metric = st.none() | _value.filter(lambda s: s.strip() != "")
_siblings = st.lists(st.sampled_from([
    "a string criterion", ["type: regex", "value: x+"], ["type: is-json"], ["type: contains", "value: other"],
    ["type: icontains", "value: HELLO"], ["type: contains", "value: req", "required: true"],
]), max_size=3)


@SETTINGS
@given(value=_value, metric=_metric, before=_siblings, after=_siblings)
@example(value="Hello", metric=None, before=[], after=[])
@example(value="\x00\u2028\U0001f600", metric="m\u2029", before=["x"], after=["y"])
def test_import_then_export_then_import_keeps_the_meaning(value, metric, before, after):
    text = suite(("t", before + [contains(value, metric)] + after))
    first = imp(text, test="t", n=str(len(before) + 1))
    assert first.code == 0, first.err
    native = load_output(first.out)
    name = "agentv-contains" if metric is None else metric
    assert native == {"name": name, "type": "text", "config": {"contains_cs": [value]}}

    back = exp(first.out)
    assert back.code == 0, back.err
    assert load_output(back.out) == {"type": "contains", "value": value, "metric": name}

    again = imp(suite_around(back.out.decode(), before, after), test="t", n=str(len(before) + 1))
    assert again.code == 0, again.err
    assert load_output(again.out) == native


@SETTINGS
@given(name=_value.filter(lambda s: s.strip() != ""), needle=_value)
def test_export_then_import_gives_the_grader_back(name, needle):
    res = exp(grader(name, needle))
    assert res.code == 0, res.err
    assert load_output(res.out) == {"type": "contains", "value": needle, "metric": name}
    back = imp(suite_around(res.out.decode()), test="t")
    assert load_output(back.out) == {"name": name, "type": "text", "config": {"contains_cs": [needle]}}


@SETTINGS
@given(value=_value, marker=st.sampled_from(TEMPLATE_MARKERS), at=st.integers(0, 10),
       where=st.sampled_from(["value", "metric"]))
def test_template_markers_are_rejected_anywhere_in_a_selected_string(value, marker, at, where):
    spiked = value[:at] + marker + value[at:]
    item = contains(spiked) if where == "value" else contains("ok", spiked)
    assert_rejected(imp(suite(("t", [item])), test="t"), f'{where} contains "')
    assert_rejected(exp(grader("g", spiked) if where == "value" else grader(spiked, "ok")), "contains \"")


@SETTINGS
@given(key=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=10).filter(
    lambda k: k not in ("type", "value", "metric")), raw=st.sampled_from(["1", "true", "x", "[]", "{}", "~"]))
def test_any_other_field_on_the_selected_assertion_fails(key, raw):
    res = imp(suite(("t", [contains("x", None, f"{quote(key)}: {raw}")])), test="t")
    assert res.code == 2 and res.out == b""


@SETTINGS
@given(st.text(max_size=12))
@example("1")
@example("+1")
@example("01")
@example("1 ")
def test_assertion_position_accepts_plain_digits_only(text):
    text = text.replace("\x00", "")  # argv cannot carry NUL
    res = imp(suite(("t", [contains("a"), contains("b")])), test="t", n=text)
    if re.fullmatch(r"[1-9][0-9]{0,8}", text) and int(text) <= 2:
        assert res.code == 0
    else:
        assert_rejected(res)


_scalar = st.sampled_from(["1_000", "12", "-3", "0o17", "0x1F", "1.5", "1e3", ".inf", "-.inf", ".nan", "true", "false",
                           "True", "null", "Null", "~", "2026-01-01", "2026-01-01 10:00:00", "[]", "{}", "[a]",
                           "{a: 1}"])


@SETTINGS
@given(raw=_scalar, field=st.sampled_from(["value", "metric"]))
def test_non_string_values_are_rejected(raw, field):
    item = ["type: contains", f"value: {raw}"] if field == "value" else ["type: contains", "value: x", f"metric: {raw}"]
    assert_rejected(imp(suite(("t", [item])), test="t"), f"{field} must be a string")
    doc = (grader("g", "x").replace('- "x"', f"- {raw}") if field == "value"
           else grader("g", "x").replace('name: "g"', f"name: {raw}"))
    assert_rejected(exp(doc))


BASE = suite(("t", ["criterion", contains("Hello", "m"), ["type: regex", "value: h+"]])).encode()
GRADER = grader("g", "Hello").encode()


@settings(max_examples=examples(400), deadline=None)
@given(st.data())
def test_mangled_inputs_convert_or_fail_cleanly(data):
    """Random byte edits never crash, never exit with another code, never print on failure."""
    for source, run in ((BASE, lambda b: imp(b, test="t", n="2")), (GRADER, exp)):
        buf = bytearray(source)
        for _ in range(data.draw(st.integers(1, 4))):
            op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
            at = data.draw(st.integers(0, len(buf)))
            if op == "insert":
                buf[at:at] = data.draw(st.binary(min_size=1, max_size=4) | st.sampled_from(
                    [b"&a ", b"*a", b"!t ", b"<<: ", b"\n---\n", b"{{", b"${", b"\xef\xbb\xbf", b"\x00", b"'", b'"',
                     b"\t"]))
            elif op == "delete":
                del buf[at:at + data.draw(st.integers(1, 5))]
            else:
                buf[at:at + 1] = data.draw(st.binary(min_size=1, max_size=1))
        res = run(bytes(buf))
        assert res.code in (0, 2), (res.code, res.err)
        if res.code == 2:
            assert_rejected(res)
        else:
            assert res.out and load_output(res.out)


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data):
    assume(data)
    for res in (imp(data), exp(data)):
        assert res.code == 2
        assert_rejected(res)
