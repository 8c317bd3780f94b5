"""`waza interop import|export|list`: the happy paths and every rule, one row each."""

from __future__ import annotations

import hashlib

import pytest

from tests.interop.helpers import (
    ADAPTER,
    NOTICE,
    MiB,
    assert_rejected,
    cli,
    contains,
    exp,
    grader,
    imp,
    load_output,
    suite,
)

BASIC = suite(("contains-check", [contains("Hello"), ["type: regex", 'value: "[Hh]ello"'],
                                  "Response must contain the word Hello"]))


# ---- import: happy paths ------------------------------------------------------------------
def test_import_writes_one_native_grader_and_the_notice():
    res = imp(BASIC)
    assert res.code == 0, res.err
    assert res.err == NOTICE + "\n"
    assert load_output(res.out) == {"name": "agentv-contains", "type": "text", "config": {"contains_cs": ["Hello"]}}
    text = res.out.decode()
    assert f"# adapter: {ADAPTER}\n" in text
    assert f"# source-sha256: {hashlib.sha256(BASIC.encode()).hexdigest()} (advisory, unverified)\n" in text
    assert '# selected: test "contains-check", assertion 1\n' in text


def test_import_uses_the_metric_as_name():
    res = imp(suite(("t", [contains("x", "my metric")])), test="t")
    assert load_output(res.out)["name"] == "my metric"


def test_import_picks_by_position_among_siblings():
    text = suite(("other", [contains("no")]),
                 ("t", ["criterion first", ["type: is-json"], contains("A", "a"), ["type: equals", "value: x"],
                        contains("B"), "criterion last", contains("C", "c")]))
    assert load_output(imp(text, test="t", n="3").out)["config"]["contains_cs"] == ["A"]
    assert load_output(imp(text, test="t", n="5").out)["config"]["contains_cs"] == ["B"]
    assert load_output(imp(text, test="t", n="7").out) == {"name": "c", "type": "text",
                                                           "config": {"contains_cs": ["C"]}}


def test_import_keeps_path_like_values_as_text():
    text = suite(("t", [contains("/etc/passwd", "./secrets.yaml")]))
    assert load_output(imp(text, test="t").out) == {"name": "./secrets.yaml", "type": "text",
                                                    "config": {"contains_cs": ["/etc/passwd"]}}


def test_import_accepts_a_leading_bom_and_crlf():
    res = imp(b"\xef\xbb\xbf" + BASIC.replace("\n", "\r\n").encode())
    assert res.code == 0, res.err
    assert load_output(res.out)["config"]["contains_cs"] == ["Hello"]


def test_import_ignores_everything_outside_the_selected_assertion():
    text = ("name: x\ndescription: d\nproviders: [llm]\nexecution: {threshold: 0.9}\nassertions: [{type: regex}]\n"
            "tests:\n  - id: t\n    vars: {a: 1}\n    input: {{ weird }}\n    threshold: 0.5\n"
            "    workspace: {hooks: {before_all: {command: [rm, -rf, /]}}}\n"
            "    assert:\n      - {type: contains, value: ok}\n")
    res = imp(text.replace("{{ weird }}", "hi"), test="t")
    assert res.code == 0, res.err
    assert load_output(res.out)["config"]["contains_cs"] == ["ok"]


