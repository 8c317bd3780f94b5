"""Every invalid_suite rule of the seed, one test each, plus the suite pin."""

from __future__ import annotations

import os

import pytest

from .conftest import files, write

GRADERS = "graders:\n  - type: {type}\n    name: g\n    config:\n{config}"


def grader(gtype: str, **config) -> str:
    import json

    lines = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in config.items())
    return GRADERS.format(type=gtype, config=lines or "      {}\n")


def task_extra(make, extra: str, tid="opt-a", **kw):
    base = {"opt-a": (["optimization"], "alpha"), "opt-b": (["optimization"], "beta"),
            "qual-c": (["qualification"], "gamma")}
    spec = base[tid]
    base[tid] = (spec[0], spec[1], extra)
    return make(tasks=base, **kw)


def assert_invalid(r, *needles):
    assert r.category == "invalid_suite", r.report["failure"]
    assert r.code == 1 and r.outcome == "failed" and r.report["evaluations"] == []
    for n in needles:
        assert n in r.report["failure"]["message"]


def test_hooks_are_rejected_as_invalid_suite(make):
    s = make(eval_extra="hooks:\n  before_run: [echo hi]\n")
    assert_invalid(s.run([]), "hooks")


def test_baseline_is_rejected(make):
    assert_invalid(make(eval_extra="baseline: true\n").run([]), "baseline")


def test_scenario_is_rejected(make):
    assert_invalid(make(eval_extra="scenario: chat\n").run([]), "scenario")


def test_max_attempts_above_one_is_rejected(make):
    assert_invalid(make(config_extra="max_attempts: 2\n").run([]), "max_attempts")


def test_max_attempts_one_is_fine(make):
    assert make(config_extra="max_attempts: 1\n").run([]).code == 0


def test_duplicate_task_ids_are_rejected(make):
    s = make()
    write(s.dir / "tasks" / "zz-copy.yaml", (s.dir / "tasks" / "opt-a.yaml").read_text())
    assert_invalid(s.run([]), "opt-a")


def test_task_without_id_is_rejected(make):
    s = make()
    write(s.dir / "tasks" / "noid.yaml", "name: x\ntags: [optimization]\ninputs:\n  prompt: hi\n")
    assert_invalid(s.run([]))


def test_empty_split_is_rejected(make):
    s = make(tasks={"opt-a": (["optimization"], "alpha")})
    assert_invalid(s.run([]), "qualification split")


def test_overlapping_splits_are_rejected(make):
    s = make(tasks={"opt-a": (["optimization", "qualification"], "alpha"), "qual-c": (["qualification"], "gamma")})
    assert_invalid(s.run([]), "overlap", "opt-a")


def test_splits_are_by_tag_and_tasks_by_exact_id(make):
    s = make(tasks={"opt-a": (["optimization"], "alpha"), "opt-a2": (["optimization-extra"], "zzz"),
                    "qual-c": (["qualification"], "gamma")})
    r = s.run([])
    assert r.report["suite_pin"]["splits"]["optimization"]["task_ids"] == ["opt-a"]
    assert r.report["suite_pin"]["splits"]["qualification"]["task_ids"] == ["qual-c"]


def test_overlay_task_with_own_context_dir_is_rejected(make, tmp_path):
    s = task_extra(make, f"context_dir: {tmp_path / 'suite' / 'fixtures'}\n")
    assert_invalid(s.run([]), "context_dir")


def test_overlay_task_with_context_fixture_is_rejected(make):
    s = task_extra(make, "")
    text = (s.dir / "tasks" / "opt-a.yaml").read_text().replace("  prompt:", "  context:\n    fixture: sub\n  prompt:")
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    (s.dir / "fixtures" / "sub").mkdir()
    assert_invalid(s.run([]), "inputs.context.fixture")


def _skill_suite(make, tmp_path, **kw):
    s = make(executor="skillecho", **kw)
    s.seed = tmp_path / "skillseed"
    write(s.seed / "SKILL.md", "---\nname: example\n---\nalpha gamma\n")
    return s


