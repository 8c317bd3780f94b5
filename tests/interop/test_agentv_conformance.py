"""Conformance with the real AgentV (@agentv/core, pinned in oracle/package-lock.json).

These tests run AgentV itself through ``oracle/oracle.mjs``; they fail, never skip, when
Node.js or the pinned package is missing (see conftest.py).
"""

from __future__ import annotations

import random

from tests.interop.helpers import contains, exp, grader, imp, load_output, native_grade, suite, suite_around
from waza_core.interop import TEMPLATE_MARKERS, quote

# ---- decisions and scores -----------------------------------------------------------------
LONG = "x" * 100_000
CURATED = [
    ("Hello world", "Hello"), ("hello world", "Hello"), ("HELLO", "Hello"), ("Hell", "Hello"), ("", "a"),
    ("a", "a"), ("aaa", "aa"), ("ab", "abc"), (" Hello ", " Hello "), ("Hello", " Hello"), ("Hello ", "Hello  "),
    # astral characters
    ("I \U0001f600 you", "\U0001f600"), ("I \U0001f600 you", "\U0001f601"), ("\U0001d518\U0001d52b", "\U0001d52b"),
    ("\U00020000\U00020001", "\U00020001"), ("\U0001f600\U0001f600", "\U0001f600\U0001f600\U0001f600"),
    ("\U0001f469\u200d\U0001f4bb", "\U0001f4bb"), ("\U0001f469\u200d\U0001f4bb", "\u200d"),
    ("\U0001f1eb\U0001f1f7", "\U0001f1f7"), ("\U0001f44d\U0001f3fd", "\U0001f44d"),
    ("\U0001f44d", "\U0001f44d\U0001f3fd"),
    ("\U0010fffd end", "\U0010fffd"),
    # combining marks: no normalisation on either side
    ("caf\u00e9", "e"), ("cafe\u0301", "e"), ("cafe\u0301", "\u00e9"), ("caf\u00e9", "e\u0301"),
    ("cafe\u0301", "\u0301"),
    ("a\u0308\u0323", "\u0323"), ("\u1100\u1161", "\uac00"),
    # line and paragraph separators, NEL, CR LF
    ("a\u2028b", "\u2028"), ("a\nb", "\u2028"), ("a\u2028b", "a\nb"), ("a\u2029b", "\u2029b"), ("a\x85b", "\x85"),
    ("a\r\nb", "a\nb"), ("a\r\nb", "\r\n"), ("a\rb", "\r"),
    # NUL and other controls
    ("a\x00b", "\x00"), ("a\x00b", "a\x00b"), ("ab", "\x00"), ("\x00", "\x00\x00"), ("\x07bell", "\x07"),
    ("tab\there", "\t"), ("x\x7fy", "\x7f"), ("\x1b[31mred", "\x1b[31m"),
    # BOM, NBSP, other spaces, noncharacters
    ("\ufeffHello", "Hello"), ("\ufeffHello", "\ufeff"), ("a\u00a0b", "a b"), ("a\u00a0b", "\u00a0"),
    ("\u3000", "\u3000"),
    ("x\ufffey", "\ufffe"), ("x\uffffy", "\uffff"),
    # case folding that neither side does
    ("stra\u00dfe", "STRASSE"), ("\u0130", "i"), ("\u01c5", "\u01c6"), ("\u00df", "ss"), ("\u03a3", "\u03c3"),
    # regex metacharacters are literal
    (".*", ".*"), ("abc", ".*"), ("a+b", "a+b"), ("[x]", "[x]"), ("^$", "^"), ("(a|b)", "a|b"), ("\\d", "\\d"),
    # quotes and YAML-looking text
    ('say "hi"', '"hi"'), ("it's", "'"), ("- x", "- x"), ("key: v", ": "), ("# c", "#"), ("&a *a !t", "*a"),
    ("/etc/passwd", "/etc/passwd"), ("C:\\path", "\\"),
    # long strings
    (LONG + "needle", "needle"), (LONG, LONG + "x"), (LONG, LONG), ("ab" * 50_000, "ba" * 49_999),
    ("\U0001f600" * 20_000, "\U0001f600" * 3), ("\U0001f600" * 20_000, "\U0001f600x"), ("a" * 65_536, "a" * 65_536),
]

