"""The plugin manager: built-ins first, then ``waza`` entry points, then ``-p`` modules.

Each built-in is its own plugin module, listed in the ``PLUGINS`` tuple of
``waza_graders``, ``waza_adapters``, ``waza_interop``, ``waza_reporters`` and
``waza_events``. A built-in is imported and registered when one of its names is
first asked for (:meth:`Registry.get`), found through the static table of
:mod:`waza_core.plugin_index` (a test keeps it equal to a full scan); listing every
plugin (:meth:`Registry.load_all`, ``waza plugins``) loads them all. Third parties
arrive through the ``waza`` entry-point group and are loaded at once, as ``-p``
modules are. A module that fails to import is recorded as
broken (and shown by ``waza plugins``) instead of breaking every command.

What the user asked for on the command line is held to a stricter rule, because a
typo there would otherwise pass silently: ``-p MODULE`` naming a module that does not
exist, ``-p no:NAME`` naming no plugin, or an unreadable
``WAZA_DISABLE_PLUGIN_AUTOLOAD`` value are errors (exit 2).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import pluggy

import waza_core
from waza_core import hookspecs
from waza_core._version import __version__
from waza_core.errors import PluginError
from waza_core.plugin_index import BUILTIN_PLUGINS

BUILTIN_PACKAGES = ("waza_graders", "waza_adapters", "waza_interop", "waza_reporters", "waza_events")
ENTRY_POINT_GROUP = "waza"
#: ``-p no:NAME`` disables the plugin NAME, as in pytest
DISABLE_PREFIX = "no:"
#: environment variables read here (documented in docs/plugins.md)
ENV_PLUGINS = "WAZA_PLUGINS"
ENV_DISABLED = "WAZA_DISABLED_PLUGINS"
ENV_NO_AUTOLOAD = "WAZA_DISABLE_PLUGIN_AUTOLOAD"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")

#: plugin kind -> (hook name, human name)
KINDS = {
    "grader": ("waza_register_graders", "grader"),
    "executor": ("waza_register_executors", "executor"),
    "optimizer_adapter": ("waza_register_optimizer_adapters", "optimizer adapter"),
    "interop_dialect": ("waza_register_interop_dialects", "interop dialect"),
    "reporter": ("waza_register_reporters", "reporter"),
    "event_format": ("waza_register_event_formats", "event format"),
}

#: plugin kind -> the public base class every registered class must derive from
BASES = {
    "grader": "Grader",
    "executor": "Executor",
    "optimizer_adapter": "OptimizerAdapter",
    "interop_dialect": "Dialect",
    "reporter": "Reporter",
    "event_format": "EventFormat",
}


@attrs.define
class PluginInfo:
    name: str
    module: str
    source: str  # "builtin" | "entry-point" | "option" | "object"
    distribution: str | None = None
    version: str | None = None
    error: str | None = None
    registers: dict[str, list[str]] = attrs.field(factory=dict)
    #: what switched it off (``-p no:text`` or ``WAZA_DISABLED_PLUGINS=text``); a
    #: disabled plugin is not imported (a built-in only to say what it would register)
    disabled_by: str | None = None

    def answers_to(self, name: str) -> bool:
        """Whether ``-p no:name`` means this plugin: its name, its module, or for a
        built-in the module's last part (``text`` for ``waza_graders.text``)."""
        if name in (self.name, self.module):
            return True
        return self.source == "builtin" and name == self.module.rpartition(".")[2]


@attrs.define
class Registration:
    cls: Any
    plugin: str


