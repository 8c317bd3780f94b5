"""copilot-reflect without a session: the reply grammar, the merge into a complete file
set, the prompt (built from optimization feedback only) and usage accounting."""

from __future__ import annotations

import copy

import pytest

from waza_adapters.copilot_reflect import (
    DONE,
    ReplyError,
    build_prompt,
    file_block,
    merge_files,
    parse_blocks,
    spend_from,
)

from .conftest import failed_task, propose_request

# -- block parsing ---------------------------------------------------------------------------------


def test_one_block():
    assert parse_blocks("<<<WAZA-FILE path=checklist.md>>>\n# List\n- a\n<<<WAZA-END>>>\n") == [
        ("checklist.md", "# List\n- a\n")]


def test_several_blocks_nested_and_quoted_paths_and_indented_markers():
    text = ("Here are the changes.\n\n"
            "<<<WAZA-FILE path=docs/guide.md>>>\nguide\n<<<WAZA-END>>>\n"
            "Also:\n"
            '  <<<WAZA-FILE path="SKILL.md">>>\n---\nname: example\n---\n  indented stays\n  <<<WAZA-END>>>\n')
    assert parse_blocks(text) == [("docs/guide.md", "guide\n"),
                                  ("SKILL.md", "---\nname: example\n---\n  indented stays\n")]


def test_empty_file_and_blank_lines_are_kept_exactly():
    text = ("<<<WAZA-FILE path=empty.md>>>\n<<<WAZA-END>>>\n"
            "<<<WAZA-FILE path=spaced.md>>>\n\na\n\n\n<<<WAZA-END>>>")
    assert parse_blocks(text) == [("empty.md", ""), ("spaced.md", "\na\n\n\n")]


def test_text_and_fences_outside_blocks_are_ignored():
    text = ("I reflected on the failures.\n```\n<<<WAZA-FILE path=a.md>>>\nbody\n<<<WAZA-END>>>\n```\n"
            "That should fix opt-docs.")
    assert parse_blocks(text) == [("a.md", "body\n")]


def test_crlf_replies_are_normalized():
    assert parse_blocks("<<<WAZA-FILE path=a.md>>>\r\nx\r\ny\r\n<<<WAZA-END>>>\r\n") == [("a.md", "x\ny\n")]


def test_markers_inside_a_block_are_content_except_end():
    text = "<<<WAZA-FILE path=doc.md>>>\nReply <<<WAZA-DONE>>> when done.\n<<<WAZA-END>>>\n"
    assert parse_blocks(text) == [("doc.md", "Reply <<<WAZA-DONE>>> when done.\n")]


@pytest.mark.parametrize("text", [DONE, f"Nothing to change.\n{DONE}\n", f"All tasks pass: {DONE}"])
def test_done(text):
    assert parse_blocks(text) is None


@pytest.mark.parametrize("text,why", [
    ("", "neither file blocks nor"),
    ("The checklist looks fine to me.", "neither file blocks nor"),
    ("```markdown\n# Release checklist\n```", "neither file blocks nor"),
    ("<<<WAZA-FILE path=a.md>>>\nno end", "has no <<<WAZA-END>>>"),
    ("text\n<<<WAZA-END>>>\n", "without a <<<WAZA-FILE"),
    ("<<<WAZA-FILE path=a.md>>>\na\n<<<WAZA-FILE path=b.md>>>\nb\n<<<WAZA-END>>>",
     "starts before the block for 'a.md'"),
    ("<<<WAZA-FILE a.md>>>\na\n<<<WAZA-END>>>", "malformed file marker"),
    ("<<<WAZA-FILE path=>>>\na\n<<<WAZA-END>>>", "malformed file marker"),
    ("<<<WAZA-FILE path=a b.md>>>\na\n<<<WAZA-END>>>", "malformed file marker"),
    ("<<<WAZA-FILE path=a.md>>>\n1\n<<<WAZA-END>>>\n<<<WAZA-FILE path=a.md>>>\n2\n<<<WAZA-END>>>", "given twice"),
    (f"<<<WAZA-FILE path=a.md>>>\n1\n<<<WAZA-END>>>\n{DONE}", "both file blocks and"),
])
def test_malformed_replies(text, why):
    with pytest.raises(ReplyError, match=why.replace("(", r"\(").replace("*", r"\*")):
        parse_blocks(text)


def test_unsafe_paths_are_passed_through_for_the_core_to_judge():
    assert parse_blocks("<<<WAZA-FILE path=../escape.md>>>\nx\n<<<WAZA-END>>>") == [("../escape.md", "x\n")]


def test_file_block_round_trips():
    for content in ("", "a\n", "a\n\nb\n\n", "no newline"):
        parsed = parse_blocks(file_block("f.md", content))
        assert parsed == [("f.md", content if content.endswith("\n") or not content else content + "\n")]


def test_merge_keeps_unnamed_files_and_adds_new_ones():
    parent = [{"path": "a.md", "content": "A"}, {"path": "b.md", "content": "B"}]
    assert merge_files(parent, [("b.md", "B2\n"), ("c/new.md", "N\n")]) == [
        {"path": "a.md", "content": "A"}, {"path": "b.md", "content": "B2\n"}, {"path": "c/new.md", "content": "N\n"}]


