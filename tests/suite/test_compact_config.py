"""A grader of a task whose document the suite cache holds keeps its ``config`` as compact
JSON (``GraderSpec.config`` decodes it on access): the same specs as from a dict, equal,
shown alike, read alike by the graders, on the first load (which stores the document) and
on a warm one."""

from __future__ import annotations

import pickle

import attrs

from tests.conftest import BASIC_EVAL
from waza_core.model import GraderSpec
from waza_core.suite.load import load_suite

TASK = """id: t1
inputs: {prompt: "say item 5 and é"}
graders:
  - type: text
    name: mentions
    weight: 2
    config: {contains: ["item 5", "é"], not_contains: ["x\\u2028y"]}
"""


def _as_dicts(spec: GraderSpec) -> GraderSpec:
    return attrs.evolve(spec, config=spec.config)


def test_cold_and_warm_specs_keep_the_config_as_json_and_equal_the_dict_form(make_suite, registry, monkeypatch):
    path = make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK})
    cold = load_suite(path, registry).tasks[0]
    warm = load_suite(path, registry).tasks[0]
    assert warm.raw_json is not None  # the second load came from the cache
    expected = {"contains": ["item 5", "é"], "not_contains": ["x\u2028y"]}
    for task in (cold, warm):
        (spec,) = task.graders
        assert isinstance(spec._config, bytes)  # noqa: SLF001 - what the change is about
        assert spec.config == expected and list(spec.config) == ["contains", "not_contains"]
        assert spec.config is not spec.config  # a new dict each access: read it, do not change it
        plain = _as_dicts(spec)
        assert isinstance(plain._config, dict) and plain == spec and spec == plain  # noqa: SLF001
        assert repr(spec) == repr(plain) and "config={'contains'" in repr(spec)
        assert pickle.loads(pickle.dumps(spec)) == spec
    monkeypatch.setenv("WAZA_NO_CACHE", "1")
    uncached = load_suite(path, registry).tasks[0]
    assert isinstance(uncached.graders[0]._config, dict)  # noqa: SLF001 - no cache, no JSON kept
    assert uncached.graders == cold.graders == warm.graders


def test_a_config_json_cannot_hold_as_utf_8_stays_a_dict(monkeypatch):
    from waza_core.suite import load as load_mod

    entry = {"type": "text", "name": "t", "config": {"contains": ["\ud800"]}}
    (spec,) = load_mod._grader_specs([entry], "t.yaml", shown="t.yaml", compact=True)
    assert spec._config == {"contains": ["\ud800"]}  # noqa: SLF001
