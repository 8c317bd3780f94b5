"""The JavaScript semantics the promptfoo dialect reproduces, checked against node itself.

* JavaScript ``new RegExp(p).test(s)`` vs the RE2 translation (waza's text grader) on
  seeded random patterns from the translated subset and random texts with the characters
  where JavaScript and RE2 differ (CR, U+2028, U+00A0, U+FEFF, tabs...), and the refusals;
* ``String(n)`` vs :func:`waza_interop._js.number_to_string` on seeded random numbers;
* ``JSON.stringify(v, null, 2)`` vs :func:`waza_interop._js.stringify`;
* promptfoo's comma-separated values vs :func:`waza_interop._csvsplit.split_values`.

Texts without characters outside the Basic Multilingual Plane: there JavaScript (without
the u flag) counts UTF-16 code units, the documented difference (docs/interop.md).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from waza_core import compile_regex
from waza_interop import _js, _jsregex
from waza_interop._csvsplit import split_values
from waza_interop._re2js import to_js

NODE = shutil.which("node")
ATOMS = ["a", "b", "Z", "0", "7", " ", "-", ".", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\.", "\\-",
         "[a-c]", "[^a]", "[\\s]", "[0-9_]", "[\\d.]", "\\n", "\\r", "\\t", "\\u00a0", "\\x41", "é", "\\u2028",
         "{", "}", "]", "\\/", "[-a]", "[a-]"]
QUANT = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?"]
TEXT_CHARS = ["a", "b", "c", "Z", "0", "7", " ", "\t", "\n", "\r", "\u2028", "\u2029", "\u00a0", "\ufeff",
              "\u3000", "\u000b", "\f", "-", ".", "_", "é", "É", "{", "}", "]", "/", "A", "\u0085", "x"]


def node(script: str, payload) -> list:
    assert NODE, "node is not on PATH: these tests need Node.js (as promptfoo does)"
    proc = subprocess.run([NODE, "-e", script], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def random_pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.12 and depth < 2:
            inner = random_pattern(rng, depth + 1)
            if rng.random() < 0.3:
                inner += "|" + random_pattern(rng, depth + 1)
            atom = rng.choice(["(", "(?:"]) + inner + ")"
        else:
            atom = rng.choice(ATOMS)
        quant = rng.choice(QUANT) if atom not in ("{", "}") else ""
        parts.append(atom + quant)
    pattern = "".join(parts)
    if rng.random() < 0.2:
        pattern = "^" + pattern
    if rng.random() < 0.2:
        pattern += "$"
    if rng.random() < 0.1:
        pattern = "\\b" + pattern
    return pattern


def test_translated_patterns_match_what_javascript_matches():
    rng = random.Random(20261204)
    patterns = []
    while len(patterns) < 400:
        p = random_pattern(rng)
        try:
            patterns.append((p, _jsregex.translate(p)))
        except _jsregex.NotRe2:
            continue
    texts = ["".join(rng.choice(TEXT_CHARS) for _ in range(rng.randint(0, 12))) for _ in range(60)]
    js = node("const {patterns, texts} = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(patterns.map(p => texts.map(t => new RegExp(p).test(t)))))",
              {"patterns": [p for p, _ in patterns], "texts": texts})
    diffs = []
    for (p, re2), row in zip(patterns, js, strict=True):
        rx = compile_regex(re2)
        for t, expected in zip(texts, row, strict=True):
            if bool(rx.search(t)) is not expected:
                diffs.append((p, re2, t, expected))
    assert diffs == []


@pytest.mark.parametrize("pattern", ["(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "(a)\\1", "\\k<x>", "(?i)a",
                                     "\\p{L}", "a{1001}", "[]", "[^]", "😀", "a**", "(", ")",
                                     "[\\S]", "\\u{41}", "\\q", "*a"])
def test_patterns_without_an_exact_translation_are_refused(pattern):
    with pytest.raises(_jsregex.NotRe2):
        _jsregex.translate(pattern)


def test_exported_patterns_match_what_re2_matches():
    """RE2 -> JavaScript (export-suite), on the translations of the random patterns."""
    rng = random.Random(7)
    pairs = []
    while len(pairs) < 200:
        try:
            re2 = _jsregex.translate(random_pattern(rng))
            pairs.append((re2, to_js(re2)))
        except _jsregex.NotRe2:
            continue
    for extra in ["\\Aab\\z", "a.b", "\\x{2028}", "[\\s]x", "\\d{2,}", "a{,3}", "x$"]:
        pairs.append((extra, to_js(extra)))
    texts = ["".join(rng.choice(TEXT_CHARS) for _ in range(rng.randint(0, 10))) for _ in range(50)]
    js = node("const {patterns, texts} = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(patterns.map(p => texts.map(t => new RegExp(p).test(t)))))",
              {"patterns": [j for _, j in pairs], "texts": texts})
    diffs = [(r, j, t) for (r, j), row in zip(pairs, js, strict=True) for t, ok in zip(texts, row, strict=True)
             if bool(compile_regex(r).search(t)) is not ok]
    assert diffs == []


def test_numbers_print_as_javascript_prints_them():
    rng = random.Random(42)
    numbers = [0.1, 1.0, -0.0, 1e21, 1e-7, 123456789012345680000.0, 0.000001, 1.5e-10, 2**53 - 1, -3, 100.0,
               5e-324, 1.7976931348623157e308, 123.456, 0.1 + 0.2]
    numbers += [rng.uniform(-1e6, 1e6) for _ in range(200)]
    numbers += [rng.random() * 10 ** rng.randint(-30, 30) for _ in range(300)]
    numbers += [rng.randint(-10**15, 10**15) for _ in range(100)]
    js = node("const ns = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(ns.map(n => String(n))))", numbers)
    assert [_js.number_to_string(n) for n in numbers] == js


def test_json_stringify_with_indent_is_javascripts():
    values = [[{"role": "user", "content": "a \"quoted\" \n line\u2028 \u00e9 \x7f \x01"}], {}, [], {"a": [],
              "b": {}, "c": [1, 2.5, None, True, 1e21]}, "plain", 3, [[[]]]]
    js = node("const vs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(vs.map(v => JSON.stringify(v, null, 2))))", values)
    assert [_js.stringify(v, 2) for v in values] == js


def test_comma_separated_values_split_as_promptfoo_splits_them():
    assert split_values('a, "b, c", d') == ["a", "b, c", "d"]
    assert split_values("a,,b ,") == ["a", "b"]
    assert split_values('"say \\"hi\\"", "x""y"') == ['say "hi"', 'x"y']
    assert split_values("\u00a0a\u00a0,b") == ["a", "b"]  # JavaScript's trim
    with pytest.raises(ValueError):
        split_values('"open')
    with pytest.raises(ValueError):
        split_values('"a" b')


def test_templates_render_as_nunjucks_renders_them():
    """The renderable subset, against the nunjucks promptfoo ships (autoescape off)."""
    from tests.interop import promptfoo_run as pf
    from waza_interop._nunjucks import Unrenderable, render

    variables = {"name": "Ada", "n": 3, "f": 0.5, "big": 1e21, "nul": None, "no": False, "yes": True,
                 "list": ["a", "b", 3], "obj": {"k": "v", "n": [1, 2]}, "pad": "  \u00a0hi \n", "empty": "",
                 "zero": 0}
    templates = ["{{ name }}", "{{name|upper}}", "{{ name | lower }}", "{{ missing }}", "{{ missing | default('x') }}",
                 "{{ nul | default('x') }}", "{{ nul | default('x', true) }}", "{{ empty | default(\"d\", true) }}",
                 "{{ zero | default(7, true) }}", "{{ no | default(1) }}", "{{ list }}", "{{ list | join(', ') }}",
                 "{{ list | join }}", "{{ obj | dump }}", "{{ obj | dump(2) }}", "{{ list | length }}",
                 "{{ name | length }}", "{{ missing | length }}", "{{ pad | trim }}", "{{ obj.k | safe }}",
                 "{{ nul | safe }}", "{{ big }}", "{{ f }}", "{{ yes }}", "{{ obj.n[1] }}", "{{ obj['k'] }}",
                 "{{ missing | dump }}", "{{ n | dump }}", "{{ name | safe | upper }}", "a {{ name }} b {{ n }}"]
    script = ("const nj = require(process.argv[1]); const env = new nj.Environment(null, {autoescape: false});"
              "const {templates, vars} = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(templates.map(t => env.renderString(t, vars))))")
    modules = pf.ORACLE / "node_modules" / "nunjucks"
    assert NODE, "node is not on PATH"
    proc = subprocess.run([NODE, "-e", script, str(modules)], input=json.dumps({"templates": templates,
                          "vars": variables}), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = json.loads(proc.stdout)
    got = [render(t, variables) for t in templates]
    assert got == expected
    for refused in ["{{ name | title }}", "{{ 'é' | upper }}", "{{ n + 1 }}", "{{ name | replace('a', 'b') }}",
                    "{{ env.HOME }}", "{% if n %}x{% endif %}"]:
        with pytest.raises(Unrenderable):
            render(refused, variables)
