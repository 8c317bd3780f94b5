"""The load problems of a suite, and reading one YAML file into them.

Every file a suite names (the eval, its tasks, trigger tests) is read through
:func:`read_yaml`, and every problem becomes one ``file:line:col: message`` line of a
:class:`Problems`, raised together by the loader as one
:class:`~waza_core.errors.SuiteError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from waza_core.paths import display_path
from waza_core.suite import schema as schemas
from waza_core.suite import yamlio


class Problems:
    """Errors and warnings, each one ``file:line:col: message`` line."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.warnings: list[str] = []

    def _where(self, file: Path, text: str | None, path, key, pos) -> str:
        if pos is None and text is None and (path or key):
            try:
                text = yamlio.read_text(file)
            except (OSError, UnicodeDecodeError):
                text = None
        if pos is None and text is not None:
            pos = yamlio.locate(text, path, key)
        return display_path(file) + (f":{pos[0]}:{pos[1]}" if pos else "")

    def add(self, file: Path, message: str, text: str | None = None, path=(), key=None,
            pos: tuple[int, int] | None = None) -> None:
        self.items.append(f"{self._where(file, text, path, key, pos)}: {message}")

    def warn(self, file: Path, message: str, text: str | None = None, path=(), key=None,
             pos: tuple[int, int] | None = None) -> None:
        self.warnings.append(f"{self._where(file, text, path, key, pos)}: warning: {message}")

    def count(self) -> int:
        return len(self.items) + len(self.warnings)


def read_yaml(file: Path, problems: Problems) -> tuple[Any, str | None]:
    """``(data, text)`` of a YAML file whose top level must be a mapping; ``(None, None)``
    after adding the problem (missing, a folder, not UTF-8, not YAML, not a mapping)."""
    try:
        text = yamlio.read_text(file)
    except FileNotFoundError:
        problems.add(file, "file not found")
        return None, None
    except IsADirectoryError:
        problems.add(file, "is a folder, not a YAML file")
        return None, None
    except UnicodeDecodeError as exc:
        problems.add(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        return None, None
    except OSError as exc:
        problems.add(file, f"cannot read: {exc.strerror}")
        return None, None
    try:
        data = yamlio.parse(text)
    except yamlio.YamlProblem as exc:
        pos = (exc.line, exc.col) if exc.line else None
        problems.add(file, exc.message, pos=pos)
        return None, None
    if not isinstance(data, dict):
        problems.add(file, f"expected a mapping at the top level, got {schemas._kind_of(data)}", pos=(1, 1))
        return None, None
    return data, text