@attrs.frozen
class PluginRequest:
    """Which plugins a command asked for: ``-p`` values and the environment, parsed."""

    modules: tuple[str, ...] = ()
    #: (name, where it was given: ``-p no:NAME`` or ``WAZA_DISABLED_PLUGINS=NAME``)
    disabled: tuple[tuple[str, str], ...] = ()
    autoload: bool = True

    @classmethod
    def parse(cls, options: Iterable[str] | None = None) -> PluginRequest:
        """``-p`` values (``MODULE`` or ``no:NAME``), then ``WAZA_PLUGINS``,
        ``WAZA_DISABLED_PLUGINS`` and ``WAZA_DISABLE_PLUGIN_AUTOLOAD``."""
        modules: list[str] = []
        disabled: list[tuple[str, str]] = []
        for value in [*(options or ()), *_env_list(ENV_PLUGINS)]:
            if value.startswith(DISABLE_PREFIX):
                name = value[len(DISABLE_PREFIX):].strip()
                if not name:
                    raise PluginError(f"-p {value!r}: name the plugin to disable, e.g. -p no:text")
                disabled.append((name, f"-p {DISABLE_PREFIX}{name}"))
            elif value:
                modules.append(value)
        disabled.extend((name, f"{ENV_DISABLED}={name}") for name in _env_list(ENV_DISABLED))
        return cls(tuple(modules), tuple(disabled), _autoload())


def _env_list(name: str) -> list[str]:
    return [n.strip() for n in os.environ.get(name, "").split(",") if n.strip()]


def _autoload() -> bool:
    raw = os.environ.get(ENV_NO_AUTOLOAD, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return False
    if value in _FALSE:
        return True
    raise PluginError(f"{ENV_NO_AUTOLOAD}={raw!r}: use 1, true or yes to skip installed plugins "
                      "(0, false, no or unset to load them)")


class _KindTable(dict):
    """The registrations of one kind; reading a name of a built-in not loaded yet
    (``registry.items[kind][name]``) loads it first, as :meth:`Registry.get` does."""

    def __init__(self, registry: Registry, kind: str) -> None:
        super().__init__()
        self.registry = registry
        self.kind = kind

    def __missing__(self, name: str) -> Registration:
        if self.registry.load_pending(self.kind, name) and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)