# ---- import: rejections -------------------------------------------------------------------
IMPORT_REJECTS = [
    # (suite text or bytes, --test, --assertion, message part)
    (BASIC, "contains-check", "0", "--assertion must be a position counted from 1"),
    (BASIC, "contains-check", "-1", "--assertion must be"),
    (BASIC, "contains-check", "+1", "--assertion must be"),
    (BASIC, "contains-check", "01", "--assertion must be"),
    (BASIC, "contains-check", " 1", "--assertion must be"),
    (BASIC, "contains-check", "1.0", "--assertion must be"),
    (BASIC, "contains-check", "1e0", "--assertion must be"),
    (BASIC, "contains-check", "", "--assertion must be"),
    (BASIC, "contains-check", "one", "--assertion must be"),
    (BASIC, "contains-check", "\u0661", "--assertion must be"),  # an Arabic-Indic digit one
    (BASIC, "contains-check", "1234567890", "--assertion must be"),
    (BASIC, "contains-check", "4", "assertion 4 is past the end"),
    (BASIC, "contains-check", "99", "has 3 assertion(s)"),
    (BASIC, "contains-check", "2", 'has type "regex"; only type: contains'),
    (BASIC, "contains-check", "3", "is a string criterion"),
    (BASIC, "", "1", "--test must not be empty"),
    (BASIC, "missing", "1", 'no test has id "missing" (ids: "contains-check")'),
    (BASIC, "Contains-Check", "1", "no test has id"),
    ("- a\n- b\n", "t", "1", "expected an AgentV suite (a mapping with tests), found a list"),
    ("just text\n", "t", "1", "found a string"),
    ("name: x\n", "t", "1", "the suite has no tests list"),
    ("tests: cases.yaml\n", "t", "1", "tests is a string (a reference to other files)"),
    ("tests: {id: t}\n", "t", "1", "tests must be a list, found a mapping"),
    ("tests:\n", "t", "1", "tests must be a list, found null"),
    ("tests: [cases.yaml, {include: x.yaml}]\n", "t", "1", "no test has id"),
    ("tests:\n  - id: 1\n    assert: [{type: contains, value: x}]\n", "1", "1", 'no test has id "1"'),
    (suite(("t", [contains("a")]), ("t", [contains("b")])), "t", "1", "2 tests have id \"t\" (lines 3, 8)"),
    ("tests:\n  - id: t\n", "t", "1", 'test "t" has no assert list'),
    ("tests:\n  - id: t\n    assertions: [{type: contains, value: x}]\n", "t", "1",
     "has no assert list (it has \"assertions\""),
    ("tests:\n  - id: t\n    assert: [{type: contains, value: x}]\n    assertions: []\n", "t", "1",
     "has both assert and assertions"),
    ("tests:\n  - id: t\n    assert: [{type: contains, value: x}]\n    evaluators: []\n", "t", "1",
     "has both assert and evaluators"),
    ("tests:\n  - id: t\n    assert: {type: contains, value: x}\n", "t", "1", "must be a list, found a mapping"),
    ("tests:\n  - id: t\n    assert: contains\n", "t", "1", "must be a list, found a string"),
    ("tests:\n  - id: t\n    assert: []\n", "t", "1", "has 0 assertion(s)"),
    ("tests:\n  - id: t\n    assert: [{include: shared}]\n", "t", "1", "includes another file"),
    ("tests:\n  - id: t\n    assert: [12]\n", "t", "1", "must be a mapping, found an integer"),
    ("tests:\n  - id: t\n    assert: [[type, contains]]\n", "t", "1", "must be a mapping, found a list"),
    ("tests:\n  - id: t\n    assert: [~]\n", "t", "1", "must be a mapping, found null"),
]
for field in ("weight: 2", "required: true", "negate: true", "min_score: 0.5", "name: n", "threshold: 1",
              "config: {}", "transform: x", "provider: p", "value2: y", "Type: contains"):
    IMPORT_REJECTS.append((suite(("t", [contains("x", None, field)])), "t", "1",
                           f'has unsupported field(s) "{field.split(":")[0]}"'))
for kind in ("icontains", "not-contains", "contains-any", "contains-all", "Contains", "contains ", "regex"):
    IMPORT_REJECTS.append((suite(("t", [[f'type: "{kind}"', "value: x"]])), "t", "1", "only type: contains"))
IMPORT_REJECTS += [
    (suite(("t", [["value: x"]])), "t", "1", "has no type"),
    (suite(("t", [["type: [contains]", "value: x"]])), "t", "1", "has type a list"),
    (suite(("t", [["type: 1", "value: x"]])), "t", "1", "has type an integer"),
    (suite(("t", [["type: contains"]])), "t", "1", "has no value"),
    (suite(("t", [["type: contains", 'value: ""']])), "t", "1", "value is empty"),
]
for raw, kind in (("1_000", "an integer"), ("12", "an integer"), ("0x1F", "an integer"), ("1.5", "a number"),
                  (".nan", "a number"), ("true", "a boolean"), ("false", "a boolean"), ("null", "null"),
                  ("~", "null"), ("", "null"), ("2026-01-01", "a date"), ("2026-01-01T10:00:00Z", "a date"),
                  ("[Hello]", "a list"), ("{a: b}", "a mapping")):
    IMPORT_REJECTS.append((suite(("t", [["type: contains", f"value: {raw}"]])), "t", "1",
                           f"value must be a string, found {kind}"))
    IMPORT_REJECTS.append((suite(("t", [["type: contains", "value: x", f"metric: {raw}"]])),
                           "t", "1", f"metric must be a string, found {kind}"))
for marker in ("${", "{{", "}}", "{%", "{#"):
    IMPORT_REJECTS.append((suite(("t", [contains(f"a{marker}b")])), "t", "1", f'value contains "{marker}"'))
    IMPORT_REJECTS.append((suite(("t", [contains("ok", f"m{marker}")])), "t", "1", f'metric contains "{marker}"'))
