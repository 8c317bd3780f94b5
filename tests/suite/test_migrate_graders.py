"""waza migrate brings suites written for old waza forward: regex and keyword graders become
text graders with the same verdicts, keys waza never read are removed with a note, and what has
no exact translation is refused with file:line:col."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write
from tests.graders.conftest import ctx
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import WazaError
from waza_core.grading.base import GraderSetup
from waza_core.suite import migrate
from waza_core.suite.load import load_suite

# shaped like the suites of 2026 skill repositories (old waza, before regex/keyword became text)
EVAL = """\
# Old-style suite (comments must survive)
name: deploy-eval
skill: deploy
config:
  executor: mock
  trials_per_task: 1
graders:
  - type: code
    name: has_output
    config:
      assertions: ["len(output) > 0"]
  - type: regex              # no crash text
    name: no_failure
    config:
      must_not_match:
        - "(?i)fatal error|crashed"
  - type: behavior
    name: efficiency
    config:
      max_tool_calls: 40
      skip_if_no_digest: true   # only when a digest exists
  - type: regex
    name: informational
    config:
      must_match:
        - "index\\\\.(js|ts)"
      description: "informational"
      skip_if_no_match: true  # never honoured
tasks:
  - "tasks/*.yaml"
"""

TASK = """\
id: t1
name: first
inputs:
  prompt: deploy it
graders:
  - name: words
    type: keyword
    config:
      must_contain: ["Bicep", "AZD"]   # case-insensitive in old waza
      must_not_contain: [terraform]
  - name: alias
    type: keyword
    config:
      keywords: [Deploy]
  - name: pattern
    type: regex
    config:
      must_match: ["Python"]          # case-sensitive in old waza
