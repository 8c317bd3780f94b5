"""Hostile input: whatever bytes a suite file holds, loading ends in a Suite or a
SuiteError with file:line messages, never another exception."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.depth import examples
from waza_core.errors import SuiteError
from waza_core.suite.load import load_suite

yaml_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                         st.text(max_size=20))
yaml_values = st.recursive(yaml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=12)
KEYS = ["id", "name", "inputs", "graders", "expected", "tags", "enabled", "timeout_seconds", "context_dir",
        "prompt", "files", "type", "config", "contains", "regex_match"]


def check(make_suite, registry, text: str | bytes) -> None:
    path = make_suite(BASIC_EVAL, {})
    task = path.parent / "tasks" / "t.yaml"
    task.parent.mkdir(exist_ok=True)
    task.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    try:
        load_suite(path, registry)
    except SuiteError as exc:
        assert exc.problems
        for line in exc.problems:
            assert re.match(r"^\S*t\.yaml(:\d+:\d+)?: \S", line), line


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_arbitrary_bytes(make_suite, registry, data):
    check(make_suite, registry, data)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(KEYS), yaml_values, max_size=6))
def test_arbitrary_documents_of_known_keys(make_suite, registry, doc):
    import json

    check(make_suite, registry, json.dumps(doc))  # JSON is YAML: any structure, known key names


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list("{}[]:-&*!|>'\"#%@ \n\tab1")), max_size=60))
def test_yaml_punctuation_soup(make_suite, registry, text):
    check(make_suite, registry, text)


grader_entries = st.lists(st.dictionaries(
    st.sampled_from(["type", "name", "weight", "config"]),
    st.one_of(st.sampled_from(["text", "txt", "program"]), yaml_values,
              st.dictionaries(st.sampled_from(["contains", "regex_match", "not_contains_cs", "bogus"]),
                              st.one_of(st.lists(st.sampled_from(["a", "(", "[z-a]", "ok", "*"]), max_size=3),
                                        yaml_values), max_size=3)),
    max_size=4), max_size=3)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(grader_entries)
def test_arbitrary_grader_entries(make_suite, registry, graders):
    import json

    check(make_suite, registry, json.dumps({"id": "t", "inputs": {"prompt": "p"}, "graders": graders}))


def test_a_hand_edited_results_file_regrades_or_fails_cleanly(make_suite, registry):
    """Any field of a saved results file replaced by a value of another type: ``regrade``
    ends in a report or a WazaError, never another exception (a traceback in `waza grade`)."""
    import copy

    from waza_core.errors import WazaError
    from waza_core.results.codec import results_to_json
    from waza_core.run.engine import Engine, RunOptions
    from waza_core.run.regrade import regrade

    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [mock]}}\n"
    suite = load_suite(make_suite(ev, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"}), registry)
    doc = results_to_json(Engine(suite, registry, RunOptions()).run())
    doc["tasks"].append(copy.deepcopy(doc["tasks"][0]) | {"test_id": "not-in-the-suite"})  # kept as is

    def paths(x, p=()):
        yield p
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, v in items:
            yield from paths(v, p + (k,))

    tried = 0
    for p in [p for p in paths(doc) if p]:
        for junk in (1, "x", [1], None, {"a": 1}, -1.5, True):
            bad = copy.deepcopy(doc)
            holder = bad
            for k in p[:-1]:
                holder = holder[k]
            holder[p[-1]] = junk
            try:
                regrade(suite, registry, bad, workspace_dir=str(suite.dir))
            except WazaError:
                pass
            tried += 1
    assert tried > 500
