"""Built-ins loaded when asked for: the static index of waza_core.plugin_index equals a
full scan of the built-in packages, a plugin asked for is imported and registered then,
and what a command sees (names, classes, errors, conflicts, ``waza plugins``) is the same
as when every built-in was loaded at start."""

from __future__ import annotations

import importlib
import types

import pytest

from waza_core import Grader
from waza_core.hookspecs import hookimpl
from waza_core.plugin_index import BUILTIN_PLUGINS
from waza_core.plugins import KINDS, _builtin_modules, build_plugin_manager


def _scan() -> dict[str, dict[str, tuple[str, ...]]]:
    """What each built-in module registers, by importing it and calling its hooks."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for module_name in _builtin_modules():
        module = importlib.import_module(module_name)
        regs: dict[str, tuple[str, ...]] = {}
        for kind, (hook_name, _) in KINDS.items():
            hook = getattr(module, hook_name, None)
            if callable(hook):
                names: list[str] = []
                hook(register=lambda cls, names=names: names.append(cls.name))
                regs[kind] = tuple(names)
        found[module_name] = regs
    return found


def test_the_index_equals_a_full_scan():
    scanned = _scan()
    table = "".join(f"    {m!r}: {r!r},\n" for m, r in scanned.items())
    assert list(BUILTIN_PLUGINS) == list(scanned), "update waza_core/plugin_index.py:\n" + table
    assert BUILTIN_PLUGINS == scanned, "update waza_core/plugin_index.py:\n" + table


def test_no_two_builtins_share_a_name():
    for kind in KINDS:
        names = [n for regs in BUILTIN_PLUGINS.values() for n in regs.get(kind, ())]
        assert len(names) == len(set(names)), kind


def _lazy_and_eager(modules=None, objects=None):
    lazy = build_plugin_manager(modules, extra_plugins=objects)
    eager = build_plugin_manager(modules, extra_plugins=objects)
    eager[1].load_all()
    return lazy, eager


def test_a_plugin_asked_for_is_loaded_and_no_other():
    pm, registry = build_plugin_manager([])
    assert pm.get_plugin("waza_reporters.junit") is None
    assert "junit" in registry.names("reporter")
    cls = registry.get("reporter", "junit")
    assert cls.__module__ == "waza_reporters.junit" and cls.name == "junit"
    assert pm.get_plugin("waza_reporters.junit") is not None
    assert pm.get_plugin("waza_reporters.html") is None  # not asked for
    info = next(p for p in registry.plugins if p.name == "waza_reporters.junit")
    assert info.registers == {"reporter": ["junit"]}
    assert registry.items["reporter"]["junit"].plugin == "waza_reporters.junit"
    # reading the table directly loads a pending built-in too
    assert registry.items["event_format"]["codex-json"].plugin == "waza_events.codex_json"
    with pytest.raises(KeyError):
        registry.items["reporter"]["no-such-reporter"]


def test_names_classes_and_listing_equal_a_full_load():
    (_, lazy), (_, eager) = _lazy_and_eager()
    for kind in KINDS:
        assert lazy.names(kind) == eager.names(kind)
        for name in lazy.names(kind):
            assert lazy.get(kind, name) is eager.get(kind, name)
    lazy.load_all()
    assert [p.name for p in lazy.plugins] == [p.name for p in eager.plugins]
    assert [p.registers for p in lazy.plugins] == [p.registers for p in eager.plugins]


def test_an_unknown_name_gives_the_same_error_with_the_known_names():
    (_, lazy), (_, eager) = _lazy_and_eager(["no:markdown"])
    for kind, name in (("grader", "txet"), ("reporter", "markdown"), ("executor", "nope")):
        assert lazy.get(kind, name) is None
        assert lazy.unknown(kind, name) == eager.unknown(kind, name)
    assert "did you mean 'text'" in lazy.unknown("grader", "txet")
    assert "known: action_sequence, behavior, code," in lazy.unknown("grader", "txet")
    assert "disabled by -p no:markdown" in lazy.unknown("reporter", "markdown")


class _Shouting(Grader):
    name = "shouting"
    config_schema = {"type": "object"}


class _OtherText(Grader):
    name = "text"
    config_schema = {"type": "object"}


def _plugin(*classes):
    @hookimpl
    def waza_register_graders(register):
        for cls in classes:
            register(cls)

    return types.SimpleNamespace(waza_register_graders=waza_register_graders)


def test_a_third_party_plugin_extends_the_builtins():
    (_, lazy), _ = _lazy_and_eager(objects={"shouting-plugin": _plugin(_Shouting)})
    assert lazy.get("grader", "shouting") is _Shouting
    assert "shouting" in lazy.names("grader") and "text" in lazy.names("grader")
    assert lazy.get("grader", "text").__module__ == "waza_graders.text"


def test_a_third_party_taking_a_builtin_name_conflicts_as_before():
    (_, lazy), (_, eager) = _lazy_and_eager(objects={"other-text": _plugin(_OtherText)})
    assert lazy.conflicts == eager.conflicts == [
        "grader 'text' is registered by two plugins: 'waza_graders.text' and 'other-text'; "
        "uninstall or disable one of them"]
    assert lazy.items["grader"]["text"].plugin == "waza_graders.text"
    lazy.load_all()
    assert [p.registers for p in lazy.plugins] == [p.registers for p in eager.plugins]


def _modules_with_hooks() -> list[types.ModuleType]:
    import sys

    from tests.conftest import REPO

    for folder in ("waza-shout", "waza-wordcount"):
        path = str(REPO / "examples" / "plugins" / folder)
        if path not in sys.path:
            sys.path.append(path)
    names = [*BUILTIN_PLUGINS, "waza_shout", "waza_wordcount", "tests.fixture_plugins.dup_text",
             "tests.fixture_plugins.test_graders"]
    made = types.ModuleType("made_in_test")

    @hookimpl
    def waza_register_graders(register):
        register(_Shouting)

    @hookimpl(specname="waza_register_reporters")
    def any_name(register):
        pass

    class Holder:
        @staticmethod
        @hookimpl
        def waza_register_executors(register):
            pass

    made.waza_register_graders = waza_register_graders
    made.any_name = any_name
    made.static_hook = staticmethod(any_name)
    made.bound = types.MethodType(any_name, object())
    made.holder = Holder
    made.__annotations__ = {}
    made.not_a_hook = lambda register: None
    made.number = 3
    return [importlib.import_module(n) for n in names] + [made]


def test_the_faster_hook_lookup_answers_as_pluggy_does():
    import pluggy

    from waza_core.plugins import _PluginManager

    ours, theirs = _PluginManager("waza"), pluggy.PluginManager("waza")
    found = 0
    for module in _modules_with_hooks():
        for name in dir(module):
            got = ours.parse_hookimpl_opts(module, name)
            assert got == theirs.parse_hookimpl_opts(module, name), (module.__name__, name)
            found += got is not None
    assert found >= len(BUILTIN_PLUGINS) + 3


def test_the_executor_config_keys_equal_the_classes():
    from waza_core.plugin_index import EXECUTOR_CONFIG_KEYS

    registry = build_plugin_manager()[1].load_all()
    builtins = [n for n in registry.names("executor") if registry.builtin_module("executor", n)]
    classes = {n: registry.get("executor", n).config_key for n in builtins}
    assert EXECUTOR_CONFIG_KEYS == classes, f"update EXECUTOR_CONFIG_KEYS in waza_core/plugin_index.py: {classes}"


def test_a_warm_load_imports_only_the_executors_its_eval_names(tmp_path):
    """The cached eval is checked again with its schema; the options schemas of executors
    whose key the eval does not use are not needed, so those executors are not imported."""
    import json
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    script = ("import json, sys\nfrom pathlib import Path\n"
              "from waza_core.plugins import build_plugin_manager\nfrom waza_core.suite.load import load_suite\n"
              "load_suite(Path(sys.argv[1]), build_plugin_manager()[1])\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith('waza_adapters.'))))\n")
    env = {**os.environ, "WAZA_CACHE_DIR": str(tmp_path), "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("WAZA_NO_CACHE", None)
    suite = str(REPO / "examples" / "quickstart" / "eval.yaml")
    runs = [subprocess.run([sys.executable, "-c", script, suite], env=env, capture_output=True, text=True,
                           timeout=60) for _ in ("cold", "warm")]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    warm = json.loads(runs[1].stdout)
    assert "waza_adapters.cli_agent" not in warm and "waza_adapters.copilot_sdk" not in warm, warm