"""


@pytest.fixture
def suite(tmp_path):
    write(tmp_path / "s" / "tasks" / "t1.yaml", TASK)
    write(tmp_path / "s" / "tasks" / "t2.yaml", "id: t2\ninputs: {prompt: hi}\n")  # nothing to change
    write(tmp_path / "s" / "eval.yaml", EVAL)
    return tmp_path / "s"


def test_plan_lists_every_change_of_the_suite_and_its_task_files(suite):
    plans = migrate.plan_suite(suite / "eval.yaml")
    assert [p.file.name for p in plans] == ["eval.yaml", "t1.yaml"]  # t2 has nothing to change
    ev, task = plans
    assert ev.changes[1:] == (
        "graders[1] (no_failure): type regex -> text; must_not_match -> regex_not_match",
        "graders[2] (efficiency): removed behavior config key 'skip_if_no_digest'",
        "graders[3] (informational): type regex -> text; must_match -> regex_match, removed description, "
        "removed skip_if_no_match",
    )
    assert any("skip_if_no_digest removed; waza (Go) never read it" in n for n in ev.notes)
    assert task.kind == "task" and task.changes == (
        "graders[0] (words): type keyword -> text; must_contain -> contains, must_not_contain -> not_contains",
        "graders[1] (alias): type keyword -> text; keywords -> contains",
        "graders[2] (pattern): type regex -> text; must_match -> regex_match",
    )


def test_rewrite_is_minimal_and_keeps_comments(suite):
    ev, task = migrate.plan_suite(suite / "eval.yaml")
    assert "  - type: text              # no crash text\n" in ev.new_text
    assert "      regex_not_match:\n        - \"(?i)fatal error|crashed\"\n" in ev.new_text
    assert "      max_tool_calls: 40\n  - type: text\n" in ev.new_text  # the key and its comment are gone
    assert "skip_if_no" not in ev.new_text and "description" not in ev.new_text
    assert "# Old-style suite (comments must survive)" in ev.new_text
    assert '      contains: ["Bicep", "AZD"]   # case-insensitive in old waza\n' in task.new_text
    assert '      regex_match: ["Python"]          # case-sensitive in old waza\n' in task.new_text


def test_migrated_suite_loads_and_grades_as_old_waza_did(suite, registry):
    for m in migrate.plan_suite(suite / "eval.yaml"):
        migrate.write(m)
    loaded = load_suite(suite / "eval.yaml", registry)
    assert [g.type for g in loaded.graders] == ["code", "text", "behavior", "text"]
    t1 = next(t for t in loaded.tasks if t.id == "t1")
    graders = {g.name: registry.get("grader", g.type)(g, loaded) for g in t1.graders}
    for g in graders.values():
        g.start(GraderSetup())
    # old keyword: both sides lowered; old regex: Go regexp, case-sensitive
    out = "We deploy with bicep and azd, in python."
    res = {n: g.grade(ctx(out)) for n, g in graders.items()}
    assert (res["words"].score, res["words"].passed) == (1.0, True)
    assert res["alias"].passed is True
    assert (res["pattern"].score, res["pattern"].passed) == (0.0, False)  # "python" is not "Python"
    res = graders["words"].grade(ctx("BICEP only, with Terraform"))
    assert res.score == pytest.approx(1 / 3) and not res.passed  # passed checks / checks, as before
    assert not any(m.needed for m in migrate.plan_suite(suite / "eval.yaml"))  # idempotent


def test_check_lists_changes_and_exits_1_then_migrated_suite_runs_under_mock(waza, suite):
    before = (suite / "eval.yaml").read_text(), (suite / "tasks" / "t1.yaml").read_text()
    res = waza("migrate", "--check", "eval.yaml", cwd=suite)
    assert res.returncode == 1, res.stderr
    out = res.stdout.decode()
    assert "tasks/t1.yaml: needs migration:" in out.replace("\\", "/")
    assert "  - graders[1] (alias): type keyword -> text; keywords -> contains" in out
    assert b"2 file(s) need migrating; run: waza migrate eval.yaml" in res.stderr
    assert ((suite / "eval.yaml").read_text(), (suite / "tasks" / "t1.yaml").read_text()) == before
    assert waza("run", "eval.yaml", "-q", "-o", "r.json", cwd=suite).returncode == 2  # old kinds do not load
    res = waza("migrate", "eval.yaml", cwd=suite)
    assert res.returncode == 0 and b"migrated to schemaVersion 1.5:" in res.stdout
    assert waza("migrate", "--check", "eval.yaml", cwd=suite).returncode == 0
    res = waza("run", "eval.yaml", "-q", "-o", "r.json", cwd=suite)
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads((suite / "r.json").read_text())
    assert {t["test_id"] for t in doc["tasks"]} == {"t1", "t2"}
    assert all(t["status"] in ("passed", "failed") for t in doc["tasks"])


@pytest.mark.parametrize("config,where,message", [
    ('{must_match: ["(?=x)"]}', "8:27", "is not valid RE2"),
    ("{}", "8:13", "has no must_match or must_not_match list"),
    ("{must_match: a}", "8:26", "must be a list of strings"),
    ('{must_match: [a], note: x}', "8:31", "flow style"),
])
def test_no_exact_translation_is_refused_with_a_position(tmp_path, config, where, message):
    f = write(tmp_path / "eval.yaml", "name: d\nskill: d\ntasks: [t/*.yaml]\ngraders:\n"
              f"  - type: regex\n    name: r\n    # c\n    config: {config}\n")
    with pytest.raises(WazaError, match=message) as exc:
        migrate.plan_suite(f)
    assert f"eval.yaml:{where}: grader 'r'" in str(exc.value).replace(str(tmp_path) + "/", "")


def test_keyword_with_both_lists_is_refused(tmp_path):
    f = write(tmp_path / "eval.yaml", "name: d\nskill: d\ntasks: [t/*.yaml]\ngraders:\n"
              "  - type: keyword\n    name: k\n    config:\n      must_contain: [a]\n      keywords: [b]\n")
    with pytest.raises(WazaError, match="sets both must_contain and keywords"):
        migrate.plan_suite(f)


def test_empty_pattern_list_translates_exactly(tmp_path, registry):
    write(tmp_path / "t" / "a.yaml", "id: a\ninputs: {prompt: p}\n")
    f = write(tmp_path / "eval.yaml", "name: d\nskill: d\ntasks: [t/*.yaml]\ngraders:\n"
              "  - type: regex\n    name: r\n    config:\n      must_match: []\n")
    migrate.write(migrate.plan(f))
    g = load_suite(f, registry).graders[0]
    assert (g.type, g.config) == ("text", {"regex_match": []})  # zero checks score 1, as in old waza


def test_checkpoint_graders_in_tasks_are_migrated(tmp_path):
    t = write(tmp_path / "t" / "a.yaml", "id: a\ninputs: {prompt: p}\ncheckpoints:\n  - after_turn: 1\n"
              "    graders:\n      - type: keyword\n        name: k\n        config: {must_contain: [x]}\n")
    write(tmp_path / "eval.yaml", "name: d\nskill: d\ntasks: [t/*.yaml]\n")
    m = migrate.plan_task(t)
    assert m.changes == ("checkpoints.0.graders[0] (k): type keyword -> text; must_contain -> contains",)
    assert "type: text\n        name: k\n        config: {contains: [x]}" in m.new_text


def test_example_folder_behaves_as_its_readme_says(waza, tmp_path):
    import shutil

    from tests.conftest import REPO

    suite = tmp_path / "my-suite"
    shutil.copytree(REPO / "examples" / "migrate-old-suite" / "old-suite", suite)
    codes = [waza(*args, cwd=tmp_path).returncode for args in (
        ("migrate", "--check", "my-suite"), ("run", "my-suite/eval.yaml", "-q", "-o", "r.json"),
        ("migrate", "my-suite"), ("migrate", "--check", "my-suite"),
        ("run", "my-suite/eval.yaml", "-q", "-o", "r.json"))]
    assert codes == [1, 2, 0, 0, 0]
    comments = [ln for f in sorted(suite.rglob("*.yaml")) for ln in f.read_text().splitlines() if "#" in ln]
    assert len(comments) == 5  # every comment kept, but the one on the removed description line
