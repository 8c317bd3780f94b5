"""waza preflight: waza's waza.preflight 1.0 report of a suite's prerequisites, offline; exit 1
for an invalid configuration (with --strict also unresolved/unsupported), nothing run."""

from __future__ import annotations

import json
import shutil

from tests.conftest import REPO, write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

REPORT_KEYS = ["kind", "schemaVersion", "source", "executor", "complete", "tasks", "capabilities", "dependencies",
               "diagnostics"]
STATES = {"verified", "unresolved", "unsupported", "invalid"}


def check_shape(doc: dict) -> None:
    """The keys and values waza's preflight.schema.json allows."""
    assert list(doc) == REPORT_KEYS and doc["kind"] == "waza.preflight" and doc["schemaVersion"] == "1.0"
    for t in doc["tasks"]:
        assert set(t) == {"id", "name", "source", "enabled", "context_dir", "requirements"}
        for req in t["requirements"]:
            assert {"id", "category", "description", "state", "meaning"} <= set(req) <= \
                {"id", "category", "description", "state", "meaning", "checks"} and req["state"] in STATES
    for c in doc["capabilities"]:
        assert set(c) == {"name", "state", "meaning"} and c["state"] in STATES
    for d in doc["dependencies"]:
        assert {"kind", "name", "mode", "state"} <= set(d) <= {"kind", "name", "mode", "state", "task_id"}
    for d in doc["diagnostics"]:
        assert {"code", "state", "severity", "source", "message", "remediation"} <= set(d)
        assert d["severity"] == {"invalid": "error", "verified": "info"}.get(d["state"], "warning")


def preflight(waza, *args, cwd=None, env=None):
    res = waza("preflight", *args, "--format", "json", cwd=cwd, env=env)
    return res, json.loads(res.stdout) if res.stdout.strip() else None


def test_a_valid_mock_suite(waza):
    res, doc = preflight(waza, str(REPO / "examples" / "quickstart" / "eval.yaml"))
    assert res.returncode == 0, res.stderr
    check_shape(doc)
    assert doc["complete"] is True and doc["executor"] == "mock" and doc["diagnostics"] == []
    assert [c["name"] for c in doc["capabilities"]] == ["task_execution", "mcp_servers", "command_mocks",
                                                        "runtime_tool_boundary"]
    assert {t["id"] for t in doc["tasks"]} == {"explain-hello-001", "inline-notes-001"}
    human = waza("preflight", str(REPO / "examples" / "quickstart" / "eval.yaml"))
    assert human.returncode == 0 and human.stdout.startswith(b"Offline preflight: ")
    assert b"Inventory complete: true (not assurance)" in human.stdout


def test_an_invalid_suite_exits_1_with_located_diagnostics(waza, tmp_path):
    shutil.copytree(REPO / "examples" / "migrate-old-suite" / "old-suite", tmp_path / "old")
    res, doc = preflight(waza, "old/eval.yaml", cwd=tmp_path)
    assert res.returncode == 1 and b"preflight prerequisites failed" in res.stderr
    check_shape(doc)
    assert doc["complete"] is False and doc["executor"] == "mock"
    codes = {(d["code"], d["source"]) for d in doc["diagnostics"]}
    assert ("eval.configuration", "old/eval.yaml") in codes and ("task.configuration", "old/tasks/words.yaml") in codes
    assert any("eval.yaml:12:11: unknown grader type 'regex'" in d["message"] for d in doc["diagnostics"])
    assert [d["source"] for d in doc["diagnostics"]] == sorted(d["source"] for d in doc["diagnostics"])


def test_paid_executor_hooks_and_requirements(waza, tmp_path):
    suite = tmp_path / "s"
    write(suite / "eval.yaml", "name: p\nskill: s\nconfig:\n  executor: cli\n  cli: {command: [agent, '{prompt}']}\n"
          "hooks:\n  before_run: [{command: 'true'}]\ngraders: [{type: text, name: g, config: {contains: [x]}}]\n"
          "tasks: ['tasks/*.yaml']\n")
    write(suite / "tasks" / "t.yaml", "id: t\nname: T\ninputs: {prompt: hi}\nrequirements:\n"
          "  - {id: r1, category: safety, description: says hi, checks: [{scope: task, grader: g}]}\n"
          "  - {id: r2, category: safety, description: no check}\n"
          "  - {id: r3, category: safety, description: bad check, checks: [{scope: task, grader: nope}]}\n")
    res, doc = preflight(waza, "s/eval.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stderr  # nothing invalid: unresolved only warns
    check_shape(doc)
    reqs = {r["id"]: r["state"] for r in doc["tasks"][0]["requirements"]}
    assert reqs == {"r1": "verified", "r2": "unresolved", "r3": "unresolved"}
    codes = {d["code"] for d in doc["diagnostics"]}
    assert {"runtime.availability", "hooks.execution", "requirement.check"} <= codes
    assert {"kind": "hooks", "name": "lifecycle", "mode": "subprocess", "state": "unresolved"} in doc["dependencies"]
    assert {c["name"]: c["state"] for c in doc["capabilities"]}["command_mocks"] == "verified"
    res, _ = preflight(waza, "s/eval.yaml", "--strict", cwd=tmp_path)
    assert res.returncode == 1


def test_locked_grader_refs_are_dependencies(waza, tmp_path):
    sg = tmp_path / "sg"
    shutil.copytree(REPO / "examples" / "shared-graders", sg)
    env = {"WAZA_MODULE_CACHE": str(tmp_path / "cache")}
    res, doc = preflight(waza, "suite/eval.yaml", cwd=sg, env=env)
    assert res.returncode == 1 and any("waza.lock is missing" in d["message"] for d in doc["diagnostics"])
    assert waza("get", "suite/eval.yaml", "--source", "example.com/acme/graders=graders-module",
                cwd=sg, env=env).returncode == 0
    res, doc = preflight(waza, "suite/eval.yaml", cwd=sg, env=env)
    assert res.returncode == 0
    assert doc["dependencies"] == [{"kind": "grader", "name": "example.com/acme/graders#answers-prompt@v1",
                                    "mode": "locked-cache", "state": "verified"}]


def test_bad_input(waza, tmp_path):
    res, doc = preflight(waza, str(tmp_path / "none.yaml"))
    assert res.returncode == 1 and doc["diagnostics"][0]["code"] == "eval.read" and doc["complete"] is False
    res = waza("preflight", str(tmp_path / "none.yaml"), "--format", "xml")
    assert res.returncode == 2 and b"invalid --format" in res.stderr and b"Traceback" not in res.stderr
