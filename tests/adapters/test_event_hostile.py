"""Real recorded streams made hostile the way real runs are, then read through the ``cli`` executor.

Every variant here is made from a real stream in ``event_streams/`` (sources in its README),
not written by hand: log lines before and between the events, a byte-order mark and
Windows line ends, raw U+2028/U+0085 inside JSON strings (as Node prints them), a spinner
printed without a new line before an event, ids with odd
characters (unicode, slashes, new lines, quotes, 300 characters, numbers), calls that all
start before any ends with their results in reverse order, a call whose result never comes,
an error event of the same agent in the middle, event types nobody knows yet, and a last
line cut in half. The expected values are the ones a person reads in the real stream
(``REAL`` in ``test_event_formats.py``): the same tool names in the same order, the same
failed calls, the same skills, plus what the variant changed (an unfinished call, one more
error event). Each variant is read by the format in process, and the combined variant of
every real stream runs through the real ``cli`` executor with ``output: jsonl``; one suite
runs through ``waza run`` and its results file is read back.
"""

from __future__ import annotations

import json
import sys
from itertools import cycle
from pathlib import Path

import pytest

from tests.inprocess import run_waza_in_process
from waza_core.plugins import find_registered
from waza_core.run.event_stream import StreamTurn
from waza_core.run.execution import RunEvidence

from .test_event_formats import FAIL, OK, OPEN, REAL, STREAMS, outcomes, read

#: more real streams (sources in event_streams/README.md): (format, calls, skills, session id, errors)
MORE = {
    "cursorhack-cursor_parallel_sleep.jsonl": ("cursor-stream-json", [("shellToolCall", OK)] * 2, [],
                                               "1e273e42-21dd-4b5e-9c2a-1cbbde35ae1c", 0),
    "cursorhack-cursor_direct_sleep.jsonl": ("cursor-stream-json", [("shellToolCall", OK)] * 2, [],
                                             "d43015b9-0707-43f4-b2df-0bcea7891654", 0),
    "opencodecompare-opencode_run2_1.jsonl": (
        "opencode-json", [("glob", OK)] + [("bash", OK)] * 3 + [("invalid", FAIL)] + [("bash", OK)] * 7, [],
        "ses_37ce6a5fcffef16s2B8AiTKdwn", 0),
    "opencodecompare-opencode_run2_2.jsonl": (
        "opencode-json", [("todowrite", OK), ("invalid", FAIL)] + [("bash", OK)] * 5 + [("todowrite", OK)], [],
        "ses_37cd7c3f2ffeWyajTGopNRU40G", 0),
    "agentcmd-gemini_0_11_edit_file.jsonl": (
        "gemini-stream-json", [("read_file", OK), ("replace", OK), ("read_file", OK)], [],
        "453aa339-7d2b-4709-a41a-b0b73beaff85", 0),
    "recorded-copilot_unsupported_model.jsonl": ("copilot-cli-json", [], [], "3904", 2),
    "copilotbench-copilot_1_0_63_session_lines_1_39.jsonl": (
        "copilot-cli-json", [("view", OK), ("view", OK), ("view", OPEN)], ["code-review"], None, 0),
}
ALL = {**REAL, **MORE}
WITH_CALLS = sorted(name for name, (_, calls, *_rest) in ALL.items() if calls)

#: a real stream of each agent holding its error events (the first one is put mid-stream)
ERROR_SOURCE = {
    "claude-stream-json": "takopi-claude_stream_json_session.jsonl",
    "codex-json": "switchboard-codex-errored.jsonl",
    "gemini-stream-json": "switchboard-gemini-error-invalid-model.stream.jsonl",
    "opencode-json": "takopi-opencode_run_json.jsonl",
    "cursor-stream-json": "takopi-cursor_stream_error.jsonl",
    "copilot-cli-json": "recorded-copilot_unsupported_model.jsonl",
}

#: log lines real agents print on stdout around their events
LOG_LINES = ["YOLO mode is enabled. All tool calls will be automatically approved.", "Loaded cached credentials.",
             "Reading prompt from stdin...", "[INFO] 2026-12-04T21:40:00.123Z starting session",
             "\x1b[33mwarning\x1b[0m: --output-format json is experimental", "{not json: yet", "[1, 2, 3]", "null"]
#: ids real agents use, and odder ones: unicode, slashes, a new line (Cursor), quotes, very long, numbers
ODD_IDS = ["工具/调用:1 é", "functions/bash/call_1", "call_MZSw\nfc_05e0", 'call_"q"\\x', "call_" + "x" * 300,
           7, 0, 123456789012]


