"""Output-only graders cause no workspace; file and diff read the run's (or --workspace's)."""

from __future__ import annotations

import json
import tempfile

import pytest

from tests.conftest import BASIC_EVAL, write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.run.engine import Engine, RunOptions
from waza_core.suite.load import load_suite

OUTPUT_ONLY = """graders:
  - {type: text, name: t, config: {contains: [mock]}}
  - {type: code, name: c, config: {assertions: ["len(output) > 0"]}}
  - {type: json_schema, name: j, config: {schema: {type: string}}}
  - {type: trigger, name: tr, config: {skill_path: SKILL.md, mode: negative}}
"""


@pytest.fixture
def made(monkeypatch):
    folders: list[str] = []
    real = tempfile.mkdtemp

    def spy(*a, **k):
        folders.append(real(*a, **k))
        return folders[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", spy)
    return folders


def test_output_only_graders_make_no_workspace_and_file_graders_do(make_suite, registry, made, monkeypatch):
    path = make_suite(BASIC_EVAL + OUTPUT_ONLY, {"tasks/a.yaml": "id: a\ninputs: {prompt: hello there}\n"},
                      {"SKILL.md": "---\nname: greeter\n---\nSay hello.\n"})
    monkeypatch.chdir(path.parent)
    from waza_core.results.codec import results_to_json

    outcome = results_to_json(Engine(load_suite(path, registry), registry, RunOptions()).run())
    v = outcome["tasks"][0]["runs"][0]["validations"]
    assert {k: v[k]["passed"] for k in v} == {"t": True, "c": True, "j": False, "tr": True}
    assert [d for d in made if "waza-ws-" in d] == []
    path = make_suite(BASIC_EVAL + OUTPUT_ONLY + "  - {type: file, name: f, config: {must_not_exist: [x]}}\n",
                      {"tasks/a.yaml": "id: a\ninputs: {prompt: hello there}\n"})
    Engine(load_suite(path, registry), registry, RunOptions()).run()
    assert len([d for d in made if "waza-ws-" in d]) == 1


SUITE = """\
name: offline
skill: demo
config:
  executor: cli
  model: toy
  cli:
    command: ["python3", "-c", "open('out.txt', 'w').write('made by the agent')"]
graders:
  - type: file
    name: files
    config: {must_exist: [out.txt], content_patterns: [{path: out.txt, must_match: ["agent"]}]}
  - type: diff
    name: diff
    config: {expected_files: [{path: out.txt, contains: ["+made by"]}]}
tasks: ["tasks/*.yaml"]
"""


def test_file_and_diff_grade_the_runs_workspace_and_the_workspace_given_to_waza_grade(waza, tmp_path):
    suite = tmp_path / "suite"
    write(suite / "eval.yaml", SUITE)
    write(suite / "tasks" / "a.yaml", "id: a\ninputs: {prompt: write out.txt}\n")
    live = waza("run", str(suite), "-o", str(tmp_path / "live.json"))
    assert live.returncode == 0, live.stderr.decode()
    skipped = waza("run", str(suite), "--skip-graders", "-o", str(tmp_path / "skipped.json"))
    assert skipped.returncode == 0, skipped.stderr.decode()
    elsewhere = tmp_path / "kept"
    write(elsewhere / "out.txt", "a different text")
    graded = waza("grade", str(suite), "-r", str(tmp_path / "skipped.json"), "--workspace", str(elsewhere),
                  "-o", str(tmp_path / "graded.json"))
    assert graded.returncode == 0, graded.stderr.decode()
    v = json.loads((tmp_path / "graded.json").read_text())["tasks"][0]["runs"][0]["validations"]
    assert v["files"]["feedback"] == "File out.txt missing expected pattern: agent"
    assert v["files"]["details"]["workspace_dir"] == str(elsewhere)
    assert v["diff"]["feedback"] == "File out.txt missing expected fragment: made by"