IMPORT_REJECTS += [
    (suite(("t", [contains("x", "")])), "t", "1", "metric is empty"),
    (suite(("t", [contains("x", "   ")])), "t", "1", "metric is blank"),
    (suite(("t", [contains("x", "\t\n")])), "t", "1", "metric is blank"),
    (suite(("t", [contains("x", "\u3000")])), "t", "1", "metric is blank"),
    (suite(("t", [contains("${{ env.HOME }}")])), "t", "1", 'contains "${"'),
]


@pytest.mark.parametrize(("text", "test", "n", "message"), IMPORT_REJECTS,
                         ids=[f"{i}-{r[3][:30]}" for i, r in enumerate(IMPORT_REJECTS)])
def test_import_rejects(text, test, n, message):
    assert_rejected(imp(text, test=test, n=n), message)


STRICT_REJECTS = [
    # the strict-YAML rules, through both commands
    (b"tests: []\ntests: []\n", "duplicate key 'tests'"),
    (b"base: &b {type: contains, value: x}\ntests: []\n", "anchor &b is not allowed"),
    (b"tests: *t\n", "alias *t is not allowed"),
    (b"<<: {tests: []}\n", "merge key << is not allowed"),
    (b"tests: !include cases.yaml\n", "explicit tag !include is not allowed"),
    (b"tests: !!seq []\n", "explicit tag !!seq is not allowed"),
    (b"tests: []\n---\ntests: []\n", "several YAML documents"),
    (b"%YAML 1.1\n---\ntests: []\n", "%YAML directive"),
    (b"", "found none"),
    (b"name: caf\xe9\n", "not valid UTF-8"),
    ("tests: []\n".encode("utf-16"), "not valid UTF-8"),
    (b"name: a\x07b\n", "control character U+0007"),
    (b"name: a\x00b\n", "control character U+0000"),
    ("name: a\u2028b\n".encode(), "raw line separator U+2028"),
    (b"name: 'open\n", "invalid YAML"),
    (b"1: x\n", "mapping key must be a string"),
]


@pytest.mark.parametrize(("data", "message"), STRICT_REJECTS, ids=[m for _, m in STRICT_REJECTS])
def test_both_commands_enforce_strict_yaml(data, message):
    assert_rejected(imp(data), message)
    assert_rejected(exp(data), message)


def test_strict_yaml_rule_inside_the_selected_assertion_has_its_position():
    text = suite(("t", [["type: contains", "value: &v x"]]))
    assert_rejected(imp(text, test="t"), "<stdin>:7:16: anchor &v is not allowed")


@pytest.mark.parametrize("command", ["import", "export"])
def test_four_mib_exactly_is_read_and_one_byte_more_is_refused(command):
    base = (BASIC if command == "import" else grader("g", "Hello")).encode()
    pad = b"#" + b"x" * (4 * MiB - len(base) - 2) + b"\n"
    exact = base + pad
    assert len(exact) == 4 * MiB
    run = (lambda d: imp(d)) if command == "import" else (lambda d: exp(d))
    ok = run(exact)
    assert ok.code == 0, ok.err
    assert_rejected(run(exact + b"\n"), "larger than 4194304 bytes (4 MiB)")


@pytest.mark.parametrize("adapter", [
    "agentv-contains", "agentv-68df6d2-contains-v1",
    "agentv-68df6d2206cea61f721d0445b405efcb5e94aff1-contains-v1",
    "agentv-68df6d2206cea61f721d0445b405efcb5e94aff0-contains-v2",
    ADAPTER.upper(), ADAPTER + " ", "",
])
def test_unknown_adapter_ids_are_rejected(adapter):
    assert_rejected(imp(BASIC, adapter=adapter), "unknown interop dialect")
    assert_rejected(exp(grader("g", "x"), adapter=adapter), "unknown interop dialect")


def test_missing_options_are_one_line_errors():
    assert_rejected(cli("interop", "import", stdin=BASIC.encode()),
                    "missing required option(s): --adapter, --test, --assertion")
    assert_rejected(cli("interop", "import", "--adapter", ADAPTER, "--test", "t", stdin=b""), "--assertion")
    assert_rejected(cli("interop", "export", stdin=b""), "missing required option(s): --adapter")