def lines_of(name: str) -> list[str]:
    return (STREAMS / name).read_text(encoding="utf-8").splitlines()


def probe(fmt: str, lines: list[str]) -> list[tuple[list[int], list[int], int]]:
    """Per line: (calls it started, calls it ended, error events it gave), by reading it."""
    reader = find_registered("event_format", fmt)()
    evidence = RunEvidence(output="", transcript=[], tool_calls=[])
    state = StreamTurn(reader, 1, evidence)
    roles = []
    for line in lines:
        before = {id(c): c.success for c in state.calls}
        count, errors = len(state.calls), len(reader.errors)
        for event in reader._events_in(line):  # the reader's own line parsing
            reader.read_event(event, state)
        started = list(range(count, len(state.calls)))
        ended = [i for i, c in enumerate(state.calls) if c.success is not None and before.get(id(c)) is None]
        roles.append((started, ended, len(reader.errors) - errors))
    return roles


# -- the variants: each takes (format, lines) and gives (lines, expected changes) ------------


def with_log_lines(fmt, lines):
    logs = cycle(LOG_LINES)
    out = [next(logs), next(logs)]
    for line in lines:
        out += [line, next(logs)]
    return out[:-1], {}  # the stream still ends with its own last line


def with_bom_and_crlf(fmt, lines):
    return ["\ufeff" + lines[0]] + lines[1:], {"crlf": True}


def with_spinner_before_events(fmt, lines):
    return [("⠋ Working…\r" + line if i % 3 == 1 else line) for i, line in enumerate(lines)], {}


def with_line_separators_inside_strings(fmt, lines):
    """Node's JSON.stringify writes U+2028, U+2029 and U+0085 raw inside strings (a tool's output
    may hold them); a reader that splits at them (``str.splitlines``) cuts the event in two."""
    out = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        event["x_note"] = "one\u2028two\u2029three\x85four\x0cfive"
        out.append(json.dumps(event, ensure_ascii=False))
    return out, {}


def with_odd_ids(fmt, lines):
    _, ev = read(fmt, lines)
    ids = [e["tool_call_id"] for e in ev.tool_events]
    mapping = dict(zip(ids, cycle(ODD_IDS), strict=False))
    return [_replace_ids(line, mapping) for line in lines], {"ids": [str(mapping[i]) for i in ids]}