class Registry:
    """What the plugins registered, by kind and name. Built-ins not asked for yet are
    *pending*: their names are known (:mod:`waza_core.plugin_index`), their modules not
    imported until :meth:`get` (or ``items[kind][name]``) asks for one of them."""

    def __init__(self) -> None:
        self.plugins: list[PluginInfo] = []
        self.items: dict[str, dict[str, Registration]] = {kind: _KindTable(self, kind) for kind in KINDS}
        #: kind -> name -> the pending built-in plugin that registers it
        self.pending: dict[str, dict[str, PluginInfo]] = {kind: {} for kind in KINDS}
        self._pm: pluggy.PluginManager | None = None
        #: what disabled built-ins would have registered, for a helpful message
        self.disabled_items: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
        #: config keys of executors in disabled built-ins -> plugin name
        self.disabled_config_keys: dict[str, str] = {}
        self.conflicts: list[str] = []

    def get(self, kind: str, name: str) -> Any | None:
        self.check_conflicts()
        self.load_pending(kind, name)
        self.check_conflicts()
        reg = self.items[kind].get(name)
        return reg.cls if reg else None

    def names(self, kind: str) -> list[str]:
        return sorted({*self.items[kind], *self.pending[kind]})

    def builtin_module(self, kind: str, name: str) -> str | None:
        """The module of the built-in plugin that provides ``name`` of ``kind``, loaded or
        not (nothing is imported); None when a plugin of another source provides it."""
        info = self.pending[kind].get(name)
        if info is None:
            reg = dict.get(self.items[kind], name)  # not the table's own get: that would load it
            info = next((p for p in self.plugins if reg is not None and p.name == reg.plugin), None)
        return info.module if info is not None and info.source == "builtin" else None

    def load_pending(self, kind: str, name: str) -> bool:
        """Import and register the pending built-in that provides ``name`` of ``kind``;
        False when there is none (already loaded, unknown or not a built-in)."""
        info = self.pending[kind].get(name)
        if info is None:
            return False
        self._load(info)
        return True

    def load_all(self) -> Registry:
        """Load every pending built-in, in registration order: for whatever lists all
        plugins (``waza plugins``) or what they register."""
        for info in [p for p in self.plugins if self._is_pending(p)]:
            self._load(info)
        return self

    def _is_pending(self, info: PluginInfo) -> bool:
        return any(p is info for table in self.pending.values() for p in table.values())

    def _load(self, info: PluginInfo) -> None:
        for table in self.pending.values():
            for name in [n for n, p in table.items() if p is info]:
                del table[name]
        assert self._pm is not None
        try:
            self._pm.register(importlib.import_module(info.module), name=info.name)
        except Exception as exc:  # pragma: no cover - a built-in always imports
            info.error = f"{type(exc).__name__}: {exc}"
            return
        _collect(self._pm, self, only=info.name)

    def broken(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.error]

    def disabled(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.disabled_by]

    def check_conflicts(self) -> None:
        if self.conflicts:
            raise PluginError("; ".join(self.conflicts))

    def unknown(self, kind: str, name: str) -> str:
        """A message for an unknown name, with the nearest known one and broken plugins."""
        # deferred: difflib adds ~5.4 ms to importing this module
        import difflib

        human = KINDS[kind][1]
        known = self.names(kind)
        msg = f"unknown {human} {name!r}"
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            msg += f" (did you mean {close[0]!r}?)"
        return msg + f"; known: {', '.join(known) or 'none'}" + self.unavailable_note(kind, name)

    def unavailable_note(self, kind: str, name: str) -> str:
        """Why ``name`` may be missing: the disabled plugin that provides it (and how to
        enable it), other disabled plugins, plugins that failed to load. Empty when none."""
        msg = ""
        owner = self.disabled_items[kind].get(name)
        for p in self.disabled():
            if p.name == owner:
                msg += (f"; {KINDS[kind][1]} {name!r} is provided by the plugin {p.name!r}, disabled by "
                        f"{p.disabled_by}: remove that to enable it")
            elif p.source != "builtin":  # not imported, so what it registers is unknown
                msg += f"; the plugin {p.name!r} may provide it but is disabled by {p.disabled_by}"
        broken = self.broken()
        if broken:
            msg += "; plugins that failed to load: " + ", ".join(f"{p.name} ({p.error})" for p in broken)
        return msg

    def config_key_note(self, key: str) -> str:
        """Why ``config.<key>`` of a suite may be unknown: the executor that reads it is
        in a disabled plugin (or a plugin that failed to load). Empty when none."""
        owner = self.disabled_config_keys.get(key)
        msg = ""
        for p in self.disabled():
            if p.name == owner:
                msg += (f"; config.{key} belongs to an executor of the plugin {p.name!r}, disabled by "
                        f"{p.disabled_by}: remove that to enable it")
            elif p.source != "builtin":
                msg += f"; the plugin {p.name!r} may read it but is disabled by {p.disabled_by}"
        broken = self.broken()
        if broken:
            msg += "; plugins that failed to load: " + ", ".join(f"{p.name} ({p.error})" for p in broken)
        return msg


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, finding a module plugin's hook implementations faster.

    pluggy's ``register`` asks :meth:`parse_hookimpl_opts` of every name in ``dir(module)``,
    and pluggy 1.7 looks each up with :func:`inspect.getattr_static`: ~0.75 ms a built-in
    module, 14 ms of the ~190 ms of a warm ``waza validate`` of examples/quickstart, which
    registers 13 graders and 5 executors (cProfile: ``inspect._check_instance`` and
    ``_shadowed_dict``). A plain function in a module's own namespace is what that lookup
    finds anyway, so it is read from the namespace, and a value pluggy never binds (a class,
    a module, a constant) is skipped; a staticmethod, a dunder name or an attribute not in
    the namespace goes to pluggy. ``tests/api/test_plugin_index.py``
    checks both give the same answer for every name of every built-in and example plugin."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if type(plugin) is types.ModuleType and not name.startswith("__"):
            value = plugin.__dict__.get(name, _ABSENT)
            if type(value) is types.FunctionType:
                opts = getattr(value, self.project_name + "_impl", None)
                return opts if isinstance(opts, dict) else None
            if value is not _ABSENT and not isinstance(value, _HOOKABLE):
                return None  # a class, module, constant...: pluggy binds only these types
        return super().parse_hookimpl_opts(plugin, name)


