"""Built-in reporters. Each module is its own plugin, registered like a third-party one."""

PLUGINS: tuple[str, ...] = (
    "waza_reporters.json_file",
    "waza_reporters.junit",
    "waza_reporters.markdown",
    "waza_reporters.html",
)
