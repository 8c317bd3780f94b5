"""``waza grade`` around graders: started once with the judge model, closed once; typed reading."""

from __future__ import annotations

import json

from tests.conftest import BASIC_EVAL, REPO
from tests.fixture_plugins.test_graders import SetupProbe
from tests.inprocess import run_waza_in_process as run_waza

PLUGINS = {"PYTHONPATH": str(REPO)}
PROBE = "graders:\n  - {type: setup_probe, name: probe}\n"
TASKS = {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n", "tasks/b.yaml": "id: b\ninputs: {prompt: p}\n"}


def _grade(path, tmp_path, *extra):
    results = tmp_path / "r.json"
    ran = run_waza("run", str(path), "--skip-graders", "-o", str(results), "-q", "-p",
                   "tests.fixture_plugins.test_graders", env=PLUGINS)
    assert ran.returncode == 0, ran.stderr.decode()
    proc = run_waza("grade", str(path), "--results", str(results), "-o", str(tmp_path / "g.json"),
                    "-p", "tests.fixture_plugins.test_graders", *extra, env=PLUGINS)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads((tmp_path / "g.json").read_text())


def _feedback(doc):
    return {t["test_id"]: t["runs"][0]["validations"]["probe"]["feedback"] for t in doc["tasks"]}


def test_grade_starts_graders_with_the_judge_model_of_the_flag_over_the_config(make_suite, tmp_path):
    ev = BASIC_EVAL.replace("executor: mock", "executor: mock\n  judge_model: from-config") + PROBE
    path = make_suite(ev, TASKS)
    assert _feedback(_grade(path, tmp_path)) == {"a": "judge=from-config", "b": "judge=from-config"}
    assert _feedback(_grade(path, tmp_path, "--judge-model", "from-flag")) == {"a": "judge=from-flag",
                                                                                "b": "judge=from-flag"}


def test_regrade_starts_each_grader_once_and_closes_it_once(make_suite, registry, monkeypatch):
    from waza_core.plugins import build_plugin_manager
    from waza_core.results.model import ResultsDocument
    from waza_core.run.engine import Engine, RunOptions
    from waza_core.run.regrade import regrade
    from waza_core.suite.load import load_suite

    reg = build_plugin_manager(["tests.fixture_plugins.test_graders"])[1]
    suite = load_suite(make_suite(BASIC_EVAL + PROBE, TASKS), reg)
    doc = Engine(suite, reg, RunOptions(skip_graders=True, trials=2)).run()
    monkeypatch.setattr(SetupProbe, "events", [])
    report = regrade(suite, reg, doc, judge_model="j")
    assert isinstance(report.outcome, ResultsDocument)
    assert SetupProbe.events == [("start", "j"), ("close", "probe")]  # one global grader, 2 tasks x 2 runs
    assert [r.status for t in report.outcome.tasks for r in t.runs] == ["passed"] * 4
    assert report.outcome.config.regraded is True and report.summary["passed"] is True


def test_grade_keeps_fields_it_does_not_know_and_warns_about_wrong_types(make_suite, tmp_path):
    path = make_suite(BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [mock]}}\n", TASKS)
    results = tmp_path / "r.json"
    assert run_waza("run", str(path), "--skip-graders", "-o", str(results), "-q").returncode == 0
    doc = json.loads(results.read_text())
    doc["from_a_newer_waza"] = {"x": 1}
    doc["tasks"][0]["golden"] = True
    doc["tasks"][0]["runs"][0]["snapshot_path"] = "s.txt"
    doc["tasks"][1]["runs"][0]["duration_ms"] = "long"
    results.write_text(json.dumps(doc))
    proc = run_waza("grade", str(path), "--results", str(results), "-o", str(tmp_path / "g.json"))
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"warning: tasks[1].runs[0].duration_ms: expected an integer >= 0" in proc.stderr
    graded = json.loads((tmp_path / "g.json").read_text())
    assert graded["from_a_newer_waza"] == {"x": 1} and graded["tasks"][0]["golden"] is True
    assert graded["tasks"][0]["runs"][0]["snapshot_path"] == "s.txt"
    assert graded["tasks"][0]["runs"][0]["worker"] == "local"
    assert [t["status"] for t in graded["tasks"]] == ["passed", "passed"]
