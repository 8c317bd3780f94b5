"""The strict YAML loader: every rule, with its position, under both ruamel parsers."""

from __future__ import annotations

import datetime
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core.errors import WazaError
from waza_core.suite import strict_yaml
from waza_core.suite.strict_yaml import MAX_BYTES, MAX_DEPTH, StrictYamlError, load

REJECTED = [
    # (input, expected message part, line:col)
    (b"a: 1\na: 2\n", "duplicate key 'a' (first defined at 1:1)", "2:1"),
    (b"a: 1\n'a': 2\n", "duplicate key 'a'", "2:1"),
    (b"{a: 1, a: 2}\n", "duplicate key 'a'", "1:8"),
    (b"x:\n  y: 1\n  y: 2\n", "duplicate key 'y'", "3:3"),
    (b"<<: {x: 1}\n", "merge key << is not allowed", "1:1"),
    (b"a:\n  '<<': {x: 1}\n", "merge key << is not allowed", "2:3"),
    (b"a: &x 1\n", "anchor &x is not allowed", "1:4"),
    (b"a: &x [1]\n", "anchor &x is not allowed", "1:4"),
    (b"a: *x\n", "alias *x is not allowed", "1:4"),
    (b"a: !foo 1\n", "explicit tag !foo is not allowed", "1:4"),
    (b"a: !!str 1\n", "explicit tag !!str is not allowed", "1:4"),
    (b"a: ! 1\n", "explicit tag ! is not allowed", "1:4"),
    (b"a: !!map {}\n", "explicit tag !!map is not allowed", "1:4"),
    (b"a: !!binary aGk=\n", "explicit tag !!binary is not allowed", "1:4"),
    (b"a: 1\n---\nb: 2\n", "several YAML documents", "2:1"),
    (b"a: 1\n...\n---\nb: 2\n", "several YAML documents", "3:1"),
    # the C parser marks the directive, the pure one the `---` after it
    (b"%YAML 1.1\n---\na: yes\n", "%YAML directive", None),
    (b"%TAG !e! tag:e.com,2000:\n---\na: 1\n", "%TAG directive", None),
    (b"", "found none", None),
    (b"# only a comment\n", "found none", None),
    (b"1: x\n", "mapping key must be a string, found an integer", "1:1"),
    (b"true: x\n", "found a boolean", "1:1"),
    (b"null: x\n", "found null", "1:1"),
    (b"2026-01-01: x\n", "found a date", "1:1"),
    (b"? [a]\n: x\n", "found a list", "1:3"),
    (b"? {a: 1}\n: x\n", "found a mapping", "1:3"),
    (b"a: \x07\n", "control character U+0007", "1:4"),
    (b"a: \x00\n", "control character U+0000", "1:4"),
    (b"a: x\x7f\n", "control character U+007F", "1:5"),
    (b"a: \xc2\x80\n", "control character U+0080", "1:4"),
    (b"a: \x1b[31m\n", "control character U+001B", "1:4"),
    ("a: x\u2028y\n".encode(), "raw line separator U+2028", "1:5"),
    ("a: x\u2029y\n".encode(), "raw line separator U+2029", "1:5"),
    ("# c\u0085b: 1\n".encode(), "raw line separator U+0085", "1:4"),
    ("a: x\ufeffy\n".encode(), "byte order mark U+FEFF is only allowed as the first character", "1:5"),
    ("\ufeff\ufeffa: 1\n".encode(), "byte order mark", "1:1"),
    ("a: \uffff\n".encode(), "noncharacter U+FFFF", "1:4"),
    (b"a: \xff\n", "not valid UTF-8 (byte 0xFF)", "1:4"),
    (b"a: 1\nb: \xc3\x28\n", "not valid UTF-8 (byte 0xC3)", "2:4"),
    (b"\xed\xa0\x80: 1\n", "not valid UTF-8", "1:1"),  # an encoded surrogate
    ("a: 1\n".encode("utf-16"), "not valid UTF-8", "1:1"),
    ("a: 1\n".encode("utf-32"), "not valid UTF-8", "1:1"),
    (b"a: \"open\n", "invalid YAML", "2:1"),
    (b"a: [1, 2\n", "invalid YAML", None),
    (b"a: ._\n", "cannot read the plain scalar '._' as !!float; quote it", "1:4"),
    (b"a: 2026-02-30\n", "cannot read the plain scalar '2026-02-30' as !!timestamp", "1:4"),
    # where ruamel.yaml is more lenient than YAML 1.2 (and than AgentV's parser)
    (b"a: {b: -}\n", "a lone - is not a plain string", "1:8"),
    (b'a: "x"#c\n', "a comment needs a space before its #", "1:7"),
    (b"a: [x]#c\n", "a comment needs a space before its #", "1:7"),
    (b"a: 'x\nb'\n", "not indented past column 1", "2:1"),
    (b"a:\n  b: \"x\n  y\"\n", "not indented past column 3", "3:3"),
    (b"a: [x,\ny]\n", "continues a multi-line string or flow collection (from line 1)", "2:1"),
    (b"- " * (MAX_DEPTH + 1) + b"x\n", f"nested more than {MAX_DEPTH} levels", None),
    (b"[" * 100000, f"nested more than {MAX_DEPTH} levels", None),
]


