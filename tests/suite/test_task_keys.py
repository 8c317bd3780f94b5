"""Task keys of today's waza: golden, requirements, checkpoints, responder, expected.*."""

from __future__ import annotations

from tests.suite.conftest import LEGACY, TASK

MULTI_TURN = """\
id: t1
inputs:
  prompt: first
  follow_up_prompts: [second, third]
"""


def test_golden(load):
    suite = load(LEGACY, tasks={"tasks/t1.yaml": TASK + "golden: true\n"})
    assert suite.tasks[0].golden is True


def test_requirements_are_kept_as_written_and_never_checked(load):
    """waza (Go) requirement_test: duplicate ids, an unknown category, a check naming a
    grader that does not exist all load; the entries round-trip unchanged."""
    reqs = ("requirements:\n"
            "  - {id: duplicate, category: made-up, description: one}\n"
            "  - id: duplicate\n"
            "    checks: [{scope: checkpoint, grader: nowhere, after_turn: 2}]\n")
    suite = load(LEGACY, tasks={"tasks/t1.yaml": TASK + reqs})
    assert suite.tasks[0].requirements == (
        {"id": "duplicate", "category": "made-up", "description": "one"},
        {"id": "duplicate", "checks": [{"scope": "checkpoint", "grader": "nowhere", "after_turn": 2}]},
    )
    assert not suite.warnings


def test_unknown_keys_of_requirement_entries_only_warn(load):
    """A plain struct in waza (Go) (models.Requirement): yaml.v3 reports the unknown key
    as "field not found", which a task file only warns about."""
    suite = load(LEGACY, tasks={"tasks/t1.yaml": TASK + "requirements:\n  - {id: r, severity: high}\n"})
    assert any("unknown key 'severity'" in w and ": warning: " in w for w in suite.warnings)
    assert suite.tasks[0].requirements[0]["id"] == "r"


def test_checkpoints_parse(load):
    cps = ("checkpoints:\n"
           "  - after_turn: 1\n"
           "    graders: [{type: text, name: early, config: {contains: [first]}}]\n"
           "  - after_turn: 2\n"
           "    on_failure: stop\n"
           "    graders: [{type: text, name: mid, weight: 3, config: {contains: [second]}}]\n")
    (task,) = load(LEGACY, tasks={"tasks/t1.yaml": MULTI_TURN + cps}).tasks
    assert [(c.after_turn, c.on_failure, [g.name for g in c.graders]) for c in task.checkpoints] == [
        (1, "continue", ["early"]), (2, "stop", ["mid"])]
    assert task.checkpoints[1].graders[0].weight == 3.0


def test_checkpoint_problems(problems):
    cps = ("checkpoints:\n"
           "  - {after_turn: 1, graders: [{type: text, name: a, config: {contians: [x]}}]}\n"
           "  - {after_turn: 1, graders: [{type: text, name: b, config: {contains: [x]}}]}\n"
           "  - {after_turn: 0, graders: [{type: text, name: c, config: {contains: [x]}}]}\n"
           "  - {after_turn: 2, on_failure: abort, graders: [{type: text, name: d, config: {contains: [x]}}]}\n"
           "  - {after_turn: 3, graders: []}\n")
    out = problems(LEGACY, tasks={"tasks/t1.yaml": MULTI_TURN + cps})
    joined = "\n".join(out)
    assert "tasks/t1.yaml:6:62: grader 'a': unknown key 'contians'" in joined
    assert "checkpoints[1]: after_turn 1 is also used by checkpoints[0]" in joined
    assert "checkpoints[2].after_turn: 0 is less than the minimum of 1" in joined
    assert "checkpoints[3].on_failure: 'abort' is not one of ['continue', 'stop']" in joined
    assert "checkpoints[4].graders: [] should be non-empty" in joined


def test_checkpoint_after_the_last_turn_warns(load):
    cps = "checkpoints:\n  - {after_turn: 4, graders: [{type: text, name: late, config: {contains: [x]}}]}\n"
    suite = load(LEGACY, tasks={"tasks/t1.yaml": MULTI_TURN + cps})
    assert any("after_turn 4 is never reached (the task has 3 turn(s)" in w for w in suite.warnings)


def test_responder(load, problems):
    responder = "  responder: {instructions: 'Answer as a cautious admin.', max_followups: 2}\n"
    suite = load(LEGACY, tasks={"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hi\n" + responder})
    assert suite.tasks[0].responder == {"instructions": "Answer as a cautious admin.", "max_followups": 2}
    out = problems(LEGACY, tasks={"tasks/t1.yaml": MULTI_TURN + responder})
    assert "set either inputs.responder or inputs.follow_up_prompts, not both" in out[0]
    out = problems(LEGACY, tasks={"tasks/t1.yaml": "id: t1\ninputs:\n  prompt: hi\n  responder: {max_followups: 0}\n"})
    assert any("missing required key 'instructions'" in p for p in out)
    assert any("max_followups: 0 is less than the minimum of 1" in p for p in out)


def test_parsed_only_expected_keys_load_and_make_no_grader(load):
    expected = ("expected:\n"
                "  outcomes: [{type: file, value: report.md, condition: exists}]\n"
                "  behavior: {max_tool_calls: 5, required_tools: [bash], max_response_time_ms: 1000}\n"
                "  tool_calls: {bash: {min: 1}}\n"
                "  should_trigger: false\n"
                "  output_contains: [hello]\n")
    (task,) = load(LEGACY, tasks={"tasks/t1.yaml": TASK + expected}).tasks
    assert [g.name for g in task.graders] == ["_output_contains"]
    assert task.raw["expected"]["behavior"]["max_tool_calls"] == 5


def test_instruction_files_and_skill_directories(load):
    extra = "instruction_files: [AGENTS.md]\nskill_directories: [../skills]\n"
    (task,) = load(LEGACY, tasks={"tasks/t1.yaml": TASK + extra}).tasks
    assert task.instruction_files == ("AGENTS.md",)
    assert task.skill_directories[0].endswith("/suite/skills")
