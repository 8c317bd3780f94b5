"""Property tests: random YAML (nesting, anchors, aliases) through suite loading, and
random bytes and documents through the results reader, end in the documented error
type (SuiteError / YamlProblem / WazaError) or a result, never another exception."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.depth import examples
from waza_core.errors import SuiteError, WazaError
from waza_core.results.io import load_results
from waza_core.suite import yamlio
from waza_core.suite.load import load_suite

FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@st.composite
def yaml_node(draw, depth: int = 0, anchors: list | None = None) -> str:
    """One flow-style YAML node: scalars, lists, maps, anchors, aliases, deep runs."""
    anchors = [] if anchors is None else anchors
    choices = ["scalar", "alias", "deep"] + (["seq", "map"] if depth < 6 else [])
    kind = draw(st.sampled_from(choices))
    if kind == "scalar":
        return draw(st.sampled_from(["1", "-2.5", ".inf", ".nan", "~", "true", "'q'", '"d\\x1b"', "x", "9" * 50]))
    if kind == "alias":
        return f"*{draw(st.sampled_from(anchors))}" if anchors else "a"
    if kind == "deep":
        n = draw(st.sampled_from([1, 50, 99, 100, 101, 150, 1000, 5000]))
        return "[" * n + "]" * n
    items = draw(st.lists(yaml_node(depth + 1, anchors), max_size=4))
    body = ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) if kind == "map" else ", ".join(items)
    text = "{" + body + "}" if kind == "map" else "[" + body + "]"
    if draw(st.booleans()):
        name = f"n{len(anchors)}"
        anchors.append(name)
        text = f"&{name} {text}"
    return text


@st.composite
def block_nest(draw) -> str:
    """Block-style nesting to a random depth, mixing mappings and compact lists."""
    depth = draw(st.integers(min_value=1, max_value=300))
    lines, indent = [], 0
    for i in range(depth):
        if draw(st.booleans()):
            lines.append(" " * indent + f"k{i}:")
            indent += 1
        else:
            lines.append(" " * indent + "-")
            indent += 2
    lines.append(" " * indent + "leaf")
    return "\n".join(lines)


@st.composite
def task_text(draw) -> str:
    anchors: list[str] = []
    parts = ["id: t", "inputs: {prompt: p}"]
    for i in range(draw(st.integers(min_value=0, max_value=4))):
        key = draw(st.sampled_from(["tags", "x", "name", "timeout_seconds", f"y{i}"]))
        parts.append(f"{key}: {draw(yaml_node(0, anchors))}")
    if draw(st.booleans()):
        parts.append("nest:\n" + "\n".join("  " + ln for ln in draw(block_nest()).splitlines()))
    text = "\n".join(parts) + "\n"
    if draw(st.booleans()):  # a billion-laughs tail on top
        width = draw(st.integers(min_value=2, max_value=12))
        levels = draw(st.integers(min_value=2, max_value=9))
        bomb = ["bomb:", "  l0: &l0 [" + ", ".join(["1"] * width) + "]"]
        bomb += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
        text += "\n".join(bomb) + "\n"
    return text


LINE = re.compile(r"^\S*t\.yaml(:\d+:\d+)?: \S")


@settings(max_examples=examples(150), deadline=None, suppress_health_check=FIXTURE_OK)
@given(task_text())
def test_suite_loading_of_random_yaml_raises_only_suite_errors(make_suite, registry, text):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": text})
    try:
        load_suite(path, registry)
    except SuiteError as exc:
        assert exc.problems
        for line in exc.problems:
            assert LINE.match(line) and "\n" not in line and len(line) < 500, line


@settings(max_examples=examples(200), deadline=None)
@given(task_text())
def test_parse_raises_only_yaml_problems_and_respects_the_limits(text):
    try:
        data = yamlio.parse(text)
    except yamlio.YamlProblem as exc:
        assert "\n" not in exc.message
        return
    size, chars, depth = yamlio._expanded(data)
    assert size <= yamlio.MAX_EXPANDED_NODES and chars <= yamlio.MAX_EXPANDED_CHARS and depth <= yamlio.MAX_DEPTH


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=10)


@st.composite
def results_bytes(draw) -> bytes:
    kind = draw(st.sampled_from(["bytes", "json", "tasks", "deep", "truncated"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "deep":
        n = draw(st.sampled_from([10, 999, 1000, 5000, 200_000]))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        return ('{"tasks": [' + opener * n + "1" + closer * n + "]}").encode()
    doc = {"tasks": draw(st.lists(json_values, max_size=3)), "eval_name": draw(json_values)}
    data = json.dumps(doc).encode()
    if kind == "truncated":
        return data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return data


@settings(max_examples=examples(200), deadline=None, suppress_health_check=FIXTURE_OK)
@given(results_bytes())
def test_the_results_reader_raises_only_waza_errors(tmp_path, data):
    path = tmp_path / "r.json"
    path.write_bytes(data)
    try:
        doc = load_results(path)
    except WazaError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 600 + len(str(path))
        return
    assert isinstance(doc, dict) and isinstance(doc["tasks"], list)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=FIXTURE_OK)
@given(results_bytes())
def test_regrading_a_random_results_file_raises_only_waza_errors(make_suite, registry, tmp_path, data):
    from waza_core.run.regrade import regrade

    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}), registry)
    path = tmp_path / "r.json"
    path.write_bytes(data)
    try:
        regrade(suite, registry, load_results(path), workspace_dir=tmp_path)
    except WazaError:
        pass