ALPHABET = list("aAbB zZ09.-_") + ["\u00e9", "e\u0301", "\u0301", "\U0001f600", "\U0001f469\u200d\U0001f4bb", "\u200d",
                                    "\x00", "\u2028", "\n", "\t", "\u00df", "\ufeff", "\U00020000", "\uac00", "\u05d0"]


def _random_pairs(count: int, seed: int = 20260505) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    while len(pairs) < count:
        output = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        if output and rng.random() < 0.5:
            i = rng.randrange(len(output))
            value = output[i:rng.randint(i + 1, len(output))]
        else:
            value = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 4)))
        pairs.append((output, value))
    return pairs


def _importable(value: str) -> bool:
    return value != "" and not any(m in value for m in TEMPLATE_MARKERS)


def test_native_contains_cs_decides_and_scores_like_agentv(agentv):
    pairs = [p for p in CURATED + _random_pairs(400) if _importable(p[1])]
    answers = agentv.call([{"op": "contains", "pairs": pairs}])[0]
    positives = sum(a["passed"] for a in answers)
    assert len(pairs) >= 200 and positives >= 50 and len(pairs) - positives >= 50

    imported: dict[str, str] = {}
    for (output, value), agent in zip(pairs, answers, strict=True):
        if value not in imported:  # the native grader comes from `waza interop import`
            res = imp(suite(("t", [contains(value)])), test="t")
            assert res.code == 0, (value, res.err)
            imported[value] = load_output(res.out)["config"]["contains_cs"][0]
        native = native_grade(imported[value], output)
        assert agent["score"] in (0, 1) and agent["grader_score"] == agent["score"]
        assert agent["grader_verdict"] == ("pass" if agent["passed"] else "fail")
        assert (native.score, native.passed) == (float(agent["score"]), agent["passed"]), (output[:80], value)


# ---- export -> AgentV's suite loader ------------------------------------------------------
NAMES_NEEDLES = [
    ("agentv-contains", "Hello"), ("my metric", "a b"), ("m", "\U0001f600"), ("m\u2028", "\u2028"), ("x", "\x00"),
    ("x", "e\u0301"), ("x", '"quoted"'), ("x", "'single'"), ("x", "# not a comment"), ("x", "key: value"),
    ("x", "- item"), ("x", " lead and trail "), ("x", "\t"), ("x", "\\"), ("x", "yes"), ("x", "null"), ("x", "1_000"),
    ("x", "2026-01-01"), ("x", "/etc/passwd"), ("x", "./cases.yaml"), ("x", "\ufeff"), ("x", "\x85"), ("x", "a\r\nb"),
    ("x", "\ufffe"), ("x", "{a}"), ("x", "[1]"), ("x", "&a"), ("x", "*a"), ("x", "!tag"), ("x", "%"), ("x", "@"),
    ("x", "`"), ("x", "~"), ("x", "<<"), ("x", "{"), ("x", "$"), ("x", "}"), ("x", "a" * 5000),
    ("\u00e9\u00e8", "\u05d0\u05d1"), ("name with: colon", "value with # hash"),
]


