"""The unknown-key policy of waza (Go): warnings in 1.x evals and task files, errors elsewhere."""

from __future__ import annotations

from tests.suite.conftest import LEGACY, SCENARIO, TASK


def test_legacy_eval_warns_with_position_and_suggestion(load):
    suite = load(LEGACY.replace("executor: mock", "executor: mock\n  paralle_mode: true") + "owner: x\n")
    shown = [w.split("eval.yaml:", 1)[1] for w in suite.warnings]  # in file order
    assert shown[0] == "5:3: warning: unknown key 'paralle_mode' (did you mean 'parallel'?); ignored"
    assert shown[1].startswith("8:1: warning: unknown key 'owner'; expected one of: ")
    assert shown[1].endswith("; ignored") and len(shown) == 2


def test_a_near_miss_of_a_known_key_is_an_error_in_every_mode(problems):
    """waza (Go) only warns on ``descripton``/``paralel``/``gradrs`` and drops what they set
    (a task with ``gradrs:`` then passes having checked nothing): an error here, file:line."""
    out = problems(LEGACY.replace("executor: mock", "executor: mock\n  paralel: true") + "descripton: x\n")
    assert sorted(o.split("eval.yaml:", 1)[1] for o in out) == [
        "5:3: unknown key 'paralel' (did you mean 'parallel'?); a near miss of a known key is an error in "
        "every mode (ignored, it would silently drop what it sets)",
        "8:1: unknown key 'descripton' (did you mean 'description'?); a near miss of a known key is an error in "
        "every mode (ignored, it would silently drop what it sets)",
    ]
    out = problems(SCENARIO + "descripton: x\n")
    assert out[0].split("eval.yaml:", 1)[1].startswith("8:1: unknown key 'descripton' (did you mean 'description'?)")


def test_a_misspelt_graders_key_in_a_task_is_an_error(problems):
    task = TASK + "gradrs:\n  - {type: text, name: g, config: {contains: [x]}}\n"
    out = problems(LEGACY, tasks={"tasks/t1.yaml": task})
    assert len(out) == 1
    assert "tasks/t1.yaml:4:1: unknown key 'gradrs' (did you mean 'graders'?); a near miss" in out[0]


def test_a_misspelt_grader_entry_key_is_an_error(problems):
    grader = "graders:\n  - {type: text, name: g, weigth: 2, config: {contains: [mock]}}\n"
    out = problems(LEGACY + grader)
    assert "unknown key 'weigth' (did you mean 'weight'?); a near miss" in out[0]


def test_strict_turns_warnings_into_errors(problems):
    out = problems(LEGACY + "owner: x\n", strict=True)
    assert out[0].split("eval.yaml:", 1)[1].startswith("7:1: unknown key 'owner'")
    assert out[0].endswith("(an error with --strict)")


def test_scenario_eval_refuses_unknown_keys(problems):
    out = problems(SCENARIO + "owner: x\n")
    assert out[0].split("eval.yaml:", 1)[1].startswith("8:1: unknown key 'owner'")


def test_agent_key_gets_a_hint(load, problems):
    suite = load(LEGACY + "agent: reviewer\n")
    assert "waza (Go) has no agent key: a custom agent is named with skill:" in suite.warnings[0]
    assert "no agent key" in problems(SCENARIO + "agent: reviewer\n")[0]


def test_grader_entry_keys_only_warn_even_in_a_scenario(load):
    grader = "graders:\n  - {type: text, name: g, colour: red, config: {contains: [mock]}}\n"
    suite = load(SCENARIO + grader)
    assert any("unknown key 'colour'" in w and ": warning: " in w for w in suite.warnings)


def test_grader_config_is_always_strict(problems):
    grader = "graders:\n  - {type: text, name: g, config: {contians: [mock]}}\n"
    out = problems(LEGACY + grader)
    assert "grader 'g': unknown key 'contians' (did you mean 'contains'?)" in out[0]


