"""Argument matchers: waza's kinds, Go-formatted reasons, and JSON-normalised equality."""

from __future__ import annotations

import pytest

from waza_graders.argmatcher import compile_matcher, failures


def match(spec, value):
    return compile_matcher(spec).match(value)


@pytest.mark.parametrize("spec,value,expected", [
    ({"equals": 1}, 1.0, (True, "equals 1")),
    ({"equals": "ls"}, "ls", (True, 'equals "ls"')),
    ({"equals": "ls"}, "pwd", (False, 'expected "ls", got "pwd"')),
    ({"equals": True}, 1, (False, "expected true, got 1")),
    ({"equals": None}, None, (True, "equals null")),
    ({"equals": {"b": [1, 2.5], "a": "<x>"}}, {"a": "<x>", "b": [1.0, 2.5]},
     (True, 'equals {"a":"\\u003cx\\u003e","b":[1,2.5]}')),
    ({"equals": [1, 2]}, [2, 1], (False, "expected [1,2], got [2,1]")),
    ({"equals": "a\tb"}, "ab", (False, 'expected "a\\tb", got "ab"')),
])
def test_equals(spec, value, expected):
    assert match(spec, value) == expected


@pytest.mark.parametrize("spec,value,expected", [
    ({"regex": "^auth"}, "auth flow", (True, 'regex "^auth" matched')),
    ({"regex": "^auth"}, "the auth", (False, 'regex "^auth" did not match "the auth"')),
    ({"regex": '"n":3'}, {"n": 3}, (True, 'regex "\\"n\\":3" matched')),  # non-strings as JSON
    ({"regex": "^$"}, None, (True, 'regex "^$" matched')),
    ({"regex": r"\pL+"}, "été", (True, 'regex "\\\\pL+" matched')),
    ({"contains": "src/"}, "app/src/x.py", (True, 'contains "src/"')),
    ({"contains": "src/"}, ["a"], (False, 'expected substring "src/", got "[\\"a\\"]"')),
    # a number's text is its JSON (encoding/json), not Python's repr
    ({"regex": "^0.00001$"}, 0.00001, (True, 'regex "^0.00001$" matched')),
    ({"contains": "e-0"}, 1e-7, (False, 'expected substring "e-0", got "1e-7"')),
])
def test_regex_and_contains(spec, value, expected):
    assert match(spec, value) == expected


@pytest.mark.parametrize("bounds,value,expected", [
    ({"gte": 1, "lte": 5}, 3, (True, "range: 3 within bounds")),
    ({"gte": 1}, 0.5, (False, "range: 0.5 < gte 1")),
    ({"gt": 2}, 2, (False, "range: 2 <= gt 2")),
    ({"lte": 5}, 7, (False, "range: 7 > lte 5")),
    ({"lt": 1e21}, 2e21, (False, "range: 2e+21 >= lt 1e+21")),
    # %v of a float64 switches to exponent form at 1e6 and below 1e-4
    ({"lte": 1000000}, 2500000, (False, "range: 2.5e+06 > lte 1e+06")),
    ({"gte": 0.0001}, 0.00001, (False, "range: 1e-05 < gte 0.0001")),
    ({"lt": 5}, "3", (False, "range: value 3 is not numeric")),
    ({"lt": 5}, True, (False, "range: value true is not numeric")),
    ({"lt": 5}, None, (False, "range: value <nil> is not numeric")),
    ({"lt": 5}, {"a": 1}, (False, "range: value map[a:1] is not numeric")),
])
def test_range(bounds, value, expected):
    assert match({"range": bounds}, value) == expected


def test_json_schema():
    spec = {"json_schema": {"type": "object", "required": ["dry_run"],
                            "properties": {"dry_run": {"type": "boolean"}}}}
    assert match(spec, {"dry_run": True}) == (True, "json_schema: valid")
    ok, reason = match(spec, {"dry_run": "yes"})
    assert not ok and reason == "json_schema: at /dry_run: 'yes' is not of type 'boolean'"


def test_json_schema_draft_follows_dollar_schema():
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}],
              "additionalItems": False}
    assert match({"json_schema": draft7}, ["a", "b"])[0] is False  # draft-07 tuple rules apply


@pytest.mark.parametrize("spec,message", [
    ("^x", "argmatcher: expected mapping"),
    ({}, "argmatcher: empty matcher; expected one of equals, regex, contains, range, json_schema"),
    ({"regex": "a", "contains": "b"}, "argmatcher: exactly one matcher kind allowed, got 2 (regex, contains)"),
    ({"prefix": "a"}, "argmatcher: unknown matcher kind 'prefix'"),
    ({"regex": "("}, 'argmatcher: invalid regex "(": missing ): ('),
    ({"regex": ""}, "argmatcher: regex matcher requires a non-empty pattern"),
    ({"contains": ""}, "argmatcher: contains matcher requires a non-empty substring"),
    ({"range": {}}, "argmatcher: range matcher requires at least one bound (gte, lte, gt, lt)"),
    ({"json_schema": {}}, "argmatcher: json_schema matcher requires a non-empty schema"),
])
def test_invalid_matchers(spec, message):
    with pytest.raises(ValueError) as exc:
        compile_matcher(spec)
    assert str(exc.value).startswith(message)


def test_failures_are_sorted_by_argument_name_and_name_missing_ones():
    matchers = {"z": compile_matcher({"equals": 1}), "a": compile_matcher({"contains": "x"}),
                "m": compile_matcher({"range": {"lt": 3}})}
    assert failures(matchers, {"z": 2, "m": 1}) == [
        'argument "a": not present on tool call', 'argument "z": expected 1, got 2']


@pytest.mark.parametrize("spec", [{"regex": "x"}, {"contains": "x"}, {"equals": [1]},
                                  {"json_schema": {"type": "array", "items": {"$ref": "#"}}}])
def test_a_value_nested_past_the_stack_fails_its_matcher(spec):
    deep: list = []
    for _ in range(900):  # as deep as a JSON-decoded tool argument can be
        deep = [deep]
    assert failures({"q": compile_matcher(spec)}, {"q": deep}) == ['argument "q": value nests too deeply to match']