# ---- export -------------------------------------------------------------------------------
def test_export_writes_one_assertion_with_an_explicit_metric():
    source = grader("agentv-contains", "Hello")
    res = exp(source)
    assert res.code == 0, res.err
    assert res.err == ""
    assert load_output(res.out) == {"type": "contains", "value": "Hello", "metric": "agentv-contains"}
    text = res.out.decode()
    assert text.startswith("# waza interop export: one AgentV assertion for a test's assert list")
    assert f"# source-sha256: {hashlib.sha256(source.encode()).hexdigest()} (advisory, unverified)\n" in text


def test_export_accepts_key_order_and_flow_style():
    res = exp('config: {contains_cs: ["a b"]}\ntype: text\nname: n\n')
    assert load_output(res.out) == {"type": "contains", "value": "a b", "metric": "n"}


EXPORT_REJECTS = [
    ("- name: g\n  type: text\n  config: {contains_cs: [x]}\n",
     "expected one native grader mapping (name, type, config), found a list"),
    ("text\n", "found a string"),
    (grader("g", "x") + "weight: 2\n", 'unsupported field(s) "weight"'),
    ("type: text\nconfig: {contains_cs: [x]}\n", "the grader has no name"),
    ("name: g\nconfig: {contains_cs: [x]}\n", "the grader has no type"),
    ("name: g\ntype: text\n", "the grader has no config"),
    ("name: g\ntype: program\nconfig: {contains_cs: [x]}\n", 'has type "program"; only type: text'),
    ("name: g\ntype: 1\nconfig: {contains_cs: [x]}\n", "has type an integer"),
    ("name: ''\ntype: text\nconfig: {contains_cs: [x]}\n", "the grader name is empty"),
    ("name: '  '\ntype: text\nconfig: {contains_cs: [x]}\n", "the grader's name is blank"),
    ("name: 5\ntype: text\nconfig: {contains_cs: [x]}\n", "the grader name must be a string, found an integer"),
    ("name: ~\ntype: text\nconfig: {contains_cs: [x]}\n", "found null"),
    ("name: g\ntype: text\nconfig: [contains_cs]\n", "config must be a mapping, found a list"),
    ("name: g\ntype: text\nconfig: {}\n", "config has no contains_cs list"),
    ("name: g\ntype: text\nconfig: {contains: [x]}\n", 'other than contains_cs ("contains")'),
    ("name: g\ntype: text\nconfig: {contains_cs: [x], regex_match: [y]}\n", '("regex_match")'),
    ("name: g\ntype: text\nconfig: {contains_cs: [x], not_contains_cs: [y]}\n", '("not_contains_cs")'),
    ("name: g\ntype: text\nconfig: {contains_cs: x}\n", "contains_cs must be a list of one string, found a string"),
    ("name: g\ntype: text\nconfig: {contains_cs: []}\n", "contains_cs has 0 entries"),
    ("name: g\ntype: text\nconfig: {contains_cs: [a, b]}\n", "contains_cs has 2 entries; export needs exactly one"),
    ("name: g\ntype: text\nconfig: {contains_cs: ['']}\n", "contains_cs entry is empty"),
    ("name: g\ntype: text\nconfig: {contains_cs: [1_000]}\n", "contains_cs entry must be a string, found an integer"),
    ("name: g\ntype: text\nconfig: {contains_cs: [2026-01-01]}\n", "found a date"),
    ("name: g\ntype: text\nconfig: {contains_cs: [true]}\n", "found a boolean"),
    ("name: g\ntype: text\nconfig: {contains_cs: [~]}\n", "found null"),
    ("name: g\ntype: text\nconfig: {contains_cs: [[x]]}\n", "found a list"),
]
for marker in ("${", "{{", "}}", "{%", "{#"):
    EXPORT_REJECTS.append((grader("g", f"x{marker}y"), f'contains_cs entry contains "{marker}"'))
    EXPORT_REJECTS.append((grader(f"g{marker}", "x"), f'the grader name contains "{marker}"'))


@pytest.mark.parametrize(("text", "message"), EXPORT_REJECTS,
                         ids=[f"{i}-{r[1][:30]}" for i, r in enumerate(EXPORT_REJECTS)])
def test_export_rejects(text, message):
    assert_rejected(exp(text), message)


# ---- list ---------------------------------------------------------------------------------
def test_list_shows_the_builtin_dialects():
    res = cli("interop", "list")
    assert res.code == 0, res.err
    lines = res.out.decode().splitlines()
    assert [line.split("  ")[0] for line in lines] == ["agentv", ADAPTER, "promptfoo"]
    assert "contains_cs" in lines[1]


def test_help_lists_the_three_commands():
    res = cli("interop", "--help")
    assert res.code == 0
    for word in ("list", "import", "export"):
        assert word in res.out.decode()