def test_skill_task_with_own_skill_directories_is_rejected(make, tmp_path):
    s = _skill_suite(make, tmp_path)
    text = (s.dir / "tasks" / "opt-a.yaml").read_text() + "skill_directories: [skills]\n"
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    assert_invalid(s.run([], target="skill-directory"), "skill_directories")


def test_skill_task_with_relative_context_dir_is_rejected(make, tmp_path):
    s = _skill_suite(make, tmp_path)
    text = (s.dir / "tasks" / "opt-a.yaml").read_text() + "context_dir: fixtures\n"
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    assert_invalid(s.run([], target="skill-directory"), "relative")


def test_skill_task_with_absolute_context_dir_inside_the_suite_is_fine(make, tmp_path):
    s = _skill_suite(make, tmp_path)
    text = (s.dir / "tasks" / "opt-a.yaml").read_text() + f"context_dir: {s.dir / 'fixtures'}\n"
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    assert s.run([], target="skill-directory").code == 0


def test_inputs_repos_is_rejected(make):
    s = make()
    text = (s.dir / "tasks" / "opt-a.yaml").read_text().replace("  prompt:", "  repos: [{url: x}]\n  prompt:")
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    assert_invalid(s.run([]), "repos")


def test_symlink_in_suite_is_rejected(make):
    s = make()
    os.symlink(s.dir / "eval.yaml", s.dir / "link.yaml")
    assert_invalid(s.run([]), "symlink")


def test_symlink_in_context_dir_is_rejected(make):
    s = make()
    os.symlink("/etc/hostname", s.dir / "fixtures" / "host")
    assert_invalid(s.run([]), "symlink")


def test_task_file_outside_the_suite_is_rejected(make, tmp_path):
    s = make()
    write(tmp_path / "elsewhere" / "qual-x.yaml",
          "id: qual-x\ntags: [qualification]\ninputs:\n  prompt: hi\n  files:\n    - path: checklist.md\n"
          "allow_ungraded: true\n")
    text = (s.dir / "eval.yaml").read_text() + '  - "../elsewhere/*.yaml"\n'
    (s.dir / "eval.yaml").write_text(text)
    assert_invalid(s.run([]), "outside the suite directory")


@pytest.mark.parametrize("value", ["../fixtures/checklist.md", "/etc/hostname"])
def test_path_fields_must_stay_in_pinned_dirs(make, value):
    s = make()
    text = (s.dir / "tasks" / "opt-a.yaml").read_text().replace("- path: checklist.md", f"- path: {value}")
    (s.dir / "tasks" / "opt-a.yaml").write_text(text)
    r = s.run([])
    assert r.category == "invalid_suite"


@pytest.mark.parametrize("level", ["eval", "task", "checkpoint"])
def test_diff_update_snapshots_is_rejected_at_every_level(make, level, tmp_path):
    g = grader("diff", update_snapshots=True, context_dir=str(tmp_path / "suite"),
               expected_files=[{"path": "a.txt", "contains": ["+x"]}])
    if level == "eval":
        s = make(eval_extra=g)
        r = s.run([], plugins=["tests.optimize.plugins"])
        assert_invalid(r, "update_snapshots")
    elif level == "task":
        s = task_extra(make, g.replace("graders:\n", ""))
        assert_invalid(s.run([]), "update_snapshots")
    else:
        from waza_core.optimize.pin import Admission, Splits

        s = make()
        from waza_core.plugins import get_registry
        from waza_core.suite.load import load_suite

        suite = load_suite(s.eval, get_registry(["tests.optimize.plugins"]))
        t = suite.tasks[0]
        raw = dict(t.raw, checkpoints=[{"graders": [{"type": "diff", "name": "d",
                                                     "config": {"update_snapshots": True}}]}])
        import attrs

        suite = attrs.evolve(suite, tasks=(attrs.evolve(t, raw=raw),) + suite.tasks[1:])
        splits = Splits("optimization", "qualification", ("opt-a", "opt-b"), ("qual-c", "qual-d"))
        from waza_core.optimize.failures import OptimizeFailure

        with pytest.raises(OptimizeFailure) as exc:
            Admission(suite, "context-overlay", splits, s.dir / "fixtures").check()
        assert "update_snapshots" in exc.value.message


