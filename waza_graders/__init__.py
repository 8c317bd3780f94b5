"""Built-in graders. Each module is its own plugin, registered by the core in this order."""

PLUGINS = (
    "waza_graders.text",
    "waza_graders.program",
    "waza_graders.prompt",
)
