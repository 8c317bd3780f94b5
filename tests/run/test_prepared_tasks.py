"""A bare task (no input files or fixture, graders all built per run) keeps no PreparedTask:
``PreparedSuite.by_id`` makes its record when asked. The record must say what a kept one
would, the views by id (tasks, inputs, positions) must agree with it, and a change made
through ``by_id.keep`` must reach every later run of the task."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.plugins import get_registry
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import NO_INPUTS, PreparedSuite, PreparedTasks, UnitSettings
from waza_core.run.recipe import prepare_suite
from waza_core.run.unit import run_unit
from waza_core.suite.load import load_suite

TASKS = {
    "tasks/a.yaml": "id: a\ninputs: {prompt: say alpha}\ngraders: [{type: text, name: t, config: {contains: [alpha]}}]\n",
    "tasks/b.yaml": "id: b\ninputs:\n  prompt: p\n  files: [{path: f.txt, content: hi}]\n"
                    "graders: [{type: file, name: f, config: {must_exist: [f.txt]}}]\n",
    "tasks/c.yaml": "id: c\ninputs: {prompt: say gamma}\ngraders: [{type: text, name: t, config: {contains: [gamma]}}]\n",
}


def _prepared(make_suite) -> PreparedSuite:
    registry = get_registry()
    suite = load_suite(make_suite(BASIC_EVAL, TASKS), registry)
    return prepare_suite(suite, registry, UnitSettings(executor="mock"), list(suite.tasks))  # with the preparers


def test_bare_tasks_keep_no_record_and_get_one_that_says_the_same(make_suite):
    prepared = _prepared(make_suite)
    by_id = prepared.by_id
    assert isinstance(by_id, PreparedTasks) and list(by_id) == ["a", "b", "c"] and len(by_id) == 3
    assert sorted(by_id.kept) == [1]  # only b has input files
    a, b, c = by_id["a"], by_id["b"], by_id["c"]
    assert by_id["a"] is not a  # made when asked
    assert by_id["b"] is b  # kept
    assert [p.position for p in (a, b, c)] == [0, 1, 2] and prepared.positions == {"a": 0, "b": 1, "c": 2}
    assert a.task.id == "a" and a.inputs is NO_INPUTS and a.own_graders is None and [g.spec.name for g in a.graders] == ["t"]
    assert b.inputs.files == (("f.txt", "hi"),) and b.needs_workspace
    assert not a.needs_workspace  # a text grader reads no workspace
    assert prepared.tasks["c"] is c.task and list(prepared.tasks.values()) == [p.task for p in (a, b, c)]
    assert prepared.inputs["a"] is NO_INPUTS and prepared.inputs["b"] is b.inputs
    assert [t.id for t in by_id.task_specs()] == ["a", "b", "c"]
    prepared.start()
    try:  # the mock agent echoes the prompt; b's file is copied into its workspace
        assert [run_unit(prepared, RunUnit(i, 1, "", 1)).status for i in ("a", "b", "c")] == ["passed"] * 3
    finally:
        prepared.close()


def test_a_change_through_keep_reaches_every_later_record(make_suite):
    prepared = _prepared(make_suite)
    assert not prepared.by_id["a"].needs_workspace
    with pytest.raises(AttributeError, match=r"change it through PreparedSuite.by_id.keep\('a'\)"):
        prepared.by_id["a"].needs_workspace = True  # made for this access: the change would be lost
    with pytest.raises(AttributeError, match="by_id.keep"):
        del prepared.by_id["a"].needs_workspace
    made = prepared.by_id["a"]
    copied = copy.copy(made)  # made as the record was (a kept record holds the suite: no deep copy either)
    assert type(copied) is type(made) and (copied.task, copied.position) == (made.task, made.position)
    assert not prepared.by_id["a"].needs_workspace
    prepared.by_id.keep("a").needs_workspace = True
    assert prepared.by_id["a"].needs_workspace and prepared.by_id["a"] is prepared.by_id.keep("a")
    assert sorted(prepared.by_id.kept) == [0, 1]


def test_a_task_id_given_twice_keeps_the_last_as_a_dict_would(make_suite):
    registry = get_registry()
    suite = load_suite(make_suite(BASIC_EVAL, TASKS), registry)
    a, b, c = suite.tasks
    prepared = PreparedSuite(suite, registry, UnitSettings(executor="mock"), [b, a, b, c])
    assert list(prepared.by_id) == ["b", "a", "c"] and prepared.positions == {"b": 2, "a": 1, "c": 3}
    assert sorted(prepared.by_id.kept) == [2]  # the first b is forgotten with its graders
    assert [t.id for t in prepared.by_id.task_specs()] == ["b", "a", "c"]
