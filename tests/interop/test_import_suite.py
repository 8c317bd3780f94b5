"""`waza interop import-suite` / `export-suite` without the promptfoo oracle: refusals and
their positions, --approximate, the output folder, AgentV files, export refusals, and a
third-party suite dialect through the plugin hook."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from tests.interop import promptfoo_run as pf


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def imp(config: Path, out: Path, *extra: str):
    return pf.waza("interop", "import-suite", str(config), "-o", str(out), *extra)


def load(path: Path):
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


CONFIG = """\
providers: [openai:gpt-3.5-turbo-0613, "anthropic:messages:claude"]
prompts: ["Say {{word}}"]
tests:
  - vars: {word: hi}
    assert:
      - type: contains
        value: hi
      - type: llm-rubric
        value: is friendly
      - type: similar
        value: hello
        threshold: 0.8
"""


def test_refused_with_the_position_inside_each_offending_assertion(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", CONFIG)
    out = tmp_path / "suite"
    proc = imp(config, out)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"waza: error: {config}:8:15: assertion 2 has type 'llm-rubric'"), lines
    assert lines[1].startswith(f"waza: error: {config}:10:15: assertion 3 has type 'similar'"), lines
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["promptfooconfig.yaml"]


def test_approximate_records_every_approximation(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", CONFIG)
    out = tmp_path / "suite"
    proc = imp(config, out, "--approximate")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("APPROXIMATION: ")]
    assert len(notes) == 2 and f"{config}:8:15" in notes[0] and f"{config}:10:15" in notes[1]
    (task_file,) = (out / "tasks").glob("*.yaml")
    task = load(task_file)
    assert [g["type"] for g in task["graders"]] == ["text", "prompt"]
    assert task["graders"][1]["config"] == {"prompt": "is friendly"}
    assert len(task["metadata"]["interop"]["approximations"]) == 2
    text = task_file.read_text(encoding="utf-8")
    assert text.count("# APPROXIMATION: ") == 2
    assert "APPROXIMATIONS (2)" in (out / "eval.yaml").read_text(encoding="utf-8")
    assert pf.waza("validate", "--strict", str(out)).returncode == 0


def test_weight_zero_transform_and_threshold_are_refused(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", """\
prompts: ["{{q}}"]
tests:
  - vars: {q: a}
    assert:
      - type: contains
        value: a
        weight: 0
      - type: contains
        value: a
        transform: output.toUpperCase()
  - vars: {q: b}
    threshold: 0.5
    assert:
      - {type: contains, value: b}
      - {type: contains, value: c}
""")
    proc = imp(config, tmp_path / "suite")
    assert proc.returncode == 2
    assert f"{config}:7:17: assertion 1 has weight: 0" in proc.stderr
    assert f"{config}:10:9: assertion 2 has transform" in proc.stderr
    assert f"{config}:12:5: threshold 0.5" in proc.stderr


def test_templates_that_cannot_be_rendered_exactly_are_refused(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", """\
prompts:
  - "Hi {{ name | title }}"
  - "{% if x %}yes{% endif %}"
tests:
  - vars: {name: a, x: 1}
""")
    proc = imp(config, tmp_path / "suite")
    assert proc.returncode == 2
    assert f"{config}:2:5: the prompt cannot be rendered exactly" in proc.stderr
    assert f"{config}:3:5: the prompt cannot be rendered exactly" in proc.stderr


def test_the_output_folder_must_be_new_or_empty(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n")
    busy = tmp_path / "busy"
    write(busy, "keep.txt", "mine")
    proc = imp(config, busy)
    assert proc.returncode == 2 and "not an empty folder" in proc.stderr
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert imp(config, empty).returncode == 0
    assert (empty / "eval.yaml").is_file()
    assert imp(config, tmp_path / "missing" / "deeper").returncode == 2


def test_agentv_files_map_when_all_pass_equals_the_weighted_mean(tmp_path):
    config = write(tmp_path, "eval.yaml", """\
description: agentv demo
tests:
  - id: greets
    input: "Hello there"
    assert:
      - {type: contains, value: Hello}
      - {type: regex, value: "there$"}
  - id: many
    input: "x"
    assert:
      - {type: contains, value: a}
      - {type: contains, value: b}
      - {type: contains, value: c}
      - {type: contains, value: d}
      - {type: contains, value: x}
  - id: gated
    input: "y"
    assert:
      - {type: contains, value: y, required: true}
