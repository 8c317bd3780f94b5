"""waza_core.gofmt prints values byte for byte as waza (Go) does: fmt's %v and %q,
encoding/json's Marshal, and Go's case mapping. Expected texts are Go's outputs."""

from __future__ import annotations

import pytest

from waza_core.gofmt import (
    go_float,
    go_json,
    go_json_float,
    go_list,
    go_lower,
    go_quote,
    go_quote_list,
    go_trim_space,
    go_upper,
    go_value,
)


@pytest.mark.parametrize("value,text", [
    (1.0, "1"), (0.5, "0.5"), (-2.25, "-2.25"), (123456.0, "123456"),
    (1e6, "1e+06"), (1234567.5, "1.2345675e+06"), (1e21, "1e+21"),
    (0.0001, "0.0001"), (0.00001, "1e-05"), (1.5e-7, "1.5e-07"), (1e100, "1e+100"),
    (0.0, "0"), (-0.0, "-0"), (float("inf"), "+Inf"), (float("nan"), "NaN"),
])
def test_go_float_is_fmt_v_of_a_float64(value, text):
    """fmt.Sprint(float64): strconv 'g' with the shortest digits, exponent form below
    1e-4 and from 1e6 (fmt.Println(1000000.0) prints 1e+06)."""
    assert go_float(value) == text


@pytest.mark.parametrize("value,text", [
    (1.0, "1"), (0.5, "0.5"), (1e6, "1000000"), (123456789.0, "123456789"), (1e20, "100000000000000000000"),
    (12345678901234567890.0, "12345678901234567000"), (1e21, "1e+21"), (1.5e300, "1.5e+300"),
    (0.00001, "0.00001"), (0.000001, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (5e-324, "5e-324"),
    (-0.0, "-0"),
])
def test_go_json_float_is_encoding_json(value, text):
    """encoding/json: positional from 1e-6 to 1e21, else exponent form with e-09 trimmed to e-9."""
    assert go_json_float(value) == text
    assert go_json(value) == text


def test_go_json_is_marshal_of_a_decoded_value():
    value = {"b": [1, 2.0, 1e-7, True, None], "a": "x<y>&z\u2028\x01\n\t\"\\", "\u00e9": {}}
    assert go_json(value) == ('{"a":"x\\u003cy\\u003e\\u0026z\\u2028\\u0001\\n\\t\\"\\\\",'
                              '"b":[1,2,1e-7,true,null],"\u00e9":{}}')
    assert go_json("lone \udcff") == '"lone \ufffd"'  # invalid UTF-8 becomes U+FFFD, as Go writes it
    with pytest.raises(ValueError):
        go_json(float("nan"))


def test_go_value_is_fmt_v_of_a_decoded_value():
    assert go_value({"b": [1, 2.5e6], "a": None, "c": "s"}) == "map[a:<nil> b:[1 2.5e+06] c:s]"
    assert go_value(True) == "true"


def test_go_quote_is_strconv_quote():
    assert go_quote('a"b\\c\n\x00\x7f') == '"a\\"b\\\\c\\n\\x00\\x7f"'
    assert go_quote("\u00e9\u00a0\u0085\U0001F600\u200b") == '"\u00e9\\u00a0\\u0085\U0001F600\\u200b"'
    assert go_quote_list(["az", "account show"]) == '["az" "account show"]'
    assert go_list(["a", "b"]) == "[a b]"


def test_go_case_mapping_and_space():
    assert go_lower("\u0130STANBUL \u039f\u0394\u039f\u03a3") == "istanbul \u03bf\u03b4\u03bf\u03c3"
    assert go_upper("stra\u00dfe") == "STRA\u00dfE"
    assert go_trim_space("\x1c a \u00a0") == "\x1c a"