# -- the prompt ------------------------------------------------------------------------------------

TASKS = [
    failed_task("opt-docs", "Missing expected substring: update the documentation"),
    failed_task("opt-version", "Missing expected substring: bump the version number" + "x" * 20, truncated=True),
    {"task_id": "opt-tests", "status": "passed", "score": 1.0, "failed_graders": []},
]


def test_prompt_shows_files_failures_scores_and_the_grammar():
    prompt = build_prompt(propose_request(TASKS))
    assert "<<<WAZA-FILE path=checklist.md>>>\n# Release checklist\n\n- Run the unit tests\n<<<WAZA-END>>>" in prompt
    assert "scored 0.50 (pass rate 0.50)" in prompt
    assert "- task opt-docs: failed, score 0.00" in prompt
    assert "check mentions_step (text) failed: Missing expected substring: update the documentation" in prompt
    assert "[message truncated]" in prompt and "- task opt-tests: passed, score 1.00" in prompt
    assert DONE in prompt and "Files you leave out stay as they are" in prompt
    assert "context files" in prompt and "frontmatter" not in prompt
    assert "You cannot run tools" in prompt


def test_prompt_for_skills_asks_to_keep_the_name():
    files = [{"path": "SKILL.md", "content": "---\nname: example\n---\nbody\n"}]
    assert "Keep the frontmatter `name` exactly as it is" in build_prompt(propose_request(TASKS, files=files,
                                                                                         target="skill-directory"))


def test_prompt_without_task_results_and_with_history():
    request = propose_request(capabilities=("propose.files",))
    request["feedback"]["history"].append({"candidate_id": "b" * 64, "parent_id": "a" * 64, "iteration": 1,
                                           "state": "evaluation_incomplete"})
    prompt = build_prompt(request)
    assert "Per-task results are not available." in prompt
    assert "- iteration 0: scored, score 0.50" in prompt and "- iteration 1: evaluation_incomplete" in prompt


def test_prompt_reads_only_target_files_and_optimization_feedback():
    """Whatever else a request carries (here: planted held-out data) never reaches the model."""
    request = propose_request(TASKS)
    before = build_prompt(request)
    planted = copy.deepcopy(request)
    planted["qualification"] = {"tasks": ["qual-secret"], "score": 0.123}
    planted["remaining"] = {"iterations": 3, "evaluations": 4, "deadline_ms": 99999}
    planted["capabilities"].append("budget.iterations")
    planted["feedback"]["evaluation"]["candidate_id"] = "c" * 64
    planted["parent"]["candidate_id"] = "d" * 64
    assert build_prompt(planted) == before
    assert "qual" not in before.lower() and "held" not in before.lower()


# -- usage -----------------------------------------------------------------------------------------

METRICS = {"modelMetrics": {"claude-haiku-4.5": {"requests": {"count": 2, "cost": 0.66},
                                                 "usage": {"inputTokens": 3000, "outputTokens": 400,
                                                           "cacheReadTokens": 100, "cacheWriteTokens": 0}}},
           "totalPremiumRequestCost": 0.66}


def test_session_totals_are_measured_spend():
    assert spend_from(METRICS, []) == {"status": "measured", "premium_requests": 0.66, "input_tokens": 3000,
                                       "output_tokens": 400, "cache_read_tokens": 100, "cache_write_tokens": 0}


def test_totals_without_the_premium_total_use_per_model_costs():
    metrics = {"modelMetrics": {"a": {"requests": {"cost": 1.0}, "usage": {"inputTokens": 1}},
                                "b": {"requests": {"cost": 0.5}, "usage": {"inputTokens": 2}}}}
    assert spend_from(metrics, []) == {"status": "measured", "premium_requests": 1.5, "input_tokens": 3}
    metrics["modelMetrics"]["b"]["requests"] = {"count": 1}  # a cost missing: not a zero
    assert spend_from(metrics, []) == {"status": "partial", "premium_requests": 1.0, "input_tokens": 3}


def test_per_call_events_are_added_when_totals_are_missing():
    events = [{"model": "m", "inputTokens": 10, "outputTokens": 5, "cost": 1.0},
              {"model": "m", "inputTokens": 20, "outputTokens": 5, "cost": 0.5}]
    assert spend_from(None, events) == {"status": "measured", "premium_requests": 1.5, "input_tokens": 30,
                                        "output_tokens": 10}


def test_partial_usage_keeps_what_was_observed():
    events = [{"model": "m", "inputTokens": 10, "cost": 1.0}, {"model": "m", "inputTokens": 20}]
    assert spend_from(None, events) == {"status": "partial", "premium_requests": 1.0, "input_tokens": 30}
    assert spend_from(None, [{"model": "m", "outputTokens": 7}]) == {"status": "partial", "output_tokens": 7}


@pytest.mark.parametrize("metrics,events", [(None, []), ({}, []), (None, [{"model": "m"}]),
                                            ({"modelMetrics": {}}, [])])
def test_no_usage_is_none_not_zero(metrics, events):
    assert spend_from(metrics, events) is None


def test_negative_or_boolean_counters_are_ignored():
    events = [{"model": "m", "inputTokens": -5, "outputTokens": True, "cost": -1}]
    assert spend_from(None, events) is None