def _pure_load(data: bytes):
    from ruamel.yaml import YAML

    return strict_yaml._Builder(strict_yaml.decode(data), "<stdin>", YAML(typ="safe", pure=True)).build()


@pytest.mark.parametrize("loader", [load, _pure_load], ids=["default", "pure"])
@pytest.mark.parametrize(("data", "message", "where"), REJECTED, ids=[repr(r[0][:24]) for r in REJECTED])
def test_rule_is_enforced_with_its_position(loader, data, message, where):
    with pytest.raises(StrictYamlError) as info:
        loader(data)
    text = str(info.value)
    assert message in text
    assert "\n" not in text
    assert isinstance(info.value, WazaError) and info.value.exit_code == 2
    if where:
        assert text.startswith(f"<stdin>:{where}: "), text
    else:
        assert text.startswith("<stdin>:")


ACCEPTED = [
    (b"a: 1\n", {"a": 1}),
    ("\ufeffa: 1\n".encode(), {"a": 1}),  # one leading BOM is valid UTF-8 and YAML
    (b"a: 1_000\nb: 2026-01-01\nc: ~\nd: yes\ne: .inf\n",
     {"a": 1000, "b": datetime.date(2026, 1, 1), "c": None, "d": "yes", "e": float("inf")}),
    (b"a: <<\nb: [<<]\n", {"a": "<<", "b": ["<<"]}),  # only a merge *key* merges
    (b'a: "\\u2028\\x85\\0\\t\\U0001F600"\n', {"a": "\u2028\x85\x00\t\U0001f600"}),
    (b"---\na: [1, {b: c}]\n...\n", {"a": [1, {"b": "c"}]}),
    (b"a: /etc/passwd\nb: ./file.yaml\n", {"a": "/etc/passwd", "b": "./file.yaml"}),
    (b"a: 1\r\nb: 2\r\n", {"a": 1, "b": 2}),
    (b"- x\n- - y\n", ["x", ["y"]]),
    (b"a: 'x\n  b'\nc: [1,\n 2]\nd:\n- \"x\n y\"\n", {"a": "x b", "c": [1, 2], "d": ["x y"]}),
    (b'a: "x" #c\nb: x#c\n', {"a": "x", "b": "x#c"}),
    (b"plain text\n", "plain text"),
    ("k: \u00e9\U0001f600\u0301\n".encode(), {"k": "\u00e9\U0001f600\u0301"}),
    (b"- " * (MAX_DEPTH - 1) + b"x\n", None),
]


