"""A skill counts however the agent read its SKILL.md, in every format, with each agent's own tools.

Each agent reads files through its own tools: Claude ``Read``/``Bash``, Gemini ``read_file``/
``read_many_files``/``run_shell_command``, Codex ``command_execution`` items, OpenCode
``read``/``bash``, Cursor ``readToolCall``/``shellToolCall``, Copilot ``view``/``bash``/
``powershell``. The paths are the ones agents really use: ``~``, quotes, ``./``, Windows
backslashes, ``skills/<name>/SKILL.md`` under ``.claude/``, ``.github/``, ``.agents/``. A
listing, a search, a write or a failed read loads nothing. The last test runs one stream per
format through the ``cli`` executor.
"""

from __future__ import annotations

import json
import sys

import pytest

from .test_event_formats import read

#: how each agent calls its tools, in the shape of its stream: (tool, args) -> the call's lines


def claude(call_id, tool, args, ok=True):
    return [json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": call_id, "name": tool, "input": args}]}}),
        json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": "---\nname: x", "is_error": not ok}]}})]


def gemini(call_id, tool, args, ok=True):
    return [json.dumps({"type": "tool_use", "tool_name": tool, "tool_id": call_id, "parameters": args}),
            json.dumps({"type": "tool_result", "tool_id": call_id, "status": "success" if ok else "error",
                        "output": "---", **({} if ok else {"error": {"type": "x", "message": "no such file"}})})]


def codex(call_id, tool, args, ok=True):
    item = {"id": call_id, "type": "command_execution", "command": args["command"], "status": "in_progress"}
    done = dict(item, aggregated_output="---\nname: x", exit_code=0 if ok else 1,
                status="completed" if ok else "failed")
    return [json.dumps({"type": "item.started", "item": item}), json.dumps({"type": "item.completed", "item": done})]


def opencode(call_id, tool, args, ok=True):
    state = {"status": "completed" if ok else "error", "input": args, "output": "---"}
    return [json.dumps({"type": "tool_use", "sessionID": "ses_1", "part": {"callID": call_id, "tool": tool,
                                                                           "state": state}})]


def cursor(call_id, tool, args, ok=True):
    result = ({"success": {"content": "---", "exitCode": 0}} if ok else {"error": {"message": "no such file"}})
    return [json.dumps({"type": "tool_call", "subtype": "started", "call_id": call_id,
                        "tool_call": {tool: {"args": args}}}),
            json.dumps({"type": "tool_call", "subtype": "completed", "call_id": call_id,
                        "tool_call": {tool: {"args": args, "result": result}}})]


def copilot(call_id, tool, args, ok=True):
    return [json.dumps({"type": "tool.execution_start", "data": {"toolCallId": call_id, "toolName": tool,
                                                                 "arguments": args}}),
            json.dumps({"type": "tool.execution_complete", "data": {"toolCallId": call_id, "success": ok,
                                                                    "result": {"content": "1. ---"}}})]


#: format -> (call builder, its read tool and path argument, its shell tool or None)
AGENTS = {
    "claude-stream-json": (claude, ("Read", "file_path"), "Bash"),
    "gemini-stream-json": (gemini, ("read_file", "absolute_path"), "run_shell_command"),
    "codex-json": (codex, None, "command_execution"),
    "opencode-json": (opencode, ("read", "filePath"), "bash"),
    "cursor-stream-json": (cursor, ("readToolCall", "path"), "shellToolCall"),
    "copilot-cli-json": (copilot, ("view", "path"), "bash"),
}

#: paths an agent passes to its read tool -> the skill
PATHS = {
    "~/.claude/skills/pdf/SKILL.md": "pdf",
    "/home/dev/My Project/.github/skills/docx/SKILL.md": "docx",
    "./skills/xlsx/SKILL.md": "xlsx",
    "C:\\Users\\me\\.agents\\skills\\pptx\\SKILL.md": "pptx",
    ".claude/skills/frontend-design/SKILL.md": "frontend-design",
    "/repo/.agents/skills/code-review/SKILL.md": "code-review",
    "skills/web-artifacts-builder/skill.md": "web-artifacts-builder",
}

#: shell commands that read a SKILL.md -> the skills, in order
COMMANDS = {
    "cat ~/.claude/skills/pdf/SKILL.md": ["pdf"],
    "sed -n '1,120p' \".github/skills/docx/SKILL.md\"": ["docx"],
    "head -n 40 ./skills/xlsx/SKILL.md": ["xlsx"],
    "Get-Content C:\\Users\\me\\.agents\\skills\\pptx\\SKILL.md": ["pptx"],
    "type C:\\\\Users\\\\me\\\\skills\\\\canvas\\\\SKILL.md": ["canvas"],
    "/bin/zsh -lc \"sed -n '1,200p' .agents/skills/mcp-builder/SKILL.md\"": ["mcp-builder"],
    "bash -lc 'cat .claude/skills/a-one/SKILL.md && cat .claude/skills/b-two/SKILL.md'": ["a-one", "b-two"],
    "cd /repo && cat skills/rm-helper/SKILL.md | head -50": ["rm-helper"],
}

#: calls that name a SKILL.md without reading it, or write it
NOT_READS = [
    "ls skills/pdf/SKILL.md",
    "find . -name SKILL.md -path '*/skills/*'",
    "grep -l 'name:' skills/*/SKILL.md",
    "echo '---' > skills/pdf/SKILL.md",
    "test -f .claude/skills/pdf/SKILL.md && echo yes",
    "sed -i 's/a/b/' skills/pdf/SKILL.md",
    "cat $SKILL_DIR/SKILL.md",
    "cp skills/pdf/SKILL.md /tmp/x.md",
]

CASES = []
for fmt, (_build, reader_tool, _shell) in AGENTS.items():
    if reader_tool:
        CASES += [(fmt, "read", path, [skill]) for path, skill in PATHS.items()]
    CASES += [(fmt, "shell", command, skills) for command, skills in COMMANDS.items()]
    CASES += [(fmt, "shell", command, []) for command in NOT_READS]


def stream(fmt, kind, text, ok=True, call_id="c1"):
    build, reader_tool, shell = AGENTS[fmt]
    if kind == "read":
        tool, key = reader_tool
        return build(call_id, tool, {key: text}, ok)
    return build(call_id, shell, {"command": text}, ok)


@pytest.mark.parametrize("fmt,kind,text,skills", CASES,
                         ids=[f"{f}-{k}-{i}" for i, (f, k, _, _) in enumerate(CASES)])
def test_a_skill_read_through_the_agents_own_tools_counts(fmt, kind, text, skills):
    _, ev = read(fmt, stream(fmt, kind, text))
    assert [(s["name"], s["detected_by"]) for s in ev.skill_invocations] == [(s, "skill_file_read") for s in skills]
    assert all(s["tool"] == AGENTS[fmt][1][0] if kind == "read" else AGENTS[fmt][2]
               for s in ev.skill_invocations)


@pytest.mark.parametrize("fmt", sorted(AGENTS))
def test_a_failed_read_or_a_search_tool_loads_nothing(fmt):
    kind = "read" if AGENTS[fmt][1] else "shell"
    text = "skills/pdf/SKILL.md" if kind == "read" else "cat skills/pdf/SKILL.md"
    _, ev = read(fmt, stream(fmt, kind, text, ok=False))
    assert ev.skill_invocations == []
    build = AGENTS[fmt][0]
    if fmt == "codex-json":
        return  # Codex has no search tools: it searches through command_execution (`ls`, `find` above)
    for tool in ("Glob", "glob", "grep", "search_file_content", "globToolCall", "grepToolCall", "list_directory"):
        _, ev = read(fmt, build("g1", tool, {"pattern": "**/skills/pdf/SKILL.md", "path": "skills/pdf/SKILL.md"}))
        assert ev.skill_invocations == [], tool


#: the skill tool of the agents that have one, with a real argument shape
SKILL_TOOLS = {
    "claude-stream-json": ("Skill", {"skill": "pdf"}),
    "gemini-stream-json": ("activate_skill", {"name": "pdf"}),
    "opencode-json": ("skill", {"name": "pdf"}),
    "copilot-cli-json": ("skill", {"skill": "pdf"}),
}


@pytest.mark.parametrize("fmt", sorted(SKILL_TOOLS))
def test_the_agents_skill_tool_counts_before_any_read(fmt):
    tool, args = SKILL_TOOLS[fmt]
    lines = AGENTS[fmt][0]("s1", tool, args) + stream(fmt, "read", "skills/pdf/SKILL.md", call_id="r1")
    _, ev = read(fmt, lines)
    assert ev.skill_invocations == [{"name": "pdf", "detected_by": "skill_tool", "tool": tool}]


@pytest.mark.parametrize("fmt", sorted(AGENTS))
def test_skills_read_in_one_run_reach_the_results_through_the_cli_executor(exec_suite, exec_registry, tmp_path,
                                                                           fmt):
    from .test_cli_events import one_run

    lines, expect = [], []
    kind = "read" if AGENTS[fmt][1] else "shell"
    for i, (path, skill) in enumerate(PATHS.items()):
        text = path if kind == "read" else f"cat '{path}'"
        lines += ["[debug] tool call follows"] + stream(fmt, kind, text, call_id=f"call/{i}/é")
        expect.append(skill)
    lines += stream(fmt, "shell", "ls skills/ignored/SKILL.md", call_id="ls")
    path = tmp_path / "skills.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    replay = tmp_path / "replay.py"
    replay.write_text("import sys\nsys.stdout.write(open(sys.argv[1], encoding='utf-8').read())\n")
    run = one_run(exec_suite, exec_registry, {"command": [sys.executable, str(replay), str(path)],
                                              "output": "jsonl", "events": fmt})
    assert [s["name"] for s in run["skill_invocations"]] == expect


@pytest.mark.parametrize("fmt", sorted(SKILL_TOOLS))
def test_a_skill_tool_call_that_failed_loads_nothing(fmt):
    """Claude Code answers a skill it does not have with ``<tool_use_error>Unknown skill: ...``."""
    tool, args = SKILL_TOOLS[fmt]
    _, ev = read(fmt, AGENTS[fmt][0]("s1", tool, args, ok=False))
    assert ev.skill_invocations == []
    _, ev = read(fmt, AGENTS[fmt][0]("s1", tool, args)[:1])  # cut before its result: it was asked for
    assert [s["name"] for s in ev.skill_invocations] == ["pdf"]  # (OpenCode's one line is the whole call)


@pytest.mark.parametrize("fmt", ["copilot-cli-json", "claude-stream-json"])
def test_an_editor_tools_view_command_reads_and_its_other_commands_do_not(fmt):
    """Copilot CLI's older ``str_replace_editor`` and Anthropic's text editor tool read with
    ``command: view`` and write with ``create``/``str_replace``."""
    build = AGENTS[fmt][0]
    for tool in ("str_replace_editor", "str_replace_based_edit_tool"):
        lines = build("v1", tool, {"command": "view", "path": "/repo/.github/skills/pdf/SKILL.md"}) + build(
            "c1", tool, {"command": "create", "path": "skills/new/SKILL.md", "file_text": "---"})
        _, ev = read(fmt, lines)
        assert [(s["name"], s["tool"]) for s in ev.skill_invocations] == [("pdf", tool)]
