"""Built-in executors and optimizer adapters, one plugin module each."""

PLUGINS = (
    "waza_adapters.mock",
    "waza_adapters.echo",
    "waza_adapters.null",
    "waza_adapters.fake",
    "waza_adapters.command",
    "waza_adapters.copilot_reflect",
    "waza_adapters.cli_agent",
    "waza_adapters.copilot_sdk",
)