_ABSENT = object()
#: what pluggy can take a hook implementation from (``pluggy._manager._static_hook_attr``)
_HOOKABLE = (types.FunctionType, staticmethod, classmethod, types.MethodType)


def _builtin_modules() -> list[str]:
    """The built-in plugin modules, in registration order, by scanning the built-in
    packages (imports them; start-up reads :data:`BUILTIN_PLUGINS` instead)."""
    modules: list[str] = []
    for pkg in BUILTIN_PACKAGES:
        modules.extend(importlib.import_module(pkg).PLUGINS)
    return modules


def _defer_builtin(info: PluginInfo, registry: Registry) -> None:
    """Note the names a built-in registers, to be imported when one is asked for (and
    what it registers, for listings: the index equals what loading it gives)."""
    for kind, names in BUILTIN_PLUGINS[info.module].items():
        info.registers[kind] = list(names)
        for name in names:
            registry.pending[kind].setdefault(name, info)


def _import_requested(module_name: str) -> Any:
    """Import a ``-p`` module. A module that does not exist at all is the user's typo
    (:class:`PluginError`); one that exists but fails while importing is broken like
    any other plugin (the exception propagates and is recorded)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise PluginError(f"-p {module_name}: no module named {missing!r} (check the name; a module in "
                              "the current folder needs PYTHONPATH=. or python -m waza_core)") from None
        raise


class _Loader:
    """Adds plugins one by one to a plugin manager and the registry's plugin list."""

    def __init__(self, pm: pluggy.PluginManager, registry: Registry, request: PluginRequest) -> None:
        self.pm = pm
        self.registry = registry
        self.request = request
        self.used_disables: set[str] = set()

    def disabled_by(self, info: PluginInfo) -> str | None:
        hits = [(name, where) for name, where in self.request.disabled if info.answers_to(name)]
        self.used_disables |= {name for name, _ in hits}
        return hits[0][1] if hits else None

    def add(self, info: PluginInfo, loader) -> None:
        """Add a plugin; a built-in (``loader`` None) is deferred until asked for."""
        if any(p.name == info.name or p.module == info.module for p in self.registry.plugins):
            return  # already loaded (e.g. an installed plugin also named with -p)
        self.registry.plugins.append(info)
        info.disabled_by = self.disabled_by(info)
        if info.disabled_by:
            if info.source == "builtin":
                _record_disabled_builtin(info, self.registry)
            return
        if loader is None:
            _defer_builtin(info, self.registry)
            return
        try:
            plugin = loader()
            if self.pm.is_registered(plugin) or self.pm.get_plugin(info.name) is not None:
                return
            self.pm.register(plugin, name=info.name)
        except PluginError:
            raise
        except Exception as exc:  # a broken plugin must not break unrelated commands
            info.error = f"{type(exc).__name__}: {exc}"


def _may_declare(group: str) -> bool:
    """False only when surely no installed distribution declares an entry point of
    ``group``: no ``entry_points.txt`` of a ``*.dist-info`` or ``*.egg-info`` folder on
    ``sys.path`` has a ``[group]`` section, no ``sys.path`` entry is an archive, and no
    finder but the standard one finds distributions. Then ``importlib.metadata`` (and the
    ``email`` package it imports, ~15 ms of a ~100 ms ``waza validate``, ``python -X
    importtime``) is not needed; anything less sure asks it."""

    if any(hasattr(f, "find_distributions") for f in sys.meta_path if f is not importlib.machinery.PathFinder):
        return True
    needle = f"[{group}]".encode()
    for entry in sys.path:
        folder = entry or "."
        if os.path.isfile(folder):  # a zip or an egg: importlib.metadata reads inside it
            return True
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(folder, name, "entry_points.txt"), "rb") as fh:
                        if needle in fh.read():
                            return True
                except OSError:
                    continue
    return False


