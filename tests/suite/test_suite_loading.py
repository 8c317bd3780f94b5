"""Suite loading: every bad input gets a clear message with file:line:col, all at once."""

from __future__ import annotations

import os

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.errors import SuiteError
from waza_core.suite.load import load_suite

TASK = """
id: t1
name: Task one
inputs:
  prompt: hello
"""


def problems(make_suite, registry, eval_yaml=BASIC_EVAL, tasks=None, files=None) -> list[str]:
    path = make_suite(eval_yaml, tasks if tasks is not None else {"tasks/t1.yaml": TASK}, files)
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    return exc.value.problems


def test_valid_suite_loads(make_suite, registry):
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK}), registry)
    assert [t.id for t in suite.tasks] == ["t1"]
    assert suite.config.executor == "mock" and suite.config.trials_per_task == 1
    assert suite.tasks[0].prompt == "hello"


def test_unknown_key_suggests_nearest_with_position(make_suite, registry):
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK + "tagz: []\n"}), registry)
    assert len(suite.warnings) == 1  # a task file's unknown key only warns, as in waza (Go)
    assert suite.warnings[0].endswith("tasks/a.yaml:5:1: warning: unknown key 'tagz' (did you mean 'tags'?); "
                                      "ignored")


def test_a_misspelt_graders_key_is_an_error_not_a_warning(make_suite, registry):
    """waza (Go) warns and the task then passes having checked nothing: an error here."""
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": TASK + "gradrs: []\n"})
    assert out[0].endswith("tasks/a.yaml:5:1: unknown key 'gradrs' (did you mean 'graders'?); a near miss of a "
                           "known key is an error in every mode (ignored, it would silently drop what it sets)")


def test_malformed_yaml(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": "id: [\n"})
    assert "tasks/a.yaml:2:1: invalid YAML" in out[0]


def test_duplicate_keys(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": TASK + "id: again\n"})
    assert "tasks/a.yaml:5:1: duplicate key 'id' (first defined on line 1)" in out[0]


def test_wrong_type(make_suite, registry):
    bad = BASIC_EVAL.replace("trials_per_task: 1", 'trials_per_task: "3"')
    out = problems(make_suite, registry, eval_yaml=bad)
    assert any('eval.yaml:5:20: config.trials_per_task: expected integer, got string "3"' in p for p in out)


def test_unknown_grader_type(make_suite, registry):
    task = TASK + "graders:\n  - type: txt\n    name: g\n    config: {contains: [a]}\n"
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task})
    assert "tasks/a.yaml:6:11: unknown grader type 'txt' (did you mean 'text'?)" in out[0]


def test_grader_config_checked_by_its_own_schema(make_suite, registry):
    task = TASK + "graders:\n  - type: text\n    name: g\n    config: {containz: [a]}\n"
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task})
    assert "grader 'g': unknown key 'containz' (did you mean 'contains'?)" in out[0]
    assert ":8:14:" in out[0]


def test_invalid_regex_is_a_load_error_with_its_position(make_suite, registry):
    task = TASK + "graders:\n  - type: text\n    name: g\n    config:\n      regex_match: ['ok', 'a(b']\n"
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task})
    assert "grader 'g': invalid regex_match pattern 'a(b': missing ): a(b" in out[0]
    assert ":9:27:" in out[0]


def test_missing_prompt(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": "id: a\ninputs:\n  files: []\n"})
    assert "missing prompt: set inputs.prompt or inputs.prompt_file" in out[0]


def test_prompt_and_prompt_file_together(make_suite, registry):
    task = "id: a\ninputs:\n  prompt: x\n  prompt_file: p.md\n"
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task}, files={"tasks/p.md": "hi"})
    assert "set either inputs.prompt or inputs.prompt_file, not both" in out[0]


def test_prompt_file_is_read_relative_to_the_task(make_suite, registry):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs:\n  prompt_file: prompts/p.md\n"},
                      {"tasks/prompts/p.md": "from a file\n"})
    assert load_suite(path, registry).tasks[0].prompt == "from a file\n"


@pytest.mark.parametrize("rel", ["../secret.md", "/etc/passwd", "sub/../../secret.md"])
def test_prompt_file_outside_the_task_folder(make_suite, registry, rel):
    task = f"id: a\ninputs:\n  prompt_file: {rel}\n"
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task}, files={"secret.md": "x"})
    assert "must be a relative path inside the task's folder" in out[0]


def test_prompt_file_symlink_escaping_the_folder(make_suite, registry, tmp_path):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs:\n  prompt_file: link.md\n"},
                      {"secret.md": "x"})
    os.symlink(path.parent / "secret.md", path.parent / "tasks" / "link.md")
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    assert "leaves the task's folder" in exc.value.problems[0]


