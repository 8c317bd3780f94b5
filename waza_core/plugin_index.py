"""What each built-in plugin module registers, by kind and name, without importing it.

Why: importing and registering all 34 built-in modules on every start was ~25 ms of a
warm ``waza validate`` (more with what they import); a command needs a few of them (the
suite's graders and executors, one reporter, one event format). :mod:`waza_core.plugins`
reads this table to know which module to import when a name is asked for; every module
is still its own pluggy plugin, imported and registered then.

The table must equal what a full scan finds (import each module named in the ``PLUGINS``
tuple of ``waza_graders``, ``waza_adapters``, ``waza_interop``, ``waza_reporters`` and
``waza_events``, in that order, and call its hooks): ``tests/api/test_plugin_index.py``
checks it and prints the table to paste when a built-in is added or renamed.
"""

from __future__ import annotations

#: built-in module -> {plugin kind: names it registers}, in registration order
BUILTIN_PLUGINS: dict[str, dict[str, tuple[str, ...]]] = {
    "waza_graders.text": {"grader": ("text",)},
    "waza_graders.program": {"grader": ("program",)},
    "waza_graders.code": {"grader": ("code",)},
    "waza_graders.file": {"grader": ("file",)},
    "waza_graders.diff": {"grader": ("diff",)},
    "waza_graders.json_schema": {"grader": ("json_schema",)},
    "waza_graders.trigger": {"grader": ("trigger",)},
    "waza_graders.prompt": {"grader": ("prompt",)},
    "waza_graders.behavior": {"grader": ("behavior",)},
    "waza_graders.action_sequence": {"grader": ("action_sequence",)},
    "waza_graders.skill_invocation": {"grader": ("skill_invocation",)},
    "waza_graders.tool_constraint": {"grader": ("tool_constraint",)},
    "waza_graders.tool_calls": {"grader": ("tool_calls",)},
    "waza_adapters.mock": {"executor": ("mock",)},
    "waza_adapters.echo": {"executor": ("echo",)},
    "waza_adapters.null": {"executor": ("null",)},
    "waza_adapters.fake": {"optimizer_adapter": ("fake",)},
    "waza_adapters.command": {"optimizer_adapter": ("command",)},
    "waza_adapters.copilot_reflect": {"optimizer_adapter": ("copilot-reflect",)},
    "waza_adapters.cli_agent": {"executor": ("cli",)},
    "waza_adapters.copilot_sdk": {"executor": ("copilot-sdk",)},
    "waza_interop.agentv_contains": {
        "interop_dialect": ("agentv-68df6d2206cea61f721d0445b405efcb5e94aff0-contains-v1",)},
    "waza_interop.promptfoo": {"interop_dialect": ("promptfoo",)},
    "waza_interop.agentv": {"interop_dialect": ("agentv",)},
    "waza_reporters.json_file": {"reporter": ("json",)},
    "waza_reporters.junit": {"reporter": ("junit",)},
    "waza_reporters.markdown": {"reporter": ("markdown",)},
    "waza_reporters.html": {"reporter": ("html",)},
    "waza_events.claude_stream_json": {"event_format": ("claude-stream-json",)},
    "waza_events.codex_json": {"event_format": ("codex-json",)},
    "waza_events.gemini_stream_json": {"event_format": ("gemini-stream-json",)},
    "waza_events.opencode_json": {"event_format": ("opencode-json",)},
    "waza_events.cursor_stream_json": {"event_format": ("cursor-stream-json",)},
    "waza_events.copilot_cli_json": {"event_format": ("copilot-cli-json",)},
}

#: built-in executor -> the ``config`` key of its options (empty: it takes none), so the
#: suite cache's check of a cached eval needs only the executors whose key the eval uses
#: (importing the others, ``cli`` and ``copilot-sdk`` among them, was ~11 ms of a warm
#: ``waza validate``); ``tests/api/test_plugin_index.py`` keeps it equal to the classes
EXECUTOR_CONFIG_KEYS: dict[str, str] = {
    "mock": "", "echo": "", "null": "", "cli": "cli", "copilot-sdk": "copilot",
}