def build_plugin_manager(extra_modules: list[str] | None = None, *,
                         extra_plugins: Mapping[str, object] | None = None) -> tuple[pluggy.PluginManager, Registry]:
    """Load every plugin and collect what each one registers.

    ``extra_modules`` are ``-p`` values (``MODULE`` or ``no:NAME``); ``extra_plugins``
    maps a plugin name to an already-made plugin object (a module or any object with
    hook implementations), as :mod:`waza_core.testing` uses. Raises
    :class:`PluginError` for a request that cannot be honoured (see the module doc).
    """
    request = PluginRequest.parse(extra_modules)
    pm = _PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    registry = Registry()
    registry._pm = pm
    loader = _Loader(pm, registry, request)


    for mod in BUILTIN_PLUGINS:
        loader.add(PluginInfo(mod, mod, "builtin", "waza", __version__), None)

    if request.autoload and _may_declare(ENTRY_POINT_GROUP):
        # deferred: importlib.metadata adds ~53.8 ms to importing this module
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            loader.add(PluginInfo(ep.name, ep.value, "entry-point", dist.metadata["Name"] if dist else None,
                                  dist.version if dist else None), ep.load)

    for mod in request.modules:
        loader.add(PluginInfo(mod, mod, "option"), lambda m=mod: _import_requested(m))

    for name, plugin in (extra_plugins or {}).items():
        loader.add(PluginInfo(name, getattr(plugin, "__name__", name), "object"), lambda p=plugin: p)

    unused = [name for name, _ in request.disabled if name not in loader.used_disables]
    if unused:
        raise PluginError(_no_such_plugin(unused, registry))

    _collect(pm, registry)
    _load_overlapped(registry)
    return pm, registry


def _load_overlapped(registry: Registry) -> None:
    """Load the pending built-ins whose names a third-party plugin registered too, so
    the conflict is found (and reported) as when every built-in was loaded first."""
    for kind, table in registry.items.items():
        for name in list(table):
            registry.load_pending(kind, name)


