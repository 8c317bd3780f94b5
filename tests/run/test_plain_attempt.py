"""An attempt that no run preparer extends builds its request without a RunSetup
(``waza_core.run.setup.build_request``): each field must hold what the task, the unit and the
settings say, the same as a RunSetup that nobody touched gives, and a run must grade alike on
both paths. A grader class that declares ``built_per_run`` is built for each attempt and not
kept per task; any other is kept, built once, and started and closed with the suite run."""

from __future__ import annotations

import attrs

from tests.conftest import BASIC_EVAL
from waza_core import Grader
from waza_core.plugins import get_registry
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite, UnitSettings
from waza_core.run.setup import RunSetup, build_request
from waza_core.run.unit import run_unit
from waza_core.suite.load import load_suite
from waza_core.testing import make_registry
from waza_graders.text import TextGrader

TASKS = {
    "tasks/a.yaml": "id: a\ninputs: {prompt: say alpha}\ngraders:\n"
                    "  - {type: text, name: t, config: {contains: [ALPHA], regex_not_match: ['\\d']}}\n",
    "tasks/b.yaml": "id: b\ntimeout_seconds: 7\nskill_directories: [sk]\ninputs:\n  prompt: p\n"
                    "  files: [{path: f.txt, content: hi}]\ngraders:\n"
                    "  - {type: text, name: t, config: {contains: [zebra]}}\n",
}


def _prepared(make_suite, **settings) -> PreparedSuite:
    registry = get_registry()
    suite = load_suite(make_suite(BASIC_EVAL, TASKS), registry)
    return PreparedSuite(suite, registry, UnitSettings(executor="mock", **settings), list(suite.tasks))


def test_the_plain_request_holds_the_tasks_values_as_an_untouched_setups_request(make_suite):
    for settings in ({}, {"model": "m1", "skill_directories": ("s1", "s2")}):
        prepared = _prepared(make_suite, **settings)
        for task_id, ws in (("a", None), ("b", "/some/workspace")):
            ptask = prepared.by_id[task_id]
            unit = RunUnit(task_id, 2, settings.get("model", ""), 3)
            plain = build_request(prepared, ptask, unit, 5, ws)
            assert (plain.task, plain.prompt, plain.workspace_dir) == (ptask.task, ptask.task.prompt, ws)
            assert plain.timeout_seconds == (7 if task_id == "b" else prepared.suite.config.timeout_seconds)
            assert (plain.model, plain.run_number, plain.attempt) == (settings.get("model", ""), 2, 5)
            assert plain.skill_directories == prepared.skill_directories(ptask.task)
            assert plain.files == (() if task_id == "a" else (("f.txt", "hi"),))
            assert (plain.environment, plain.path_prepend, plain.mcp_servers, plain.workdir, plain.on_turn) == \
                ({}, (), {}, None, None)
            via_setup = RunSetup(prepared, ptask.task, unit, 5, ws).request()
            assert attrs.asdict(plain, recurse=False) == attrs.asdict(via_setup, recurse=False)
    assert _prepared(make_suite, skill_directories=("s1", "s2")).by_id["a"].task.skill_directories is None
    assert build_request(_prepared(make_suite, skill_directories=("s1", "s2")), _prepared(
        make_suite).by_id["a"], RunUnit("a", 1, "", 1), 1, None).skill_directories == ("s1", "s2")


def test_a_run_without_preparers_grades_as_with_an_empty_preparer(make_suite):
    plain = _prepared(make_suite)
    plain.start()
    with_preparer = _prepared(make_suite)
    with_preparer.preparers.append(lambda setup: None)  # forces the RunSetup path
    with_preparer.start()
    try:
        for task_id in ("a", "b"):
            unit = RunUnit(task_id, 1, "", 1)
            a, b = run_unit(plain, unit), run_unit(with_preparer, unit)
            assert attrs.asdict(a) == attrs.asdict(b)
        assert a.validations["t"].details["failures"] == ["Missing expected substring: zebra"]
    finally:
        plain.close()
        with_preparer.close()


class _Kept(Grader):
    """A plugin grader that does not declare ``built_per_run``: built once, started, closed."""

    name = "kept-probe"
    needs_workspace = False
    built = 0
    started = 0

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        type(self).built += 1

    def start(self, setup):
        type(self).started += 1

    def grade(self, ctx):
        return self.result(1.0, True, "ok")


def test_graders_built_per_run_are_not_kept_and_others_are(make_suite):
    registry = make_registry([_Kept])
    tasks = dict(TASKS, **{"tasks/c.yaml": "id: c\ninputs: {prompt: p}\ngraders:\n  - {type: kept-probe, name: k}\n"})
    suite = load_suite(make_suite(BASIC_EVAL, tasks), registry)
    _Kept.built = _Kept.started = 0
    prepared = PreparedSuite(suite, registry, UnitSettings(executor="mock"), list(suite.tasks))
    text = prepared.by_id["a"]
    assert text.own_graders is None  # nothing kept for a task of text graders
    first, second = text.graders, text.graders
    assert isinstance(first[0], TextGrader) and first[0] is not second[0]  # a new one for each attempt
    assert not [g for g in prepared.all_graders() if isinstance(g, TextGrader)]
    kept = prepared.by_id["c"]
    assert [type(g) for g in kept.own_graders] == [_Kept] and kept.graders[0] is kept.graders[0]
    assert _Kept.built == 1
    prepared.start()
    try:
        assert _Kept.started == 1 and run_unit(prepared, RunUnit("c", 1, "", 1)).status == "passed"
        assert _Kept.built == 1  # kept: not built again for the run
    finally:
        prepared.close()