def _random_strings(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = "".join(rng.choice(ALPHABET + list("\"'#:-&*!|>{}[]%@`\\")) for _ in range(rng.randint(1, 12)))
        if _importable(s) and s.strip():
            out.append(s)
    return out


SIBLINGS = ["Sibling criterion", ["type: regex", "value: sib+"], ["type: contains", "value: sibling-value"]]


def test_every_exported_assertion_loads_in_agentv_as_the_same_contains_check(agentv):
    cases = NAMES_NEEDLES + list(zip(_random_strings(60, 7), _random_strings(60, 8), strict=True))
    ops, expected = [], []
    for i, (name, needle) in enumerate(cases):
        res = exp(grader(name, needle))
        assert res.code == 0, (name, needle, res.err)
        before, after = [(SIBLINGS, []), ([], SIBLINGS), (SIBLINGS[:2], SIBLINGS[2:])][i % 3]
        outputs = [f"start {needle} end", "nothing here", needle.swapcase(), needle[:-1]]
        ops.append({"op": "load", "yaml": suite_around(res.out.decode(), before, after), "outputs": outputs})
        expected.append((name, needle, outputs))

    for (_name, needle, outputs), answer in zip(expected, agentv.call(ops), strict=True):
        assert "error" not in answer, answer
        assert not [line for line in answer["logs"] if "Skipping" in line], answer["logs"]
        [test] = [t for t in answer["tests"] if t["id"] == "t"]
        mine = [a for a in test["assertions"] if a["type"] == "contains" and a["value"] == needle]
        assert len(mine) == 1, test["assertions"]
        # Nothing that changes the result upstream: no weight, required, min_score or negate.
        # @agentv/core 4.42.4 names assertions from `name` and ignores `metric` (newer AgentV,
        # including the pinned dialect, reads `metric`), so its generated name is expected here.
        assert mine[0] == {"name": f"contains-{needle}", "type": "contains", "value": needle}
        [row] = [r for r in answer["scores"] if r["test"] == "t" and r["value"] == needle]
        for output, agent in zip(outputs, row["grades"], strict=True):
            native = native_grade(needle, output)
            assert (native.score, native.passed) == (float(agent["score"]), agent["verdict"] == "pass")


# ---- import picks what AgentV sees --------------------------------------------------------
OTHER_TESTS = [("first-test", [contains("decoy")]), ("third-test", [contains("decoy"), "criterion"])]
SELECTED_STYLES = [
    # (raw YAML lines of the selected assertion, value, metric)
    (["type: contains", "value: Hello"], "Hello", None),
    (["value: Hello", "type: contains"], "Hello", None),
    (["{type: contains, value: Hello, metric: greet}"], "Hello", "greet"),
    (["type: contains", "value: 'it''s'"], "it's", None),
    (["type: contains", 'value: "tab\\there \\u00e9 \\U0001F600 \\x41 \\N\\_\\L\\P \\0 \\/"'],
     "tab\there \u00e9 \U0001f600 A \x85\u00a0\u2028\u2029 \x00 /", None),
    (["type: contains", "value: |-", "  two", "  lines"], "two\nlines", None),
    (["type: contains", "value: |", "  keep"], "keep\n", None),
    (["type: contains", "value: >-", "  folded", "  text"], "folded text", None),
    (["type: contains", "value: plain text with  spaces # and a comment"], "plain text with  spaces", None),
    (["type: contains  # why", "# between", "value: yes"], "yes", None),
    (["type: contains", "value: '1_000'", "metric: '2026'"], "1_000", "2026"),
    (["type: contains", "value: /etc/passwd", "metric: ./m.yaml"], "/etc/passwd", "./m.yaml"),
    (["type: contains", 'value: "\U0001f469\u200d\U0001f4bb caf\u00e9 e\u0301"'],
     "\U0001f469\u200d\U0001f4bb caf\u00e9 e\u0301", None),
    (["type: contains", "value: >", "  a", "", "  b"], "a\nb\n", None),
]
SIBLING_SETS = [
    ([], []),
    (["A string criterion"], []),
    ([], ["A string criterion", ["type: regex", "value: x"]]),
    ([["type: is-json", "required: true"], "criterion one"], [["type: equals", "value: '4'"], "criterion two"]),
    ([["type: contains", "value: sibling", "weight: 2"], ["type: icontains", "value: HELLO"]],
     [["type: regex", "value: y"]]),
]


def test_import_picks_the_assertion_agentv_sees_at_that_position(agentv):
    cases, ops = [], []
    for i, (lines, value, metric) in enumerate(SELECTED_STYLES):
        for j, (before, after) in enumerate(SIBLING_SETS):
            if (i + j) % 2 and j:  # every style with no siblings, and half of the sibling layouts
                continue
            text = suite(OTHER_TESTS[0], ("picked", before + [lines] + after), OTHER_TESTS[1])
            cases.append((text, len(before), value, metric))
            ops.append({"op": "select", "yaml": text, "test": "picked", "index": len(before)})
    assert len(cases) >= 40

    for (text, index, value, metric), seen in zip(cases, agentv.call(ops), strict=True):
        assert "error" not in seen, seen
        res = imp(text, test="picked", n=str(index + 1))
        assert res.code == 0, (text, res.err)
        native = load_output(res.out)
        raw = {"type": "contains", "value": value, **({"metric": metric} if metric is not None else {})}
        assert seen["raw"] == raw, (text, seen["raw"])
        assert [a for a in seen["removed"] if a["type"] == "contains"] == [
            {"name": f"contains-{value}", "type": "contains", "value": value}], seen["removed"]
        assert native == {"name": metric or "agentv-contains", "type": "text", "config": {"contains_cs": [value]}}


STYLE_CHARS = list("ab Z9.-_:#'\"\\{}[],&*!|>%@`?") + ["\u00e9", "\U0001f600", "\t", "\u00a0", "e\u0301", "\x85"]


def _render(value: str, style: str) -> list[str]:
    if style == "plain":
        return ["type: contains", f"value: {value}"]
    if style == "single":
        return ["type: contains", "value: '" + value.replace("'", "''") + "'"]
    if style == "double":
        return ["type: contains", f"value: {quote(value)}"]
    if style == "flow":
        return [f"{{type: contains, value: {value}}}"]
    indicator = {"literal": "|", "literal-strip": "|-", "folded": ">", "folded-strip": ">-"}[style]
    return ["type: contains", f"value: {indicator}"] + ["  " + line for line in value.split("\n")]


def test_whenever_import_reads_a_value_agentv_reads_the_same_value(agentv):
    """Generated values in every YAML style: waza may refuse more than AgentV, never read otherwise."""
    rng = random.Random(42)
    styles = ["plain", "single", "double", "flow", "literal", "literal-strip", "folded", "folded-strip"]
    cases, ops = [], []
    for k in range(240):
        value = "".join(rng.choice(STYLE_CHARS) for _ in range(rng.randint(1, 10)))
        if rng.random() < 0.2:
            value += "\n" + "".join(rng.choice(STYLE_CHARS) for _ in range(rng.randint(1, 5)))
        text = suite(("picked", [["type: regex", "value: x"], _render(value, styles[k % len(styles)])]))
        cases.append(text)
        ops.append({"op": "select", "yaml": text, "test": "picked", "index": 1})
    accepted = 0
    for text, seen in zip(cases, agentv.call(ops), strict=True):
        res = imp(text, test="picked", n="2")
        if res.code != 0:
            continue
        accepted += 1
        value = load_output(res.out)["config"]["contains_cs"][0]
        assert "error" not in seen, (text, seen)
        assert isinstance(seen["raw"], dict) and seen["raw"].get("value") == value, (text, seen["raw"], value)
        assert [a["value"] for a in seen["removed"] if a["type"] == "contains"] == [value], (text, seen)
    assert accepted >= 120, accepted


def test_the_example_suite_means_the_same_to_agentv(agentv):
    from tests.interop.helpers import REPO

    text = (REPO / "examples" / "interop" / "suite.yaml").read_text(encoding="utf-8")
    picks = [("contains-check", 1, "Hello", None), ("points-to-docs", 2, "docs/interop.md", "points-to-docs")]
    answers = agentv.call([{"op": "select", "yaml": text, "test": t, "index": n - 1} for t, n, _, _ in picks])
    for (test, n, value, metric), seen in zip(picks, answers, strict=True):
        assert "error" not in seen and not seen["logs"], seen
        assert [a for a in seen["removed"] if a["type"] == "contains"] == [
            {"name": f"contains-{value}", "type": "contains", "value": value}]
        res = imp(text, test=test, n=str(n))
        assert load_output(res.out) == {"name": metric or "agentv-contains", "type": "text",
                                        "config": {"contains_cs": [value]}}
