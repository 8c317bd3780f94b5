"""Built-in interop dialects, one plugin module each."""

PLUGINS: tuple[str, ...] = (
    "waza_interop.agentv_contains",
    "waza_interop.promptfoo",
    "waza_interop.agentv",
)
