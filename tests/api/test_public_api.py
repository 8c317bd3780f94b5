"""The public plugin surface: ``waza_core`` itself, and nothing deeper.

The built-in plugin packages are held to the rule third-party plugins follow, so a
refactor inside the core can never break a plugin that only uses ``waza_core``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import waza_core

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = ("waza_graders", "waza_adapters", "waza_interop")
PLUGIN_KIND_TYPES = ("Grader", "GradingContext", "GraderResult", "Executor", "ExecutionRequest", "RunEvidence",
                     "OptimizerAdapter", "AdapterReply", "AdapterFailure", "Dialect", "Conversion", "Reporter",
                     "WazaError", "SuiteError", "PluginError", "GraderError", "ExecutorError", "ExitCode",
                     "hookimpl", "__version__")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _plugin_sources() -> list[Path]:
    files = [p for pkg in PLUGIN_PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    files += sorted((ROOT / "examples" / "plugins").rglob("*.py"))
    return files


#: the one known exception: exporting a whole suite (waza interop export-suite) needs the core's
#: suite loader and plugin registry, which are not part of the plugin surface yet
KNOWN_DEEP_IMPORTS = {("waza_interop/_pfexport.py", "waza_core.plugins"),
                      ("waza_interop/_pfexport.py", "waza_core.suite.load")}


def test_builtin_plugins_import_only_the_top_level_package():
    offenders = [f"{p.relative_to(ROOT)}:{line}: imports {mod}"
                 for p in _plugin_sources() for line, mod in _imports(p)
                 if mod.startswith("waza_core.") and (str(p.relative_to(ROOT)), mod) not in KNOWN_DEEP_IMPORTS]
    assert offenders == []


def test_the_rule_catches_a_submodule_import(tmp_path):
    sample = tmp_path / "plugin.py"
    sample.write_text("def f():\n    from waza_core.run.engine import Engine\n    import waza_core.procs\n")
    assert [m for _, m in _imports(sample)] == ["waza_core.run.engine", "waza_core.procs"]


def test_all_resolves_and_holds_every_plugin_type():
    for name in waza_core.__all__:
        assert getattr(waza_core, name) is not None, name
    assert set(PLUGIN_KIND_TYPES) <= set(waza_core.__all__)
    assert waza_core.__all__ == ["__version__", *waza_core._EXPORTS], \
        "add the name to __all__ too (a literal list, for type checkers)"
    assert issubclass(waza_core.GraderError, Exception)
    assert waza_core.ExitCode.USAGE == 2
    with pytest.raises(AttributeError):
        waza_core.no_such_name  # noqa: B018


def test_py_typed_ships_with_the_package():
    assert (ROOT / "waza_core" / "py.typed").is_file()


def test_importing_the_surface_stays_light():
    code = ("import sys, waza_core; print(sorted(m for m in ('pluggy', 'attrs', 'jsonschema', 'ruamel.yaml', "
            "'typer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_reporter_hook_exists():
    from waza_core import hookspecs

    assert callable(hookspecs.waza_register_reporters)


def test_a_class_not_derived_from_the_base_is_refused(tmp_path, monkeypatch):
    (tmp_path / "not_a_grader_plugin.py").write_text(
        "from waza_core import hookimpl\n"
        "class Loose:\n    name = 'loose'\n"
        "@hookimpl\ndef waza_register_graders(register):\n    register(Loose)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from waza_core.plugins import build_plugin_manager

    _, registry = build_plugin_manager(["not_a_grader_plugin"])
    broken = {p.name: p.error for p in registry.broken()}
    assert "does not derive from waza_core.Grader" in broken["not_a_grader_plugin"]
    assert registry.get("grader", "loose") is None