""")
    proc = imp(config, tmp_path / "suite", "--dialect", "agentv")
    assert proc.returncode == 2
    assert f"{config}:8:5: test 'many' passes in AgentV on a weighted mean >= 0.8" in proc.stderr
    assert f"{config}:19:36: required is not translated" in proc.stderr
    ok = write(tmp_path, "ok.yaml", "tests:\n  - id: greets\n    input: Hello there\n    assert:\n"
                                    "      - {type: contains, value: Hello}\n      - {type: icontains, value: THERE}\n")
    out = tmp_path / "ok-suite"
    assert imp(ok, out, "--dialect", "agentv").returncode == 0
    assert pf.waza_verdicts(out, tmp_path) == {"t1": True}


def test_export_refuses_graders_without_an_exact_promptfoo_equivalent(tmp_path):
    suite = tmp_path / "suite"
    write(suite, "eval.yaml", 'name: s\nskill: s\nconfig: {executor: echo}\ntasks: ["tasks/*.yaml"]\n')
    write(suite, "tasks/a.yaml", """\
id: a
inputs: {prompt: hello}
graders:
  - {type: text, name: ci, config: {contains: [HELLO]}}
  - {type: code, name: py, config: {assertions: ["len(output) > 1"]}}
  - {type: file, name: f, config: {must_exist: [x]}}
""")
    out = tmp_path / "promptfooconfig.yaml"
    proc = pf.waza("interop", "export-suite", str(suite), "-o", str(out))
    assert proc.returncode == 2
    assert "text contains compares after Go's lower-casing" in proc.stderr
    assert "Python code assertions" in proc.stderr
    assert "grader 'f' has type 'file'" in proc.stderr
    assert not out.exists()


def test_a_third_party_suite_dialect_plugs_in_through_the_hook(tmp_path):
    config = write(tmp_path, "cases.txt", "say hi => hi\nsay bye => hello\n")
    out = tmp_path / "suite"
    proc = imp(config, out, "--dialect", "example-arrows-v1", "-p", "tests.interop.fake_suite_dialect")
    assert proc.returncode == 0, proc.stderr
    assert pf.waza_verdicts(out, tmp_path) == {"t1": True, "t2": False}
    listed = pf.waza("interop", "list", "-p", "tests.interop.fake_suite_dialect").stdout
    assert "example-arrows-v1  Toy suite dialect" in listed


def test_an_assertion_dialect_refuses_whole_suites_and_the_other_way_round(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", "tests: []\n")
    proc = imp(config, tmp_path / "suite", "--dialect", pf_adapter())
    assert proc.returncode == 2 and "does not import whole suites" in proc.stderr
    proc = pf.waza("interop", "export", "--adapter", "promptfoo")
    assert proc.returncode == 2 and "translates whole suites only" in proc.stderr


def pf_adapter() -> str:
    from tests.interop.helpers import ADAPTER

    return ADAPTER


def test_echo_executor_answers_with_the_prompt(tmp_path):
    suite = tmp_path / "suite"
    write(suite, "eval.yaml", 'name: e\nskill: e\nconfig: {executor: echo}\ntasks: ["tasks/*.yaml"]\n')
    write(suite, "tasks/a.yaml", "id: a\ninputs:\n  prompt: '{\"status\": \"ok\"}'\n  follow_up_prompts: [again]\n"
                                 "graders:\n  - {type: text, name: last, config: {contains_cs: [again]}}\n")
    proc = pf.waza("run", str(suite), "-q", "-o", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    run = json.loads((tmp_path / "r.json").read_text())["tasks"][0]["runs"][0]
    assert run["final_output"] == "again" and run["usage"] is None


def test_approximate_translates_what_the_exact_handlers_refuse(tmp_path):
    config = write(tmp_path, "promptfooconfig.yaml", """\
prompts: ["{{q}}"]
tests:
  - vars: {q: '{"a": 1}'}
    assert:
      - type: javascript
        value: context.vars.q.length > 0
      - type: is-json
        value: {type: object, required: [a]}
      - type: equals
        value: {a: 1}
""")
    assert imp(config, tmp_path / "exact").returncode == 2
    out = tmp_path / "suite"
    proc = imp(config, out, "--approximate")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("APPROXIMATION: ")]
    assert [n.split(": ")[1].split(" ")[0] for n in notes] == [f"{config}:6:16", f"{config}:8:16", f"{config}:10:16"]
    (task_file,) = (out / "tasks").glob("*.yaml")
    assert [g["type"] for g in load(task_file)["graders"]] == ["code", "json_schema"]
