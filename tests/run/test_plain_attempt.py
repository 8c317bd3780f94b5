"""An attempt that no run preparer extends builds its request without a RunSetup
(``waza_core.run.setup.plain_request``): the request must be the one a RunSetup that
nobody touched gives, field for field, and a text grader's result the same as before."""

from __future__ import annotations

import attrs

from tests.conftest import BASIC_EVAL
from waza_core.plugins import get_registry
from waza_core.run.plan import RunUnit
from waza_core.run.prepared import PreparedSuite, UnitSettings
from waza_core.run.setup import RunSetup, plain_request
from waza_core.run.unit import run_unit
from waza_core.suite.load import load_suite

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


def test_the_plain_request_is_the_untouched_setups_request(make_suite):
    for settings in ({}, {"model": "m1", "skill_directories": ("s1", "s2")}):
        prepared = _prepared(make_suite, **settings)
        for task_id, ws in (("a", None), ("b", "/some/workspace")):
            ptask = prepared.by_id[task_id]
            unit = RunUnit(task_id, 2, settings.get("model", ""), 3)
            via_setup = RunSetup(prepared, ptask.task, unit, 2, ws).request()
            plain = plain_request(prepared, ptask, unit, 2, ws)
            assert attrs.asdict(plain, recurse=False) == attrs.asdict(via_setup, recurse=False)
            assert plain.timeout_seconds == (7 if task_id == "b" else prepared.suite.config.timeout_seconds)


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