def _no_such_plugin(names: list[str], registry: Registry) -> str:
    # deferred: difflib adds ~5.4 ms to importing this module
    import difflib

    known = sorted({p.name for p in registry.plugins}
                   | {p.module.rpartition(".")[2] for p in registry.plugins if p.source == "builtin"})
    hints = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1)
        hints.append(repr(name) + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (f"cannot disable {', '.join(hints)}: no such plugin (-p {DISABLE_PREFIX}NAME and {ENV_DISABLED} "
            "take a plugin name as `waza plugins` lists it, or a built-in's short name such as 'text')")


def _record_disabled_builtin(info: PluginInfo, registry: Registry) -> None:
    """Note what a disabled built-in would register (built-ins are ours and import-light),
    so a suite that needs it gets told which plugin to enable instead of 'unknown'."""
    try:
        module = importlib.import_module(info.module)
    except Exception:  # pragma: no cover - a built-in always imports
        return
    for kind, (hook_name, _) in KINDS.items():
        hook = getattr(module, hook_name, None)
        if callable(hook):
            hook(register=lambda cls, _k=kind: _note_disabled(registry, _k, cls, info.name))


def _note_disabled(registry: Registry, kind: str, cls: Any, plugin: str) -> None:
    registry.disabled_items[kind].setdefault(cls.name, plugin)
    key: Any = getattr(cls, "config_key", None)
    if kind == "executor" and isinstance(key, str) and key:
        registry.disabled_config_keys.setdefault(key, plugin)


def _collect(pm: pluggy.PluginManager, registry: Registry, only: str | None = None) -> None:
    """Call each hook implementation on its own, so a registration is attributed to its
    plugin and one plugin raising does not hide the others. ``only``: of that plugin
    (a built-in loaded when asked for)."""
    infos = {p.name: p for p in registry.plugins}
    order = {p.name: i for i, p in enumerate(registry.plugins)}
    for kind, (hook_name, human) in KINDS.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():  # registration order: built-ins first
            plugin_name = impl.plugin_name
            if only is not None and plugin_name != only:
                continue
            info = infos.get(plugin_name)

            def register(cls, _plugin=plugin_name, _kind=kind, _human=human, _info=info):
                base = getattr(waza_core, BASES[_kind])
                if not (isinstance(cls, type) and issubclass(cls, base)):
                    raise PluginError(f"plugin {_plugin!r} registered {cls!r} as a {_human}, but it does not "
                                      f"derive from waza_core.{BASES[_kind]}")
                name = getattr(cls, "name", None)
                if not isinstance(name, str) or not name:
                    raise PluginError(f"plugin {_plugin!r} registered an unnamed {_human}")
                table = registry.items[_kind]
                if name in table and table[name].cls is not cls:
                    held = table[name]
                    if _rank(order, _plugin) < _rank(order, held.plugin):
                        # a built-in loaded when asked for, after a third party took its
                        # name: it keeps the name as when every built-in loaded first
                        table[name] = Registration(cls, _plugin)
                        _move_name(infos, _kind, name, held.plugin, _info)
                        held, _plugin = Registration(cls, _plugin), held.plugin
                    registry.conflicts.append(
                        f"{_human} {name!r} is registered by two plugins: "
                        f"{held.plugin!r} and {_plugin!r}; uninstall or disable one of them"
                    )
                    return
                table[name] = Registration(cls, _plugin)
                if _info is not None:
                    _add_name(_info, _kind, name)

            try:
                impl.function(register=register)
            except Exception as exc:
                if info is not None and not info.error:
                    info.error = f"{type(exc).__name__}: {exc}"


def _rank(order: dict[str, int], plugin: str) -> int:
    return order.get(plugin, len(order))


def _move_name(infos: dict[str, PluginInfo], kind: str, name: str, loser: str, winner: PluginInfo | None) -> None:
    lost = infos.get(loser)
    if lost is not None and name in lost.registers.get(kind, []):
        lost.registers[kind].remove(name)
        if not lost.registers[kind]:
            del lost.registers[kind]
    if winner is not None:
        _add_name(winner, kind, name)


def _add_name(info: PluginInfo, kind: str, name: str) -> None:
    names = info.registers.setdefault(kind, [])
    if name not in names:  # a deferred built-in lists its names from the index already
        names.append(name)


_CACHE: dict[PluginRequest, Registry] = {}
_OVERRIDE: list[Registry] = []


def get_registry(extra_modules: list[str] | None = None) -> Registry:
    """The registry for this process, built once per plugin request (``-p`` values and
    the plugin environment variables). Raises :class:`PluginError` for a bad request."""
    if _OVERRIDE:
        return _OVERRIDE[-1]
    key = PluginRequest.parse(extra_modules)
    if key not in _CACHE:
        _CACHE[key] = build_plugin_manager(extra_modules)[1]
    return _CACHE[key]


def find_registered(kind: str, name: str) -> Any | None:
    """The class registered as ``name`` in the registry a command of this process built
    (with its ``-p`` plugins), else in the default one: for code that an executor runs,
    which is not handed the registry (an executor's ``events`` format)."""
    if _OVERRIDE:
        return _OVERRIDE[-1].get(kind, name)
    for registry in reversed(list(_CACHE.values())):
        found = registry.get(kind, name)
        if found is not None:
            return found
    return get_registry().get(kind, name)


def registered_names(kind: str) -> list[str]:
    """Every name of ``kind`` any registry of this process knows (for error messages)."""
    registries = [_OVERRIDE[-1]] if _OVERRIDE else [*_CACHE.values()] or [get_registry()]
    return sorted({n for r in registries for n in r.names(kind)})


class use_registry:  # noqa: N801 - used as a context manager, reads like a function
    """Make every command in this process use ``registry`` (``waza_core.testing`` runs
    the real CLI in-process with plugins made in a test)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def __enter__(self) -> Registry:
        _OVERRIDE.append(self.registry)
        return self.registry

    def __exit__(self, *exc: object) -> None:
        _OVERRIDE.remove(self.registry)
