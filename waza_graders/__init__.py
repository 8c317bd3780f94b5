"""Built-in graders. Each module is its own plugin, registered by the core in this order."""

PLUGINS = (
    "waza_graders.text",
    "waza_graders.program",
    "waza_graders.code",
    "waza_graders.file",
    "waza_graders.diff",
    "waza_graders.json_schema",
    "waza_graders.trigger",
    "waza_graders.prompt",
    "waza_graders.behavior",
    "waza_graders.action_sequence",
    "waza_graders.skill_invocation",
    "waza_graders.tool_constraint",
    "waza_graders.tool_calls",
)
