"""waza_core/frozen_build.py: a frozen attrs class built through its twin is the object its own
constructor makes (type, every field, frozen, equal, hashed, pickled and copied alike); a class
that does not qualify keeps its own constructor."""

from __future__ import annotations

import copy
import pickle

import attrs
import pytest

from waza_core import frozen_build
from waza_core.frozen_build import fast_builder, make_twin
from waza_core.grading.base import GradingContext, make_grading_context
from waza_core.model import GraderSpec, RunEvidence, TaskSpec, make_grader_spec, make_task_spec
from waza_core.run.execution import ExecutionRequest, make_request


@attrs.frozen(weakref_slot=False)
class Sample:
    number: int
    text: str = attrs.field(default="d", converter=str)
    _private: dict = attrs.field(factory=dict, alias="private")
    later: int = attrs.field(default=0, kw_only=True)


def _fields(obj) -> tuple:
    return tuple(getattr(obj, a.name) for a in attrs.fields(type(obj)))


@pytest.fixture
def at_once(monkeypatch):
    """The twin from the first call (WARM_CALLS builds with the class itself first)."""
    monkeypatch.setattr(frozen_build, "WARM_CALLS", 0)


def test_built_through_the_twin_is_what_the_class_makes(at_once):
    build = fast_builder(Sample)
    made, built = Sample(1, 2, private={"a": 1}), build(1, 2, private={"a": 1})
    assert type(built) is Sample and _fields(built) == _fields(made) == (1, "2", {"a": 1}, 0)
    assert _fields(build(1, later=3)) == (1, "d", {}, 3)
    assert built == made and repr(built) == repr(made)
    assert hash(build(1, 2, private=None)) == hash(Sample(1, 2, private=None))
    assert build(3)._private == {} and build(3)._private is not build(3)._private  # a factory per object
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.number = 2
    assert pickle.loads(pickle.dumps(built)) == made and copy.deepcopy(built) == made
    assert attrs.evolve(built, number=5) == Sample(5, 2, private={"a": 1})


def test_the_twin_refuses_what_the_class_refuses(at_once):
    build = fast_builder(Sample)
    with pytest.raises(TypeError):
        build()  # a required field
    with pytest.raises(TypeError):
        build(1, nope=2)
    with pytest.raises(TypeError):
        build(1, 2, 3, 4)  # later is keyword-only


def test_the_first_calls_use_the_class_itself(monkeypatch):
    made = []
    monkeypatch.setattr(frozen_build, "make_twin", lambda cls: made.append(cls) or make_twin(cls))
    build = fast_builder(Sample)
    for i in range(frozen_build.WARM_CALLS):
        assert build(i).number == i
    assert made == []
    assert build(7) == Sample(7) and made == [Sample]
    build(8)
    assert made == [Sample]  # made once


def test_a_class_that_does_not_qualify_keeps_its_constructor(at_once):
    @attrs.frozen  # a __weakref__ slot after the fields: another layout
    class WithWeakref:
        number: int

    @attrs.frozen(weakref_slot=False)
    class WithPostInit:
        number: int

        def __attrs_post_init__(self) -> None:
            object.__setattr__(self, "number", self.number + 1)

    @attrs.frozen(weakref_slot=False, slots=False)
    class WithDict:
        number: int

    @attrs.frozen(weakref_slot=False)
    class WithValidator:  # a validator may call the class's methods, which the twin has not
        number: int = attrs.field()

        @number.validator
        def _check(self, attribute, value) -> None:
            self.limit(value)

        def limit(self, value: int) -> None:
            if value < 0:
                raise ValueError("negative")

    @attrs.frozen(weakref_slot=False)
    class WithSelfFactory:
        number: int
        double: int = attrs.field(default=attrs.Factory(lambda self: self.twice(), takes_self=True))

        def twice(self) -> int:
            return 2 * self.number

    @attrs.frozen(weakref_slot=False, init=False)
    class WithOwnInit:
        number: int

        def __init__(self, text: str) -> None:
            object.__setattr__(self, "number", int(text) * 10)

    @attrs.frozen(weakref_slot=False)
    class WithNew:
        number: int

        def __new__(cls, *args, **kwargs):
            return super().__new__(cls)

    for cls in (WithWeakref, WithPostInit, WithDict, WithValidator, WithSelfFactory, WithNew):
        assert make_twin(cls) is None, cls
        assert fast_builder(cls)(1) == cls(1)
    assert make_twin(WithOwnInit) is None
    assert fast_builder(WithOwnInit)("4").number == 40
    assert fast_builder(WithPostInit)(1).number == 2
    assert fast_builder(WithSelfFactory)(2).double == 4
    with pytest.raises(ValueError):
        fast_builder(WithValidator)(-1)


def test_the_model_builders_make_the_model_classes(at_once, monkeypatch):
    """Each builder waza uses is fast (it has a twin) and makes what the class makes."""
    for cls in (TaskSpec, GraderSpec, ExecutionRequest, GradingContext):
        assert make_twin(cls) is not None, cls
    graders = (make_grader_spec("text", "g", 2.0, b'{"contains":["x"]}', 0, "/s/t.yaml"),)
    assert graders == (GraderSpec("text", "g", 2.0, b'{"contains":["x"]}', 0, "/s/t.yaml"),)
    assert _fields(graders[0]) == _fields(GraderSpec("text", "g", 2.0, b'{"contains":["x"]}', 0, "/s/t.yaml"))
    kwargs = {"id": "t", "name": "T", "prompt": "p", "file": "/s/t.yaml", "graders": graders, "raw": b"{}",
              "context": {}, "tags": ("a",)}
    task = make_task_spec(**kwargs)
    assert type(task) is TaskSpec and _fields(task) == _fields(TaskSpec(**kwargs)) and task._context is None
    request_args = (task, "p", None, 30, "m", ("skills",), 2, 1, (), {}, (), {}, None, None)
    assert _fields(make_request(*request_args)) == _fields(ExecutionRequest(*request_args))
    evidence = RunEvidence(output="out")
    assert make_grading_context(task, evidence, "/ws") == GradingContext(task, evidence, "/ws")