def _replace_ids(line: str, mapping: dict):
    def walk(value):
        if isinstance(value, str) and value in mapping:
            return mapping[value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    try:
        event = json.loads(line)
    except ValueError:
        return line
    return json.dumps(walk(event), ensure_ascii=False)


def with_parallel_calls(fmt, lines):
    """Every call starts before any ends; the results come back in reverse order."""
    roles = probe(fmt, lines)
    ends = [i for i, (started, ended, _) in enumerate(roles) if ended and not started]
    last_start = max((i for i, (started, _, _) in enumerate(roles) if started), default=-1)
    if not ends or last_start < 0:
        return None
    kept = [line for i, line in enumerate(lines) if i not in ends]
    at = kept.index(lines[last_start]) + 1
    return kept[:at] + [lines[i] for i in reversed(ends)] + kept[at:], {}


def with_a_call_never_answered(fmt, lines):
    roles = probe(fmt, lines)
    ends = [i for i, (started, ended, _) in enumerate(roles) if ended and not started]
    if not ends:
        return None  # OpenCode prints a call once, when it is over
    last = max(ends, key=lambda i: max(roles[i][1]))  # the result of the call that started last
    return [line for i, line in enumerate(lines) if i != last], {"open": roles[last][1]}


def with_an_error_event_mid_stream(fmt, lines):
    source = lines_of(ERROR_SOURCE[fmt])
    errors = [line for line, (_, _, n) in zip(source, probe(fmt, source), strict=True) if n]
    if not errors:
        return None
    first_start = next(i for i, (started, _, _) in enumerate(probe(fmt, lines)) if started)
    return lines[:first_start + 1] + errors[:1] + lines[first_start + 1:], {"errors": 1}


def with_unknown_events(fmt, lines):
    unknown = json.dumps({"type": "future.event_kind", "data": {"x": 1}, "timestamp": "2027-01-01T00:00:00Z"})
    middle = len(lines) // 2
    return [unknown] + lines[:middle] + [unknown] + lines[middle:], {"unknown": 2}


def with_the_last_line_cut(fmt, lines):
    roles = probe(fmt, lines)
    if roles[-1][0] or roles[-1][1]:
        return None  # the cut line is a call's own line: covered by the unfinished variant
    # the cut line's own error event (a final error result) is lost with it
    return lines[:-1] + [lines[-1][: len(lines[-1]) // 2]], {"cut": True, "errors": -roles[-1][2]}


VARIANTS = {f.__name__: f for f in (with_log_lines, with_bom_and_crlf, with_spinner_before_events, with_odd_ids,
                                    with_line_separators_inside_strings,
                                    with_parallel_calls, with_a_call_never_answered,
                                    with_an_error_event_mid_stream, with_unknown_events, with_the_last_line_cut)}


def everything(fmt, lines):
    """All the variants that apply, one after another, as one stream."""
    changes: dict = {}
    for name in ("with_odd_ids", "with_line_separators_inside_strings", "with_parallel_calls",
                 "with_an_error_event_mid_stream", "with_unknown_events", "with_the_last_line_cut",
                 "with_spinner_before_events", "with_log_lines", "with_bom_and_crlf"):
        made = VARIANTS[name](fmt, lines)
        if made is not None:
            lines, more = made
            changes.update({k: v + changes.get(k, 0) if k == "errors" else v for k, v in more.items()})
    return lines, changes


def expected(name: str, changes: dict):
    fmt, calls, skills, session_id, errors = ALL[name]
    calls = [(tool, OPEN if i in changes.get("open", ()) else outcome) for i, (tool, outcome) in enumerate(calls)]
    return fmt, calls, skills, session_id, errors + changes.get("errors", 0)


def text_of(lines: list[str], changes: dict) -> str:
    return ("\r\n" if changes.get("crlf") else "\n").join(lines) + ("" if changes.get("cut") else "\n")


def failed(calls) -> int:
    return sum(outcome != OK for _, outcome in calls)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", WITH_CALLS)
def test_a_hostile_variant_of_a_real_stream_reads_as_the_real_one(name, variant):
    fmt = ALL[name][0]
    made = VARIANTS[variant](fmt, lines_of(name))
    if made is None:
        pytest.skip(f"{variant} does not apply to {name}")
    lines, changes = made
    fmt, calls, skills, session_id, errors = expected(name, changes)
    reader, ev = read(fmt, text_of(lines, changes).split("\n"))
    assert outcomes(ev) == calls
    assert [s["name"] for s in ev.skill_invocations] == skills
    assert reader.session_id == session_id
    assert len(reader.errors) == errors
    if "ids" in changes:
        assert [e["tool_call_id"] for e in ev.tool_events] == changes["ids"]
    if "unknown" in changes:
        assert sum(reader.unknown.values()) >= changes["unknown"]


def test_every_format_has_streams_and_every_variant_applies_somewhere():
    assert {ALL[n][0] for n in WITH_CALLS} == {
        "claude-stream-json", "codex-json", "gemini-stream-json", "opencode-json", "cursor-stream-json",
        "copilot-cli-json"}
    for variant, make in VARIANTS.items():
        formats = {ALL[n][0] for n in WITH_CALLS if make(ALL[n][0], lines_of(n)) is not None}
        # OpenCode prints each call once, when it is over: no result to hold back or reorder
        expect_missing = {"opencode-json"} if variant in ("with_a_call_never_answered",
                                                          "with_parallel_calls") else set()
        assert formats | expect_missing == {ALL[n][0] for n in WITH_CALLS}, variant


@pytest.mark.parametrize("name", [n for n in WITH_CALLS if ALL[n][0] == "gemini-stream-json"])
def test_gemini_results_without_ids_end_the_oldest_call_without_one(name):
    """Parsers in the field meet Gemini streams whose tool events carry no ``tool_id``."""
    lines = [json.dumps({k: v for k, v in json.loads(line).items() if k != "tool_id"}) for line in lines_of(name)]
    roles = probe("gemini-stream-json", lines_of(name))
    in_order = [i for _, ended, _ in roles for i in ended] == sorted(i for _, ended, _ in roles for i in ended)
    _, ev = read("gemini-stream-json", lines)
    expect = ALL[name][1]
    if in_order:
        assert outcomes(ev) == expect
    else:  # overlapping calls answered out of order: the names and the count still hold
        assert [n for n, _ in outcomes(ev)] == [n for n, _ in expect]


def test_more_real_streams_read_as_a_person_reads_them():
    for name, (fmt, calls, skills, session_id, errors) in MORE.items():
        reader, ev = read(fmt, lines_of(name))
        assert outcomes(ev) == calls, name
        assert [s["name"] for s in ev.skill_invocations] == skills, name
        assert (reader.session_id, len(reader.errors)) == (session_id, errors), name


# -- through the cli executor and `waza run` ---------------------------------------------


REPLAY_PROMPT = """import sys
with open(sys.argv[1], "rb") as fh:
    sys.stdout.buffer.write(fh.read())
"""


@pytest.mark.parametrize("name", WITH_CALLS)
def test_the_cli_executor_reads_the_hostile_stream_as_the_real_one(exec_suite, exec_registry, tmp_path, name):
    from .test_cli_events import one_run

    lines, changes = everything(ALL[name][0], lines_of(name))
    fmt, calls, skills, session_id, errors = expected(name, changes)
    stream = tmp_path / "hostile.jsonl"
    stream.write_bytes(text_of(lines, changes).encode("utf-8"))
    agent = tmp_path / "replay.py"
    agent.write_text(REPLAY_PROMPT)
    run = one_run(exec_suite, exec_registry, {"command": [sys.executable, str(agent), str(stream)],
                                              "output": "jsonl", "events": fmt})
    events = run["tool_events"] or []
    assert [(e["tool_name"], OPEN if e.get("unfinished") else OK if e["success"] else FAIL) for e in events] == calls
    assert sum(not e["success"] for e in events) == failed(calls)
    assert [s["name"] for s in run.get("skill_invocations") or []] == skills
    assert run["session_id"] == session_id


def test_waza_run_writes_every_formats_evidence_to_the_results_file(tmp_path):
    """One suite per format, run as `waza run ... -o results.json` (in this process); the
    results file holds each format's evidence."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "replay.py").write_text(REPLAY_PROMPT)
    picks = {}
    for name in WITH_CALLS:
        picks.setdefault(ALL[name][0], name)
    for fmt, name in picks.items():
        lines, changes = everything(fmt, lines_of(name))
        (suite / f"{fmt}.jsonl").write_bytes(text_of(lines, changes).encode("utf-8"))
        sub = suite / fmt
        sub.mkdir()
        (sub / "eval.yaml").write_text(json.dumps({
            "name": f"hostile-{fmt}", "skill": "event-streams", "version": "1",
            "config": {"trials_per_task": 1, "timeout_seconds": 60, "executor": "cli", "model": "recorded",
                       "cli": {"command": [sys.executable, "{suite_dir}/../replay.py", f"{{suite_dir}}/../{fmt}.jsonl"],
                               "output": "jsonl", "events": fmt}},
            "metrics": [{"name": "m", "weight": 1, "threshold": 0.0}], "tasks": ["tasks/*.yaml"],
            "allow_ungraded": True}))  # the evidence is what is checked here, not a verdict
        (sub / "tasks").mkdir()
        (sub / "tasks" / "t.yaml").write_text(json.dumps({"id": "t", "name": "replay", "inputs": {"prompt": "go"}}))
        out = tmp_path / f"{fmt}-results.json"
        proc = run_waza_in_process("run", str(sub / "eval.yaml"), "-o", str(out))
        assert out.exists(), proc.stderr.decode(errors="replace")
        run = json.loads(out.read_text())["tasks"][0]["runs"][0]
        _, calls, skills, session_id, _ = expected(name, changes)
        events = run["tool_events"] or []
        assert [(e["tool_name"], OPEN if e.get("unfinished") else OK if e["success"] else FAIL)
                for e in events] == calls, fmt
        assert [s["name"] for s in run.get("skill_invocations") or []] == skills, fmt
        assert run["session_id"] == session_id, fmt


def test_the_hostile_example_passes_and_reads_the_skill(tmp_path):
    example = Path(__file__).parents[2] / "examples" / "agent-event-streams" / "hostile"
    out = tmp_path / "results.json"
    proc = run_waza_in_process("run", str(example / "eval.yaml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    assert [(e["tool_name"], e["success"], e.get("unfinished", False)) for e in run["tool_events"]] == [
        ("view", True, False), ("view", True, False), ("view", False, True)]
    assert run["skill_invocations"] == [{"name": "code-review", "detected_by": "skill_file_read", "tool": "view"}]
    lines, changes = everything("copilot-cli-json", lines_of("copilotbench-copilot_1_0_63_session_lines_1_39.jsonl"))
    assert (example / "stream.jsonl").read_bytes() == text_of(lines, changes).encode("utf-8")  # made as it says


def test_cursor_without_partial_output_keeps_the_message_before_its_tool_calls():
    reader, _ = read("cursor-stream-json", lines_of("cursorhack-cursor_parallel_sleep.jsonl"))
    assert reader.messages == ["I’ll run `sleep 6` and `sleep 4` in parallel using separate shell commands, wait for "
                               "both to finish, then respond with exactly `done`.", "done"]