@pytest.mark.parametrize("loader", [load, _pure_load], ids=["default", "pure"])
@pytest.mark.parametrize(("data", "expected"), ACCEPTED, ids=[repr(a[0][:24]) for a in ACCEPTED])
def test_accepted(loader, data, expected):
    doc = loader(data)
    if expected is not None:
        assert doc.data == expected


def test_positions_of_keys_and_values():
    doc = load(b"tests:\n  - id: a\n    assert:\n      - type: contains\n")
    assert doc.position(()) == (1, 1)
    assert doc.position(("tests", 0)) == (2, 5)
    assert doc.position(("tests", 0, "id")) == (2, 9)
    assert doc.position(("tests", 0, "id"), key=True) == (2, 5)
    assert doc.position(("tests", 0, "assert", 0, "type"), key=True) == (4, 9)
    assert doc.position(("nope",)) is None


def test_size_limit_is_exactly_four_mib():
    head, tail = b'a: "', b'"\n'
    exact = head + b"x" * (MAX_BYTES - len(head) - len(tail)) + tail
    assert len(exact) == MAX_BYTES == 4 * 1024 * 1024
    assert len(load(exact).data["a"]) == MAX_BYTES - 6
    with pytest.raises(StrictYamlError, match="larger than 4194304 bytes"):
        load(exact + b" ")


def test_errors_name_their_source():
    with pytest.raises(StrictYamlError, match=r"^suite\.yaml:1:4: anchor"):
        load(b"a: &x 1\n", source="suite.yaml")


# ---- properties -----------------------------------------------------------------------------
_chars = st.characters(blacklist_categories=("Cs", "Cc"),
                       blacklist_characters="\u2028\u2029\ufeff\ufffe\uffff\x85")
_text = st.text(_chars, max_size=20)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text.filter(lambda k: k != "<<"), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=examples(300), deadline=None)
@given(_json)
def test_json_documents_load_unchanged(value):
    """JSON is YAML 1.2: every JSON document without banned characters loads as itself."""
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, indent=2)):
        assert load(text.encode("utf-8")).data == value


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_any_input_loads_or_fails_with_one_line(data):
    try:
        load(data)
    except StrictYamlError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(st.sampled_from(list("ab:-[]{}?&*!|>'\"#%@` \n\t,.<=\\0\u2028\ufeff")), max_size=60))
def test_yaml_punctuation_soup_never_escapes(text):
    try:
        a = ("ok", load(text.encode("utf-8")).data)
    except StrictYamlError as exc:
        a = ("err", str(exc))
    try:
        b = ("ok", _pure_load(text.encode("utf-8")).data)
    except StrictYamlError as exc:
        b = ("err", str(exc))
    # The C and the pure parser differ on a few syntax corners (libyaml accepts `0\t`, the
    # pure parser does not), but whenever both read a document they must read the same data.
    if a[0] == b[0] == "ok":
        assert a == b


@settings(max_examples=examples(500), deadline=None)
@given(st.text(st.sampled_from(list("0123456789._-+:eEtTzZ xob")), min_size=1, max_size=25))
def test_number_and_date_lookalikes_never_crash(text):
    for doc in (f"a: {text}\n", f"a: [{text}]\n", f"{text}: 1\n"):
        try:
            load(doc.encode())
        except StrictYamlError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("text", [">\n#,\t", "|\n# content, not a comment\n", "--- >\n#a\nb\n", "# lead\n--- |\n#x\n",
                                  "--- |-\n#y\n", "\ufeff>\n#z\n"])
def test_a_root_block_scalar_reads_as_the_spec_says(text):
    """libyaml reads a ``#`` line at column 0 inside a root block scalar as a comment; the spec
    (and the pure parser) as content. Found by test_yaml_punctuation_soup_never_escapes."""
    got = load(text.encode("utf-8")).data
    assert got == _pure_load(text.encode("utf-8")).data
    assert "#" in got
