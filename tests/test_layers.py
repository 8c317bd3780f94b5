"""The modules of waza_core import each other in one direction: no import loop.

Every import counts, also one inside a function or under ``TYPE_CHECKING`` (a loop
hidden that way still ties the modules together). Imports of ``waza_core`` itself (the
public face, which plugins.py checks registrations against) are left out: they are
the deliberate upward ones (docs/architecture.md, "The layers").
"""

from __future__ import annotations

import ast
from pathlib import Path

import waza_core

ROOT = Path(waza_core.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The modules of waza_core that ``path`` imports (a ``from pkg import name`` of a
    submodule names that submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in modules else node.module)
    return {m for m in found if m in modules and m != "waza_core"}


def test_no_import_loop_between_the_modules_of_waza_core():
    files = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {m: imports_of(p, set(files)) for m, p in files.items()}
    state: dict[str, int] = {}
    loops: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                loops.append([*stack[stack.index(n):], n])
            elif n not in state:
                visit(n, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    assert not loops, "import loops: " + "; ".join(" -> ".join(loop) for loop in loops[:5])
