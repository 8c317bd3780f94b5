"""``TaskSpec.may_hold``: a cached task's compact JSON is searched for a key before its
document is decoded; "no" must mean the decoded document holds no such string anywhere,
and the mock plans built with it must be those built from the decoded documents."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.depth import examples
from waza_core.mocks.run import SuiteMocks
from waza_core import model
from waza_core.model import TaskSpec, tasks_that_may_hold
from waza_core.plugins import get_registry
from waza_core.suite.load import load_suite

KEYS = ["command_mocks", "repos", "workdir", "environment", "prompt", "x\u00e9"]
_docs = st.recursive(st.one_of(st.none(), st.integers(), st.sampled_from(KEYS), st.text(max_size=6)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner,
                                                             max_size=3)), max_leaves=12)


def _strings(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in _strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return {value} if isinstance(value, str) else set()


@settings(max_examples=examples(300), deadline=None)
@given(_docs, st.booleans())
def test_no_means_the_document_holds_none_of_the_keys(doc, ascii_only):
    blob = json.dumps(doc).encode() if ascii_only else msgspec.json.encode(doc)  # json: \\u escapes
    task = _task(blob)
    for key in KEYS[:4]:
        if not task.may_hold(key.encode()):
            assert not any(key in s for s in _strings(doc))


def _task(raw) -> TaskSpec:
    return TaskSpec(id="t", name="t", prompt="p", file=Path("t.yaml"), raw=raw)


def test_an_escaped_key_and_a_dict_document_are_maybe():
    assert _task(b'{"\\u0063ommand_mocks":[]}').may_hold(b"command_mocks")
    assert _task({"a": 1}).may_hold(b"command_mocks")
    assert not _task(b'{"id":"t","inputs":{"prompt":"p"}}').may_hold(b"command_mocks", b"repos")
    # other escapes hide no key: a backslash is looked for first, then the \\u of an escape
    other = _task(b'{"id":"t","inputs":{"prompt":"a\\nb \\"q\\""}}')
    assert not other.may_hold(b"command_mocks") and not list(tasks_that_may_hold([other] * 3, b"command_mocks"))
    escaped = _task(b'{"\\u0063ommand_mocks":[]}')
    assert list(tasks_that_may_hold([other, escaped, other], b"command_mocks")) == [1]


_needles = st.lists(st.sampled_from([k.encode() for k in KEYS] + [b"\n", b"a\nb", b"", b'"', b"\\"]),
                    min_size=1, max_size=3)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(_docs, st.sampled_from(["json", "msgspec", "dict"])), max_size=12), _needles,
       st.sampled_from([1, 3, 512]))
def test_the_search_by_chunks_names_the_tasks_may_hold_names(docs, needles, chunk):
    """tasks_that_may_hold joins the compact JSON of a chunk of tasks to search it at once: the
    positions it gives are exactly those where may_hold is True (cached or not, escapes,
    needles across the joint)."""
    encode = {"json": lambda d: json.dumps(d).encode(), "msgspec": msgspec.json.encode, "dict": lambda d: d}
    tasks = [_task(encode[how](doc) if how != "dict" or isinstance(doc, dict) else {"v": doc})
             for doc, how in docs]
    default, model.MAY_HOLD_CHUNK = model.MAY_HOLD_CHUNK, chunk
    try:
        found = list(tasks_that_may_hold(tasks, *needles))
    finally:
        model.MAY_HOLD_CHUNK = default
    assert found == [i for i, t in enumerate(tasks) if t.may_hold(*needles)]


def test_a_string_across_two_documents_is_not_found_in_either():
    tasks = [_task(b'{"a":"comm"}'), _task(b'{"b":"and_mocks"}'), _task(b'{"c":"x"}')]
    assert list(tasks_that_may_hold(tasks, b"command_mocks")) == []
    assert list(tasks_that_may_hold(tasks + [_task(b'{"command_mocks":1}')], b"command_mocks")) == [3]


TASK = """id: {id}
inputs:
  prompt: hi
{extra}graders:
  - type: text
    name: t
    config: {{contains: ["hi"]}}
"""


MOCKS = "command_mocks: [{name: gitx, responses: [{args: [status], stdout: hi}]}]\n"


def test_mock_plans_of_cached_and_decoded_tasks_are_the_same(make_suite):
    tasks = {
        "tasks/a.yaml": TASK.format(id="a", extra=""),
        "tasks/b.yaml": TASK.format(id="b", extra=MOCKS),
        "tasks/c.yaml": TASK.format(id="c", extra="").replace("  prompt: hi\n", "  prompt: hi\n  workdir: sub\n"),
        "tasks/d.yaml": TASK.format(id="d", extra="").replace("  prompt: hi\n",
                                                              "  prompt: hi\n  environment: {A: '1'}\n"),
    }
    eval_file = make_suite(BASIC_EVAL.replace("skill: demo", "schemaVersion: '1.3'\nskill: demo"), tasks)
    registry = get_registry()
    load_suite(eval_file, registry)
    cached = load_suite(eval_file, registry)
    assert all(t.raw_json is not None for t in cached.tasks)
    decoded = attrs.evolve(cached, tasks=[attrs.evolve(t, raw=t.raw) for t in cached.tasks])
    fast = SuiteMocks(cached, cached.tasks, mocks_active=True)
    slow = SuiteMocks(decoded, decoded.tasks, mocks_active=True)
    assert sorted(fast.plans) == sorted(slow.plans) == ["b", "c", "d"]
    assert fast.plans == slow.plans
