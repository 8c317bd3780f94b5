"""The fast YAML path reads every file it accepts to exactly what ruamel.yaml reads.

The property checked everywhere: ``fastyaml.load(text)`` is either ``MISS`` or a value
equal to ``yamlio.parse(text, fast=False)`` (ruamel.yaml's safe loader), with the same
types (``True`` is not ``1``, ``1.0`` is not ``1``) and the same key order; and when
ruamel.yaml refuses a text, the fast path never accepts it.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core.suite import fastyaml, yamlio

REPO = Path(__file__).resolve().parents[2]
_REFUSED = object()


def _exact(text: str):
    try:
        return yamlio.parse(text, fast=False)
    except yamlio.YamlProblem:
        return _REFUSED


def same(a, b) -> bool:
    """Equal values of the same types, mappings in the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(k, k2) for k, k2 in zip(a, b, strict=True)) and all(
            same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def check(text: str) -> object:
    """Assert the property for ``text``; return the fast result."""
    fast = fastyaml.load(text)
    if fast is fastyaml.MISS:
        return fast
    exact = _exact(text)
    assert exact is not _REFUSED, f"the fast path read a text ruamel.yaml refuses: {text!r}"
    assert same(fast, exact), f"{text!r}: fast {fast!r} != ruamel {exact!r}"
    return fast


# -- the corners named in the module doc -----------------------------------------------------------

@pytest.mark.parametrize("text", [
    "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\nh: NO\n",  # YAML 1.1 booleans: text in 1.2
    "a: true\nb: False\nc: NULL\nd: ~\ne:\nf: null\n",
    "a: 1\nb: -2\nc: +3\nd: 0\ne: 1.5\nf: -0.25\ng: 2.0e3\nh: 1.0E-2\n",
    "a: 'quoted: yes'\nb: \"010\"\nc: |\n  block\n  text\nd: >\n  folded\n  text\n",
    "list:\n  - a\n  - [x, 'y', 1, true]\n  - {k: v, n: 2}\n",
    "id: x\ninputs:\n  prompt: \"Explain item 1.\"\ngraders:\n  - type: text\n    config: {contains: [\"item 1\"]}\n",
    "key with spaces: value with spaces # a comment\n",
    "unicode: é ☃ 🎉\n",
    "",
    "# only a comment\n",
    "plain scalar",
])
def test_common_files_take_the_fast_path(text):
    assert check(text) is not fastyaml.MISS


@pytest.mark.parametrize("text", [
    "a: 010\n",            # octal in 1.1, ten in 1.2 (ruamel)
    "a: 0o10\n",
    "a: 0x1F\n",
    "a: 1_000\n",
    "a: 1e3\n",            # a string in 1.1, a float in 1.2
    "a: 1:20\n",           # sexagesimal in 1.1
    "a: 2026-01-01\n",     # a date
    "a: 2026-01-01T10:00:00Z\n",
    "a: .5\n",
    "a: .inf\n",
    "a: .NaN\n",
    "a: -\n",
    "a: =\n",
    "base: &b {x: 1}\nother:\n  <<: *b\n",  # merge key and alias
    "a: &x 1\nb: *x\n",
    "a: 1\na: 2\n",        # ruamel refuses duplicate keys
    "a: !!str 123\n",
    "a: !!binary aGk=\n",
    "a: !custom x\n",
    "a: ! 12\n",
    "a: !fast-plain x\n",
    "? [a, b]\n: c\n",     # a list as a key
    "%YAML 1.1\n---\na: yes\n",
    "a: 1\n---\nb: 2\n",   # two documents
    "a: [b:c]\n",          # libyaml 0.2 reads it, 0.1.7 does not
    "a: [b?c]\n",
    "a: b\u2028c\n",       # a line separator: 1.1 and 1.2 differ
    "a: \ufeffb\n",
    "a: [unclosed\n",
    "a: 1" + "0" * 4500 + "\n",  # more digits than int() takes
])
def test_corners_go_to_ruamel(text):
    assert fastyaml.load(text) is fastyaml.MISS
    check(text)


def test_an_anchor_without_alias_is_read_fast():
    assert check("a: &x 1\nb: 2\n") == {"a": 1, "b": 2}


def test_errors_keep_their_position_through_the_fallback():
    with pytest.raises(yamlio.YamlProblem) as exc:
        yamlio.parse("a: 1\nb: [2\n")
    assert exc.value.line is not None
    with pytest.raises(yamlio.YamlProblem) as exc:
        yamlio.parse("a: 1\nb: 2\na: 3\n")
    assert (exc.value.line, exc.value.col) == (3, 1) and "duplicate key 'a'" in exc.value.message


# -- every suite file in the repository and every YAML text in the tests ----------------------------

def _repo_yaml_files() -> list[Path]:
    out = []
    for pattern in ("*.yaml", "*.yml"):
        out += [p for p in REPO.rglob(pattern) if ".venv" not in p.parts and "node_modules" not in p.parts]
    return sorted(out)


def _test_yaml_texts() -> list[str]:
    """String constants of the test files that look like YAML documents (several lines with a key)."""
    texts = set()
    for py in sorted((REPO / "tests").rglob("*.py")):
        try:
            tree = ast.parse(py.read_text("utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                s = node.value
                if "\n" in s and ":" in s and len(s) < 20000:
                    texts.add(s)
    return sorted(texts)


def test_every_repository_yaml_file_reads_the_same():
    files = _repo_yaml_files()
    assert len(files) > 20
    fast = 0
    for p in files:
        text = p.read_text("utf-8-sig")
        if check(text) is not fastyaml.MISS:
            fast += 1
    assert fast > len(files) // 2  # the fast path is the common case


def test_every_yaml_text_in_the_tests_reads_the_same():
    texts = _test_yaml_texts()
    assert len(texts) > 200
    for text in texts:
        if yamlio.depth_bound(text) <= yamlio.MAX_DEPTH:
            check(text)


# -- generated YAML ---------------------------------------------------------------------------------

TRICKY = ["yes", "no", "on", "off", "y", "n", "Y", "N", "Yes", "NO", "On", "OFF", "true", "True", "TRUE",
          "false", "FALSE", "null", "Null", "NULL", "~", "", "0", "-0", "+0", "00", "010", "0o10", "0x1F",
          "0b101", "1_000", "1e3", "1E3", "1.5", "1.", ".5", "-1.5", "+1.5", "1.5e3", "1.5e+3", "1.5E-3",
          "-.inf", ".inf", ".Inf", ".nan", "1:20", "1:20:30.5", "2026-01-01", "2026-1-1",
          "2026-01-01 10:00:00", "2026-01-01T10:00:00Z", "<<", "=", "-", "--", "- a", "a: b", "a:b", "a?b",
          "? a", "a #b", "a#b", "#a", "&a", "*a", "!a", "!!str", "%a", "@a", "`a", "'a", '"a', "a'b",
          "a\"b", "|", ">", "[a]", "{a: b}", "a,b", "12345678901234567890", "3.14159265358979323846",
          "1e400", "0.1", "123abc", "é", "☃", "a\tb", " a", "a ", "a\\nb", "\\", "TRUE ", "nULL", "yes!"]


@st.composite
def scalars(draw):
    value = draw(st.one_of(st.sampled_from(TRICKY),
                           st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)))
    style = draw(st.sampled_from(["plain", "plain", "single", "double", "literal"]))
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    if style == "double":
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style == "literal":
        return "|\n" + "".join("  " + line + "\n" for line in (value or "x").split("\n"))
    return value


def _render(tree, indent: int, draw) -> str:
    pad = " " * indent
    kind, body = tree
    if kind == "scalar":
        return body
    if kind == "flow-seq":
        return "[" + ", ".join(body) + "]"
    if kind == "flow-map":
        return "{" + ", ".join(f"{k}: {v}" for k, v in body) + "}"
    lines = []
    if kind == "seq":
        for item in body:
            text = _render(item, indent + 2, draw)
            lines.append(f"{pad}- {text}" if not text.startswith("\n") else f"{pad}-{text}")
    else:
        for key, item in body:
            text = _render(item, indent + 2, draw)
            lines.append(f"{pad}{key}: {text}" if not text.startswith("\n") else f"{pad}{key}:{text}")
    return "\n" + "\n".join(lines)


keys = st.one_of(st.sampled_from(["id", "name", "a", "b", "yes", "on", "1", "010", "null", "1.5", "<<", "x y",
                                  "'q'", '"d"', "é", "true"]),
                 st.text("abcxyz_-", min_size=1, max_size=5))
flat = st.one_of(
    scalars().map(lambda s: ("scalar", s)),
    st.lists(st.sampled_from(TRICKY[:60]), max_size=4).map(lambda xs: ("flow-seq", xs)),
    st.lists(st.tuples(keys, st.sampled_from(TRICKY[:60])), max_size=3).map(lambda xs: ("flow-map", xs)),
)
trees = st.recursive(
    flat,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map(lambda xs: ("seq", xs)),
        st.lists(st.tuples(keys, inner), min_size=1, max_size=4).map(lambda xs: ("map", xs)),
    ),
    max_leaves=12,
)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, data=st.data())
def test_generated_documents_read_the_same(tree, data):
    text = _render(tree, 0, data.draw)
    text = text[1:] + "\n" if text.startswith("\n") else text + "\n"
    check(text)


