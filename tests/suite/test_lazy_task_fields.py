"""Two fields a 100,000-task suite held once per task are made when asked for: a task
grader's ``where`` (kept as its index in the task file's ``graders`` list) and a task's empty
``context`` (kept as None). Both read, compare, hash, print and pickle as the plain values."""

from __future__ import annotations

import pickle

import attrs
import pytest

from tests.conftest import BASIC_EVAL
from waza_core.model import GraderSpec, TaskSpec
from waza_core.suite.load import load_suite

TASK = """id: t1
inputs: {prompt: "say hi"}
graders:
  - {type: text, name: first, config: {contains: ["hi"]}}
  - {type: text, name: second, config: {contains: ["h"]}}
checkpoints:
  - after_turn: 1
    graders: [{type: text, name: early, config: {contains: ["h"]}}]
"""

WITH_CONTEXT = """id: t2
inputs: {prompt: "say hi", context: {doc: "source text"}}
graders: [{type: text, name: first, config: {contains: ["hi"]}}]
"""


def _tasks(make_suite, registry, monkeypatch, cache: bool) -> dict[str, TaskSpec]:
    path = make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK, "tasks/t2.yaml": WITH_CONTEXT})
    monkeypatch.chdir(path.parent)
    if not cache:
        monkeypatch.setenv("WAZA_NO_CACHE", "1")
    load_suite(path, registry)  # the first load stores the documents; the second reads them
    return {t.id: t for t in load_suite(path, registry).tasks}


def test_a_task_graders_where_is_its_index_and_reads_as_the_string(make_suite, registry, monkeypatch):
    for cache in (True, False):
        t1 = _tasks(make_suite, registry, monkeypatch, cache)["t1"]
        first, second = t1.graders
        assert (first._where, second._where) == (0, 1)  # noqa: SLF001 - what the change is about
        assert first.where == "tasks/t1.yaml (graders[0])" and second.where == "tasks/t1.yaml (graders[1])"
        (early,) = t1.checkpoints[0].graders  # other lists keep the string
        assert early.where == "tasks/t1.yaml (checkpoints[0].graders[0])"
        assert first != second and first != attrs.evolve(first, where="elsewhere", at_file=None)
        assert first == attrs.evolve(first) and hash(first) == hash(attrs.evolve(first))
        plain = attrs.evolve(first, where=first.where, at_file=None)
        assert isinstance(plain._where, str) and repr(first) == repr(plain)  # noqa: SLF001
        assert "where='tasks/t1.yaml (graders[0])'" in repr(first)
        assert pickle.loads(pickle.dumps(first)) == first
        # equal and hashed alike from any working folder (the shown path follows it)
        kept = {first}
        monkeypatch.chdir(path_of(t1).parent.parent.parent)
        assert first in kept and first == attrs.evolve(first) and first.where.endswith("tasks/t1.yaml (graders[0])")
        monkeypatch.chdir(path_of(t1).parent.parent)


def path_of(task: TaskSpec):
    return task.file


def test_a_specs_equality_still_compares_every_field():
    base = GraderSpec(type="text", name="a", weight=1.0, config={"contains": ["x"]}, where="f.yaml:3:5")
    assert base == GraderSpec(type="text", name="a", config={"contains": ["x"]}, where="f.yaml:3:5")
    for change in ({"type": "regex"}, {"name": "b"}, {"weight": 2.0}, {"config": {}}, {"where": "f.yaml:4:5"}):
        assert attrs.evolve(base, **change) != base
    assert base != ("text", "a") and (base == object()) is False


def test_an_empty_context_is_none_and_reads_as_a_new_dict(make_suite, registry, monkeypatch):
    for cache in (True, False):
        tasks = _tasks(make_suite, registry, monkeypatch, cache)
        bare, rich = tasks["t1"], tasks["t2"]
        assert bare._context is None and bare.context == {}  # noqa: SLF001
        bare.context["leak"] = 1  # a caller's change reaches no other read, and no other task
        assert bare.context == {} and bare.context is not bare.context
        assert rich.context == {"doc": "source text"} and rich.context is rich.context
    task = TaskSpec(id="t", name="t", prompt="p", file="t.yaml")
    assert task == TaskSpec(id="t", name="t", prompt="p", file="t.yaml", context={})
    richer = attrs.evolve(task, context={"doc": "x"})
    assert richer.context == {"doc": "x"} and richer != task and attrs.evolve(richer, context={}) == task
    assert pickle.loads(pickle.dumps(richer)) == richer and "context={'doc': 'x'}" in repr(richer)


USUAL = "id: t\ninputs: {prompt: say hi}\ngraders: [{type: text, name: g, config: {contains: [hi]}}]\n"


@pytest.mark.parametrize("extra", ["enabled: true\n", "description: ''\n", "tags: []\n", "golden: false\n"])
def test_the_usual_task_is_built_as_the_full_build_makes_it(tmp_path, registry, monkeypatch, extra):
    """A task of id, inputs.prompt and graders only is built without looking up the other
    fields; a key written with its default value takes the full build: both give equal tasks."""
    monkeypatch.setenv("WAZA_CACHE_DIR", str(tmp_path / "cache"))
    tasks = []
    for name, text in (("usual", USUAL), ("full", USUAL + extra)):
        root = tmp_path / name
        (root / "tasks").mkdir(parents=True)
        (root / "eval.yaml").write_text(BASIC_EVAL)
        (root / "tasks" / "t.yaml").write_text(text)
        for _ in range(2):  # parsed, then from the suite cache
            tasks.append(load_suite(root / "eval.yaml", registry).tasks[0])
    usual, usual_warm, full, full_warm = tasks
    for task in (full, full_warm):
        same_file = attrs.evolve(task, file=usual.filename, graders=tuple(
            attrs.evolve(g, at_file=usual.filename) for g in task.graders))
        assert same_file == usual == usual_warm
        assert [getattr(same_file, f.name) for f in attrs.fields(TaskSpec) if f.name != "_raw"] == \
            [getattr(usual, f.name) for f in attrs.fields(TaskSpec) if f.name != "_raw"]