def test_unknown_task_keys_only_warn_in_every_kind_of_eval(load):
    """waza (Go) TestCompatibilityTaskContract: "unknown task fields warn and are ignored;
    tasks have no version negotiation" -- a top-level key, a nested one (yaml.v3 reports
    both as "field not found"), in a 1.x and in a 2.0 suite alike."""
    task = TASK.replace("  prompt: hello\n", "  prompt: hello\n  repo_id: app\n") + "tagz: true\n"
    for eval_yaml in (LEGACY, SCENARIO):
        suite = load(eval_yaml, tasks={"tasks/t1.yaml": task})
        assert [w.split("tasks/t1.yaml:", 1)[1] for w in suite.warnings] == [
            "4:3: warning: unknown key 'repo_id' (did you mean 'repos'?); ignored",
            "5:1: warning: unknown key 'tagz' (did you mean 'tags'?); ignored",
        ]
        assert suite.tasks[0].golden is False and suite.tasks[0].prompt == "hello"  # ignored, really


def test_unknown_task_keys_are_errors_with_strict(problems):
    out = problems(LEGACY, tasks={"tasks/t1.yaml": TASK + "tagz: true\n"}, strict=True)
    assert out[0].endswith("tasks/t1.yaml:4:1: unknown key 'tagz' (did you mean 'tags'?) (an error with --strict)")


def test_schema_version_in_a_task_only_warns(load):
    """Task files are unversioned; waza (Go) warns on a task-level schemaVersion."""
    suite = load(LEGACY, tasks={"tasks/t1.yaml": 'schemaVersion: "1.5"\n' + TASK})
    assert any("unknown key 'schemaVersion'" in w and ": warning: " in w for w in suite.warnings)


def test_a_task_graders_config_stays_strict(problems):
    """waza (Go) decodes a grader's config with KnownFields(true), in a task file too."""
    grader = "graders:\n  - {type: text, name: g, config: {contains_any: [a]}}\n"
    out = problems(LEGACY, tasks={"tasks/t1.yaml": TASK + grader})
    assert "grader 'g': unknown key 'contains_any' (did you mean 'contains'?)" in out[0]
    checkpoint = ("inputs:\n  prompt: hello\n  follow_up_prompts: [again]\ncheckpoints:\n  - after_turn: 1\n"
                  "    graders:\n      - {type: text, name: c, config: {contians: [a]}}\n")
    out = problems(LEGACY, tasks={"tasks/t1.yaml": "id: t1\n" + checkpoint})
    assert any("unknown key 'contians'" in line for line in out)


def test_unsupported_keys_stay_errors_in_a_legacy_eval(problems, monkeypatch):
    """A key waza (Go) has and waza for Python cannot honour yet is an error even where
    unknown keys only warn: a suite never silently loses a feature."""
    from waza_core.suite import schema

    monkeypatch.setitem(schema.UNSUPPORTED, (), {"telepathy"})
    out = problems(LEGACY + "telepathy: true\n")
    assert out[0].endswith("eval.yaml:7:1: key 'telepathy' is recognised but not supported yet by waza for Python; "
                           "remove it")


def test_type_errors_are_errors_in_a_legacy_eval(problems):
    out = problems(LEGACY.replace("executor: mock", "executor: mock\n  parallel: sometimes"))
    assert "config.parallel: expected boolean, got string" in out[0]


def test_nameless_graders_get_their_type_as_name(load):
    """waza (Go) keys both by "" and loses one result; each gets a name here, with a warning."""
    graders = "graders:\n  - {type: text, config: {contains: [a]}}\n  - {type: text, config: {contains: [b]}}\n"
    suite = load(LEGACY + graders)
    assert [g.name for g in suite.graders] == ["text", "text_2"]
    assert sum("grader without a name" in w for w in suite.warnings) == 2


def test_weight_zero_or_negative_counts_as_one(load):
    graders = "graders:\n  - {type: text, name: a, weight: 0, config: {contains: [a]}}\n" \
              "  - {type: text, name: b, weight: -2, config: {contains: [b]}}\n"
    assert [g.weight for g in load(LEGACY + graders).graders] == [1.0, 1.0]


def test_a_warning_file_is_not_cached_so_it_warns_again(load):
    first = load(LEGACY + "owner: x\n")
    again = load(LEGACY + "owner: x\n")
    assert first.warnings and again.warnings == first.warnings


def test_an_executors_own_options_are_always_strict(problems):
    """``config.cli`` is checked by the cli executor's schema, like a grader's config."""
    bad = LEGACY.replace("  executor: mock\n", "  executor: cli\n  cli: {command: [agent], comand: [x]}\n")
    out = problems(bad)
    assert "unknown key 'comand' (did you mean 'command'?)" in out[0] and ": warning: " not in out[0]
