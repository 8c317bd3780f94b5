"""Imports sit at the top of modules; an import inside a function says why it is deferred.

A deferred import keeps a module light: a command, or a plugin loaded on its own, does not pay
for what only one path needs. Each one carries a comment on its line or the line above (one
comment may cover a block of consecutive imports), e.g. ``# deferred: scipy.stats adds ~900 ms
to importing this module``; the figures came from ``python -X importtime`` (the cost of the
import after the module itself was imported). An import without a reason belongs at the top.
"""

from __future__ import annotations

import ast

from tests.conftest import REPO

PACKAGES = ("waza_core", "waza_graders", "waza_adapters", "waza_interop", "waza_reporters", "waza_events")


def _function_local_imports(tree: ast.Module):
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    yield node


def _unexplained(path, root=REPO) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    imports = sorted({n.lineno: n for n in _function_local_imports(ast.parse("\n".join(lines)))}.values(),
                     key=lambda n: n.lineno)
    explained: set[int] = set()
    bad = []
    for node in imports:
        line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        if "#" in line or above.startswith("#") or node.lineno - 1 in explained:
            explained.update(range(node.lineno, node.end_lineno + 1))
            continue
        bad.append(f"{path.relative_to(root)}:{node.lineno}: {line.strip()}")
    return bad


def test_every_function_local_import_says_why_it_is_deferred():
    bad = [b for pkg in PACKAGES for path in sorted((REPO / pkg).rglob("*.py")) for b in _unexplained(path)]
    assert not bad, "move these imports to the top of the module, or say why they wait:\n" + "\n".join(bad)


def test_the_check_sees_a_bare_deferred_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\n\ndef f():\n    import json\n    return json\n\n\ndef g():\n"
                      "    # deferred: fractions is only needed here\n    import fractions\n    import decimal\n"
                      "    return fractions, decimal\n", encoding="utf-8")
    lines = module.read_text().splitlines()
    found = [n.lineno for n in _function_local_imports(ast.parse("\n".join(lines)))]
    assert found == [5, 11, 12]
    assert _unexplained(module, root=tmp_path) == ["m.py:5: import json"]