@pytest.mark.parametrize("gtype,config,needle", [
    ("json_schema", {"schema_file": "schema.json"}, "schema_file"),
    ("prompt", {"prompt": "judge", "rubric": "./rubric.md"}, "rubric './rubric.md' is relative to the working"),
    ("prompt", {"prompt": "judge", "rubric": "rubrics/quality.md"}, "rubric"),
    ("trigger", {"skill_path": "SKILL.md", "mode": "positive"}, "skill_path"),
    ("diff", {"context_dir": "snapshots", "expected_files": [{"path": "a.txt", "contains": ["x"]}]}, "context_dir"),
    ("diff", {"expected_files": [{"path": "a.txt", "snapshot": "a.snap"}]}, "snapshot"),
])
def test_cwd_relative_grader_files_are_rejected(make, gtype, config, needle):
    s = make(eval_extra=grader(gtype, **config))
    assert_invalid(s.run([]), needle)


def test_rubric_file_outside_pinned_dirs_is_rejected_but_builtin_names_pass(make, tmp_path):
    s = make(eval_extra=grader("prompt", prompt="judge", rubric="/opt/rubrics/quality.md"))
    assert_invalid(s.run([]), "outside")
    from .conftest import Suite

    s2 = Suite(tmp_path / "other", eval_extra=grader("prompt", prompt="judge", rubric="helpfulness"))
    assert s2.run([]).code == 0


def test_prompt_grader_rubric_and_prompt_file_with_the_real_grader(make, tmp_path):
    """The real prompt grader: an absolute rubric path inside the suite and a prompt_file
    (suite-relative, confined to the suite) are admitted; a rubric file the seed calls
    cwd-relative is what the grader really reads from the working directory."""
    from waza_graders.prompt import PromptGrader, is_rubric_path

    assert PromptGrader.name == "prompt" and is_rubric_path("rubrics/quality.md")
    suite = tmp_path / "suite"
    write(suite / "rubrics" / "quality.md", "---\nname: q\nversion: 1.0.0\nscale: pass-fail\n"
                                            "description: d\n---\nIs it good?\n")
    write(suite / "judge.md", "Is it good?\n")
    graders = ("graders:\n" + grader("prompt", rubric=str(suite / "rubrics" / "quality.md")).replace("graders:\n", "")
               + grader("prompt", prompt_file="judge.md").replace("graders:\n", "").replace("name: g", "name: g2"))
    r = make(eval_extra=graders).run([])
    assert r.code == 0, r.report["failure"]
    assert r.report["failure"] is None


def test_prompt_file_leaving_the_suite_is_invalid(make):
    s = make(eval_extra=grader("prompt", prompt_file="../judge.md"))
    assert_invalid(s.run([]), "prompt_file '../judge.md' must stay inside the suite folder")


def test_absolute_grader_files_inside_the_suite_are_fine(make, tmp_path):
    """The real json_schema, trigger and diff graders, reading pinned files by absolute path."""
    suite = tmp_path / "suite"
    write(suite / "schema.json", '{"type": "string"}')
    write(suite / "skill" / "SKILL.md", "---\nname: checklist\n---\nRead the checklist.\n")
    write(suite / "snapshots" / "a.txt", "unused\n")
    graders = "graders:\n" + "".join(
        grader(t, **c).replace("graders:\n", "").replace("name: g", f"name: {t}") for t, c in [
            ("json_schema", {"schema_file": str(suite / "schema.json")}),
            ("trigger", {"skill_path": str(suite / "skill"), "mode": "positive"}),
            ("diff", {"context_dir": str(suite / "snapshots"),
                      "expected_files": [{"path": "checklist.md", "snapshot": "a.txt"}]})])
    r = make(eval_extra=graders).run([])
    assert r.code == 0, r.report["failure"]
    assert r.report["failure"] is None
    import json

    evidence = json.loads(next((r.out / "evidence" / "optimization").glob("*.json")).read_text())
    v = evidence["tasks"][0]["runs"][0]["validations"]
    assert v["json_schema"]["feedback"].startswith("Output is not valid JSON: invalid character 'M'")
    assert v["trigger"]["feedback"] == "Prompt is trigger-aligned (score 1.00 >= 0.60)"
    assert (v["diff"]["score"], v["diff"]["feedback"]) == (0.5, "File checklist.md does not match snapshot a.txt")


