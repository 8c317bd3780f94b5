"""The plugin manager: built-ins first, then ``waza`` entry points, then ``-p`` modules.

Each built-in is its own plugin module, listed in the ``PLUGINS`` tuple of
``waza_graders``, ``waza_adapters`` and ``waza_interop``. Third parties arrive
through the ``waza`` entry-point group. A module that fails to import is recorded as
broken (and shown by ``waza plugins``) instead of breaking every command.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import attrs
import pluggy

import waza_core
from waza_core import hookspecs
from waza_core.errors import PluginError

BUILTIN_PACKAGES = ("waza_graders", "waza_adapters", "waza_interop", "waza_reporters")
ENTRY_POINT_GROUP = "waza"

#: plugin kind -> (hook name, human name)
KINDS = {
    "grader": ("waza_register_graders", "grader"),
    "executor": ("waza_register_executors", "executor"),
    "optimizer_adapter": ("waza_register_optimizer_adapters", "optimizer adapter"),
    "interop_dialect": ("waza_register_interop_dialects", "interop dialect"),
    "reporter": ("waza_register_reporters", "reporter"),
}

#: plugin kind -> the public base class every registered class must derive from
BASES = {
    "grader": "Grader",
    "executor": "Executor",
    "optimizer_adapter": "OptimizerAdapter",
    "interop_dialect": "Dialect",
    "reporter": "Reporter",
}


@attrs.define
class PluginInfo:
    name: str
    module: str
    source: str  # "builtin" | "entry-point" | "option"
    distribution: str | None = None
    version: str | None = None
    error: str | None = None
    registers: dict[str, list[str]] = attrs.field(factory=dict)


@attrs.define
class Registration:
    cls: Any
    plugin: str


class Registry:
    """What the loaded plugins registered, by kind and name."""

    def __init__(self) -> None:
        self.plugins: list[PluginInfo] = []
        self.items: dict[str, dict[str, Registration]] = {kind: {} for kind in KINDS}
        self.conflicts: list[str] = []

    def get(self, kind: str, name: str) -> Any | None:
        self.check_conflicts()
        reg = self.items[kind].get(name)
        return reg.cls if reg else None

    def names(self, kind: str) -> list[str]:
        return sorted(self.items[kind])

    def broken(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.error]

    def check_conflicts(self) -> None:
        if self.conflicts:
            raise PluginError("; ".join(self.conflicts))

    def unknown(self, kind: str, name: str) -> str:
        """A message for an unknown name, with the nearest known one and broken plugins."""
        import difflib

        human = KINDS[kind][1]
        known = self.names(kind)
        msg = f"unknown {human} {name!r}"
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            msg += f" (did you mean {close[0]!r}?)"
        msg += f"; known: {', '.join(known) or 'none'}"
        broken = self.broken()
        if broken:
            msg += "; plugins that failed to load: " + ", ".join(f"{p.name} ({p.error})" for p in broken)
        return msg


def _builtin_modules() -> list[str]:
    modules: list[str] = []
    for pkg in BUILTIN_PACKAGES:
        modules.extend(importlib.import_module(pkg).PLUGINS)
    return modules


def _requested_modules(extra: list[str] | None) -> list[str]:
    names = list(extra or [])
    env = os.environ.get("WAZA_PLUGINS", "")
    names.extend(n.strip() for n in env.split(",") if n.strip())
    return names


def build_plugin_manager(extra_modules: list[str] | None = None) -> tuple[pluggy.PluginManager, Registry]:
    """Load every plugin and collect what each one registers."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = Registry()

    def add(name: str, module_name: str, source: str, loader, dist=None, version=None) -> None:
        if any(p.name == name or p.module == module_name for p in registry.plugins):
            return  # already loaded (e.g. an installed plugin also named with -p)
        info = PluginInfo(name=name, module=module_name, source=source, distribution=dist, version=version)
        registry.plugins.append(info)
        try:
            plugin = loader()
            if pm.is_registered(plugin) or pm.get_plugin(name) is not None:
                return
            pm.register(plugin, name=name)
        except Exception as exc:  # a broken plugin must not break unrelated commands
            info.error = f"{type(exc).__name__}: {exc}"

    from waza_core._version import __version__

    for mod in _builtin_modules():
        add(mod, mod, "builtin", lambda m=mod: importlib.import_module(m), "waza", __version__)

    if os.environ.get("WAZA_DISABLE_PLUGIN_AUTOLOAD", "") in ("", "0"):
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            add(ep.name, ep.value, "entry-point", ep.load,
                dist.metadata["Name"] if dist else None, dist.version if dist else None)

    for mod in _requested_modules(extra_modules):
        add(mod, mod, "option", lambda m=mod: importlib.import_module(m))

    _collect(pm, registry)
    return pm, registry


def _collect(pm: pluggy.PluginManager, registry: Registry) -> None:
    """Call each hook implementation on its own, so a registration is attributed to its
    plugin and one plugin raising does not hide the others."""
    infos = {p.name: p for p in registry.plugins}
    for kind, (hook_name, human) in KINDS.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():  # registration order: built-ins first
            plugin_name = impl.plugin_name
            info = infos.get(plugin_name)

            def register(cls, _plugin=plugin_name, _kind=kind, _human=human, _info=info):
                base = getattr(waza_core, BASES[_kind])
                if not (isinstance(cls, type) and issubclass(cls, base)):
                    raise PluginError(f"plugin {_plugin!r} registered {cls!r} as a {_human}, but it does not "
                                      f"derive from waza_core.{BASES[_kind]}")
                name = cls.name
                if not isinstance(name, str) or not name:
                    raise PluginError(f"plugin {_plugin!r} registered an unnamed {_human}")
                table = registry.items[_kind]
                if name in table and table[name].cls is not cls:
                    registry.conflicts.append(
                        f"{_human} {name!r} is registered by two plugins: "
                        f"{table[name].plugin!r} and {_plugin!r}; uninstall or disable one of them"
                    )
                    return
                table[name] = Registration(cls, _plugin)
                if _info is not None:
                    _info.registers.setdefault(_kind, []).append(name)

            try:
                impl.function(register=register)
            except Exception as exc:
                if info is not None and not info.error:
                    info.error = f"{type(exc).__name__}: {exc}"


_CACHE: dict[tuple[str, ...], Registry] = {}


def get_registry(extra_modules: list[str] | None = None) -> Registry:
    """The registry for this process, built once per set of ``-p`` modules."""
    key = tuple(_requested_modules(extra_modules)) + (os.environ.get("WAZA_DISABLE_PLUGIN_AUTOLOAD", ""),)
    if key not in _CACHE:
        _CACHE[key] = build_plugin_manager(extra_modules)[1]
    return _CACHE[key]