YAMLISH = st.text(alphabet=list("ab1 0.:-[]{},'\"#&*!|>?%<=~\n\t\\eEyYnNoOtT_+x"), max_size=40)


@settings(max_examples=examples(600), deadline=None)
@given(text=YAMLISH)
def test_yaml_like_noise_reads_the_same(text):
    check(text)


def test_non_finite_numbers_are_still_found_after_either_path():
    assert fastyaml.load("a: 1.0e999\n") is fastyaml.MISS  # inf: ruamel.yaml's path
    doc = yamlio.parse("a: 1.0e999\nb: -1.0e999\n")
    assert [p for p, _ in yamlio.non_finite(doc)] == [("a",), ("b",)]
    doc = yamlio.parse("a: 1.5\nb: [.inf]\n")
    assert [p for p, _ in yamlio.non_finite(doc)] == [("b", 0)]
    doc = yamlio.parse("a: 1\nb: text\n")  # no fraction in the text: nothing to walk
    assert yamlio.non_finite(doc) == [] and yamlio.non_finite({"x": float("nan")}) != []


def test_a_first_load_whose_files_all_take_the_fast_path_imports_no_ruamel_parser(make_suite, tmp_path):
    """ruamel.yaml (~24 ms to import) is for files the fast path cannot read and for errors:
    a first load of plain files never imports its constructor; a file it must read still
    gets ruamel's error with its line."""
    import os
    import subprocess
    import sys

    from tests.conftest import BASIC_EVAL

    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: hello}\n"})
    code = ("import sys\nfrom waza_core.cli import main\n"
            "try:\n    main(['validate', %r, '-q'])\nexcept SystemExit as e:\n    print('exit', e.code)\n"
            "print('ruamel.yaml.constructor' in sys.modules)") % str(path)
    env = {**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1", "WAZA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["exit", "0", "False"], out.stderr
    (path.parent / "tasks" / "b.yaml").write_text("id: b\ninputs: {prompt: [unclosed\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["exit", "2", "True"], out.stderr
    assert "b.yaml:2:" in out.stderr or "b.yaml:3:" in out.stderr
