"""Built-in interop dialects, one plugin module each."""

PLUGINS: tuple[str, ...] = ()
