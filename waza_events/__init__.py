"""Built-in event formats (``config.cli.events``): one plugin module per agent's stream."""

PLUGINS = (
    "waza_events.claude_stream_json",
    "waza_events.codex_json",
    "waza_events.gemini_stream_json",
    "waza_events.opencode_json",
    "waza_events.cursor_stream_json",
    "waza_events.copilot_cli_json",
)
