"""The fast schema check never calls valid what jsonschema calls invalid.

Documents are generated around real task files (values of every JSON type, missing and
extra keys, booleans where integers go, 1.0 where an integer goes, long and empty
strings) and checked against the composed task schema and every grader's config schema.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.depth import examples
from waza_core.plugins import get_registry
from waza_core.suite import fastschema
from waza_core.suite import schema as schemas

REGISTRY = get_registry()
TASK = schemas.composed("task", REGISTRY, grader_configs=False)

BASE_TASK = {
    "id": "task-1", "name": "one", "description": "d", "tags": ["a", "b"], "enabled": True,
    "timeout_seconds": 30, "inputs": {"prompt": "Explain item 1.", "context": {"k": 1},
                                      "files": [{"path": "a.txt", "content": "x"}]},
    "graders": [{"type": "text", "name": "mentions", "weight": 1.0, "config": {"contains": ["item 1"]}}],
    "expected": {"output_contains": ["item"]},
}

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 2**70), st.floats(allow_nan=False, allow_infinity=False),
              st.sampled_from([0, 1, -1, 1.0, 0.5, "", "x", "text", True, False, 2**63, 2**64, -(2**63) - 1]),
              st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _mutate(doc, path, how, value):
    import copy

    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if how == "set":
        parent[last] = value
    elif how == "drop" and isinstance(parent, dict):
        del parent[last]
    elif how == "extra" and isinstance(parent, dict):
        parent[str(value)[:8] or "extra"] = value
    return doc


def _agree(schema, doc) -> None:
    fast = fastschema.checker(schema)
    if fast(doc):
        errors = list(Draft202012Validator(schema).iter_errors(doc))
        assert not errors, f"fast check said valid, jsonschema: {errors[0].message} for {doc!r}"


@settings(max_examples=examples(1500), deadline=None)
@given(data=st.data())
def test_task_documents(data):
    paths = list(_paths(BASE_TASK))
    doc = BASE_TASK
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        how = data.draw(st.sampled_from(["set", "set", "drop", "extra"]))
        doc = _mutate(doc, path, how, data.draw(values))
        paths = list(_paths(doc)) or [()]
    _agree(TASK, doc)


@pytest.mark.parametrize("name", REGISTRY.names("grader"))
def test_grader_configs(name):
    schema = REGISTRY.get("grader", name).config_schema or {"type": "object"}

    @settings(max_examples=examples(150), deadline=None)
    @given(doc=st.one_of(values, st.dictionaries(st.sampled_from(list(schema.get("properties", {})) or ["x"]),
                                                  values, max_size=4)))
    def run(doc):
        _agree(schema, doc)

    run()


def test_the_fast_check_is_used_for_plain_task_files():
    fast = fastschema.checker(TASK)
    assert fast is not fastschema.NO_CHECK
    assert fast(BASE_TASK)
    assert not fast({"id": "x"})  # no inputs


@pytest.mark.parametrize("doc", [
    {**BASE_TASK, "id": datetime.date(2026, 1, 1)},  # a date from ruamel.yaml's fallback
    {**BASE_TASK, "inputs": {"prompt": "p", "context": {1: "int key"}}},
    {**BASE_TASK, "timeout_seconds": 2**200},
])
def test_values_it_cannot_take_go_to_jsonschema(doc):
    assert fastschema.checker(TASK)(doc) is False


@pytest.mark.parametrize("schema", [
    {"anyOf": [{"type": "string", "pattern": "^a$"}]},  # a pattern off a plain property path
    {"type": "string", "format": "date"},
    {"type": "number", "multipleOf": 0.1},
    {"items": {"type": "array", "uniqueItems": True}},
    {"$ref": "https://example.invalid/s.json"},
    {"type": "object", "unevaluatedProperties": False},
    {"type": 12},                              # not a schema
])
def test_schemas_with_other_keywords_are_left_to_jsonschema(schema):
    assert fastschema.checker(schema) is fastschema.NO_CHECK


EVAL = schemas.composed("eval", REGISTRY, grader_configs=False)
BASE_EVAL = {"name": "e", "skill": "s", "config": {"executor": "cli", "models": ["a", "b"], "cli": {
    "command": ["agent", "{prompt}"], "output": "json", "output_path": "result", "usage_path": ".usage[0]"}},
    "tasks": ["tasks/*.yaml"]}
PATHS = st.sampled_from(["result", ".result", "a.b", "a\n", "result\n", "[0]", "[-1].x", "1a", "", "a..b", "a.b-c",
                         "é", "a b"])
MODELS = st.lists(st.sampled_from(["a", "b", "c", 1, 1.0, True, None, ["a"]]), max_size=4)


@settings(max_examples=examples(300), deadline=None)
@given(output_path=PATHS, usage_path=PATHS, models=MODELS, token=st.sampled_from(["GH_TOKEN", "1x", "A\n", 5]))
def test_eval_documents_with_patterns_and_unique_items(output_path, usage_path, models, token):
    """The eval schema's patterns (config.cli.*_path, github_token_env) and uniqueItems
    (config.models) are checked by Python as jsonschema checks them: the same answer."""
    doc = {**BASE_EVAL, "config": {**BASE_EVAL["config"], "models": models, "copilot": {"github_token_env": token},
                                   "cli": {**BASE_EVAL["config"]["cli"], "output_path": output_path,
                                           "usage_path": usage_path}}}
    fast = fastschema.checker(EVAL)(doc)
    slow = Draft202012Validator(EVAL).is_valid(doc)
    assert not fast or slow, doc
    if all(type(m) is str for m in models):  # decided without jsonschema: the same answer both ways
        assert fast == slow, doc


def test_the_eval_schema_is_checked_fast_with_its_patterns_in_python():
    check = fastschema.checker(EVAL)
    assert check is not fastschema.NO_CHECK and check(BASE_EVAL)
    trailing = {**BASE_EVAL, "config": {**BASE_EVAL["config"], "cli": {**BASE_EVAL["config"]["cli"],
                                                                          "output_path": "result\n"}}}
    # Python's $ matches before a final newline (Rust's does not): jsonschema's answer is kept
    assert check(trailing) == Draft202012Validator(EVAL).is_valid(trailing)


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "(unclosed"},
    {"type": "string", "pattern": "\\p{L}+"},      # Rust and ECMA read it; Python's re does not
    {"patternProperties": {"(": {}}},
    {"type": "strnig"},
    {"minLength": -1},
])
def test_schemas_jsonschema_refuses_are_never_taken_as_valid(schema):
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    assert fastschema.schema_is_valid(schema) is False
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema(schema)


def test_the_shipped_schemas_are_checked_fast():
    for kind in ("task", "eval"):
        assert fastschema.schema_is_valid(schemas.composed(kind, REGISTRY, grader_configs=False))