@pytest.mark.parametrize("config,needle", [
    ({"command": "python3", "args": ["check.py"], "timeout": 5}, "relative script"),
    ({"command": "./check.sh", "timeout": 5}, "relative script"),
    ({"command": "{tmp}/bin/check", "timeout": 5}, "outside"),
    ({"command": "python3", "args": ["{tmp}/elsewhere/check.py"], "timeout": 5}, "outside"),
    ({"command": "python3", "args": ["{suite}/check.py"]}, "positive timeout"),
    ({"command": "python3", "args": ["{suite}/check.py"], "timeout": 0}, "positive timeout"),
])
def test_program_grader_scripts_must_be_pinned(make, tmp_path, monkeypatch, config, needle):
    suite_dir = str(tmp_path / "suite")
    # every script exists (a missing one is a load error, before the optimizer's own check runs);
    # the relative ones are found from the working folder, as waza resolves them
    monkeypatch.chdir(tmp_path)
    for name in ("check.py", "check.sh", "suite/check.py", "elsewhere/check.py", "bin/check"):
        write(tmp_path / name, "")

    def fill(value: str) -> str:
        return value.replace("{suite}", suite_dir).replace("{tmp}", str(tmp_path))

    config = {k: ([fill(a) for a in v] if isinstance(v, list) else fill(v) if isinstance(v, str) else v)
              for k, v in config.items()}
    s = make(eval_extra=grader("program", **config))
    assert_invalid(s.run([]), needle)


def test_program_grader_with_pinned_script_and_path_interpreter_is_fine(make, tmp_path):
    script = tmp_path / "suite" / "check.py"
    write(script, "import sys\nsys.exit(0)\n")
    s = make(eval_extra=grader("program", command="python3", args=[str(script)], timeout=10))
    r = s.run([])
    assert r.code == 0, r.report["failure"]


@pytest.mark.parametrize("name", ["*", "skill", "example"])
def test_disabled_skills_removing_the_candidate_is_rejected(make, tmp_path, name):
    s = _skill_suite(make, tmp_path, config_extra=f"disabled_skills: [\"{name}\"]\n")
    assert_invalid(s.run([], target="skill-directory"), "disabled_skills")


def test_same_named_skill_in_the_working_directory_is_rejected(make, tmp_path):
    s = _skill_suite(make, tmp_path)
    cwd = tmp_path / "work"
    write(cwd / "skills" / "example" / "SKILL.md", "---\nname: example\n---\nshadow\n")
    assert_invalid(s.run([], target="skill-directory", cwd=cwd), "working directory")


def test_working_directory_is_checked_before_every_evaluation(make, tmp_path, monkeypatch):
    from waza_core.optimize import evaluate as ev

    s = _skill_suite(make, tmp_path)
    cwd = tmp_path / "work"
    cwd.mkdir()
    real = ev.run_engine

    def planting(*a, **k):
        out = real(*a, **k)
        write(cwd / "example" / "SKILL.md", "---\nname: example\n---\nshadow\n")
        return out

    monkeypatch.setattr(ev, "run_engine", planting)
    r = s.run([files("---\nname: example\n---\nalpha beta gamma\n", path="SKILL.md")],
              target="skill-directory", cwd=cwd)
    assert r.category == "invalid_suite"
    last = r.report["evaluations"][-1]
    assert last["state"] == "invalid_suite" and last["role"] == "candidate"


def test_suite_that_does_not_load_is_invalid_suite(make):
    # (an unknown top-level key of a 1.x eval is only a warning, as in waza Go: use an unknown grader type)
    s = make(eval_extra="graders: [{type: bogus_key, name: g}]\n")
    assert_invalid(s.run([]), "bogus_key")
