"""``waza run --audit``: the do-nothing control before the real run, in the results and every report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.inprocess import run_waza_in_process as run_waza
from tests.suite.conftest import LEGACY
from waza_core.suite import schema

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "audit"
VACUOUS = ["always-green"]
VACUOUS_GRADERS = [{"task_id": "always-green", "grader": "no_error_word"},
                   {"task_id": "always-green", "grader": "no_todo_left"},
                   {"task_id": "real-check", "grader": "no_apology"}]


def _run(tmp_path, *args, suite=EXAMPLE):
    out = tmp_path / "r.json"
    res = run_waza("run", str(suite), "--audit", "-o", str(out), "--color", "never",
                   "--reporter", f"markdown:{tmp_path / 'r.md'}", "--reporter", f"junit:{tmp_path / 'r.xml'}",
                   "--reporter", f"html:{tmp_path / 'r.html'}", *args, cwd=EXAMPLE)
    return res, json.loads(out.read_text()) if out.exists() else None


def test_run_audit_records_the_vacuous_tasks_and_triages_their_passes(tmp_path):
    res, doc = _run(tmp_path)
    assert res.returncode == 1, res.stderr.decode()  # a pass with no agent is no pass
    assert doc["audit"] == {"vacuous_tasks": VACUOUS, "vacuous_graders": VACUOUS_GRADERS, "not_audited": [],
                            "tasks_audited": 2, "executor": "null"}
    runs = {t["test_id"]: t["runs"][0] for t in doc["tasks"]}
    assert runs["always-green"]["status"] == "passed"
    assert runs["always-green"]["triage"]["category"] == "vacuous"
    assert runs["real-check"]["triage"]["category"] == "agent_failure"
    assert doc["summary"]["triage"] == {"infrastructure": 0, "grader_defect": 0, "agent_failure": 1, "vacuous": 1}
    assert doc["summary"]["succeeded"] == 1  # waza's counts are unchanged; the exit code says it
    assert not list(schema.plain_validator("results").iter_errors(doc))
    # the real run used the suite's executor; the audit's null runs are not in the results
    assert doc["config"]["engine_type"] == "mock"
    out, err = res.stdout.decode(), res.stderr.decode()
    assert "--audit: 1 task(s) pass with no agent: always-green" in err
    assert "vacuous pass: 1 run(s); next: add a check that only the agent's work can satisfy" in out
    assert "vacuous tasks (1): pass with no agent: always-green" in out
    assert "vacuous graders (3)" in out and "real-check/no_apology" in out


def test_every_report_shows_the_triage_and_the_audit(tmp_path):
    _run(tmp_path)
    md = (tmp_path / "r.md").read_text()
    section = md[md.index("### Failure triage"):md.index("| Status |")]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| **")]
    assert [r[0] for r in rows] == ["| **agent failure**", "| **vacuous pass**"]
    assert rows[1][1:3] == ["1", "always-green"]
    assert "**Audit** (do-nothing agent, 2 task(s)): 1 vacuous task(s): always-green" in section
    assert "3 vacuous grader(s)" in section
    root = ET.parse(tmp_path / "r.xml").getroot()
    props = {p.get("name"): p.get("value") for p in root.find("testsuite/properties")}
    assert props["triage.vacuous"] == "1" and props["triage.agent_failure"] == "1"
    assert props["audit.vacuous_tasks"] == "always-green"
    cases = {c.get("classname"): {p.get("name"): p.get("value") for p in c.iter("property")}
             for c in root.iter("testcase")}
    assert cases["always-green"]["triage"] == "vacuous" and cases["real-check"]["triage"] == "agent_failure"
    html = (tmp_path / "r.html").read_text()
    data = json.loads(html.split('<script id="waza-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    groups = {g["category"]: g for g in data["header"]["triage"]}
    assert set(groups) == {"agent_failure", "vacuous"}
    assert groups["vacuous"]["shown"][0][0] == "always-green" and groups["vacuous"]["action"].startswith("add a check")
    assert data["header"]["audit"]["vacuous_tasks"] == VACUOUS
    assert "function renderTriage" in html


def test_a_report_of_the_saved_file_shows_the_same(tmp_path):
    _run(tmp_path)
    again = tmp_path / "again.md"
    res = run_waza("report", str(tmp_path / "r.json"), "--reporter", f"markdown:{again}")
    assert res.returncode == 0, res.stderr.decode()
    assert again.read_text() == (tmp_path / "r.md").read_text()


def test_run_audit_with_no_vacuous_task_keeps_exit_0_and_filters_tasks_as_the_run(tmp_path, make_suite):
    path = make_suite(LEGACY + "graders:\n  - {type: text, name: g, config: {contains: [Mock]}}\n",
                      {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n",
                       "tasks/t2.yaml": "id: t2\ninputs:\n  prompt: bye\n"})
    out = tmp_path / "r.json"
    res = run_waza("run", str(path), "--audit", "--task", "t1", "-o", str(out), "-q")
    assert res.returncode == 0, res.stderr.decode()
    doc = json.loads(out.read_text())
    assert doc["audit"]["tasks_audited"] == 1 and doc["audit"]["vacuous_tasks"] == []
    assert "triage" not in doc["summary"]


def test_run_audit_refuses_a_paid_judge_before_anything_runs(tmp_path, make_suite):
    paid = "graders:\n  - {type: prompt, name: judge, config: {prompt: 'ok?', judge: {executor: copilot-sdk}}}\n"
    path = make_suite(LEGACY + paid, {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n"})
    out = tmp_path / "r.json"
    res = run_waza("run", str(path), "--audit", "-o", str(out))
    assert res.returncode == 2 and b"may make paid calls" in res.stderr
    assert not out.exists()


def test_a_suite_of_several_models_is_audited_once(tmp_path, make_suite):
    suite = LEGACY.replace("  executor: mock\n", "  executor: mock\n  models: [m1, m2]\n")
    path = make_suite(suite + "graders:\n  - {type: text, name: g, config: {not_contains: [error]}}\n",
                      {"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hello\n"})
    res = run_waza("audit", str(path), "--format", "json")
    assert res.returncode == 1, res.stderr.decode()
    assert json.loads(res.stdout)["vacuous_tasks"] == ["t1"]
    out = tmp_path / "r.json"
    res = run_waza("run", str(path), "--audit", "-o", str(out), "-q")
    assert res.returncode == 1, res.stderr.decode()
    for model in ("m1", "m2"):  # one results file per model, each with the audit
        doc = json.loads((tmp_path / f"r_{model}.json").read_text())
        assert doc["audit"]["vacuous_tasks"] == ["t1"] and doc["summary"]["triage"]["vacuous"] == 1