def test_glob_matching_nothing(make_suite, registry):
    """As in waza (Go): a glob without files only warns while another glob finds tasks;
    the suite is an error when no glob finds any."""
    some = BASIC_EVAL.replace('tasks: ["tasks/*.yaml"]', 'tasks: ["tasks/*.yaml", "more/*.yaml"]')
    suite = load_suite(make_suite(some, {"tasks/t1.yaml": TASK}), registry)
    assert any("warning: task glob 'more/*.yaml' matches no file" in w for w in suite.warnings)
    none = BASIC_EVAL.replace('tasks: ["tasks/*.yaml"]', 'tasks: ["more/*.yaml"]')
    out = problems(make_suite, registry, eval_yaml=none)
    assert any("task glob 'more/*.yaml' matches no file" in p for p in out)


def test_double_star_glob(make_suite, registry):
    ev = BASIC_EVAL.replace('tasks: ["tasks/*.yaml"]', 'tasks: ["tasks/**/*.yaml"]')
    path = make_suite(ev, {"tasks/a.yaml": TASK, "tasks/deep/er/b.yaml": TASK.replace("t1", "t2")})
    assert sorted(t.id for t in load_suite(path, registry).tasks) == ["t1", "t2"]


def test_two_tasks_with_one_id(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": TASK, "tasks/b.yaml": TASK})
    assert "tasks/b.yaml:1:5: task id 't1' is also used by" in out[0]
    assert "tasks/a.yaml" in out[0]


def test_all_problems_reported_at_once(make_suite, registry):
    bad = BASIC_EVAL.replace("executor: mock", "executor: mock\n  trials_per_task: 0")
    out = problems(make_suite, registry, eval_yaml=bad.replace("  trials_per_task: 1\n", ""),
                   tasks={"tasks/a.yaml": TASK + "enabled: maybe\n", "tasks/b.yaml": "id: [\n"})
    assert len(out) == 3
    assert any("trials_per_task" in p for p in out)


def test_disabled_tasks_are_dropped(make_suite, registry):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK,
                                   "tasks/b.yaml": "id: b\nenabled: false\ninputs: {prompt: x}\n"})
    assert [t.id for t in load_suite(path, registry).tasks] == ["t1"]


def test_expected_keys_become_synthetic_graders(make_suite, registry):
    task = TASK + "expected:\n  output_contains: [a, b]\n  output_contains_any: [c]\n"
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": task}), registry)
    assert [g.name for g in suite.tasks[0].graders] == ["_output_contains", "_output_contains_any"]


def test_top_level_not_a_mapping(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": "- just\n- a list\n"})
    assert "tasks/a.yaml:1:1: expected a mapping at the top level, got list" in out[0]


def test_not_utf8(make_suite, registry, tmp_path):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    (path.parent / "tasks" / "a.yaml").write_bytes(b"id: \xff\n")
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    assert "not UTF-8 text" in exc.value.problems[0]


def test_task_grader_reusing_a_global_grader_name_warns(make_suite, registry):
    """As in waza (Go) the task grader's result replaces the global one's: loaded, with a warning."""
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n"
    task = TASK + "graders:\n  - {type: text, name: g, config: {contains: [mock]}}\n"
    suite = load_suite(make_suite(ev, {"tasks/a.yaml": task}), registry)
    assert any("tasks/a.yaml:6:24: warning: grader name 'g' is also a global grader's" in w for w in suite.warnings)


@pytest.mark.parametrize("where", ["eval", "task"])
def test_expected_grader_names_are_reserved(make_suite, registry, where):
    entry = "graders:\n  - {type: text, name: _output_contains, config: {contains: [x]}}\n"
    if where == "eval":
        out = problems(make_suite, registry, eval_yaml=BASIC_EVAL + entry)
    else:
        out = problems(make_suite, registry, tasks={"tasks/a.yaml": TASK + entry})
    assert "grader name '_output_contains' is reserved for expected.* checks" in out[0]


def test_re2_only_regex_syntax_loads_and_lookaround_does_not(make_suite, registry):
    """Patterns are RE2 (waza's syntax): POSIX classes and \\pL are fine, lookarounds are not."""
    task = TASK + ("graders:\n  - type: text\n    name: g\n"
                   "    config: {regex_match: ['[[:digit:]]+', '\\pL', 'a(?=b)']}\n")
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": task})
    assert len(out) == 1
    assert "invalid regex_match pattern 'a(?=b)': invalid perl operator: (?= (lookahead is not supported" in out[0]


def test_unknown_grader_type_names_broken_plugins(make_suite):
    from waza_core.plugins import build_plugin_manager

    reg = build_plugin_manager(["tests.fixture_plugins.broken_import"])[1]
    task = TASK + "graders:\n  - {type: wordy, name: g}\n"
    out = problems(make_suite, reg, tasks={"tasks/a.yaml": task})
    assert "plugins that failed to load: tests.fixture_plugins.broken_import (ModuleNotFoundError" in out[0]


def test_yaml_type_names_in_messages(make_suite, registry):
    out = problems(make_suite, registry, tasks={"tasks/a.yaml": "id: t\ninputs: [1]\n"})
    assert "inputs: expected mapping, got list [1]" in out[0]


def test_empty_text_config(make_suite, registry):
    out = problems(make_suite, registry,
                   tasks={"tasks/a.yaml": TASK + "graders:\n  - {type: text, name: g, config: {}}\n"})
    assert "grader 'g': config: must not be empty" in out[0]
