"""The methods attrs writes for the classes of a waza command, compiled once and kept beside
waza's bytecode.

attrs builds each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and more) as
Python source and compiles it when the class is created, in every process: about 150
``compile`` calls and ~25 ms of a ``waza run``'s ~90 ms of imports (measured with a timer
around ``compile``). Python keeps the bytecode of modules in ``__pycache__``; this keeps the
bytecode of attrs' generated methods there too, in one file, so a command compiles them only
when attrs writes a method it has not seen. It holds every attrs class made in a command after
:func:`install`: waza's and its libraries' (``referencing``, ``jsonschema``), ~5.6 KB each.

How: :func:`install` puts :meth:`MethodCache.compile` in ``attr._make``'s namespace, where it
shadows the built-in ``compile`` that attrs calls with ``(script, filename, "exec")``. When attrs
is not imported yet, it is put there before the module's code runs (a finder on
``sys.meta_path`` for ``attr._make`` alone, removed at once), so the ~30 classes attrs itself
makes while it is imported (its validators, converters, ...) come from the cache too: ~5 ms. The key is
the source itself, its file name, the compiler flags attrs' module would pass on (its
``__future__`` imports) and the optimization level, so the same source always gives the code
the built-in would have compiled; anything else (another call shape, a source not seen) goes
to the built-in. If attrs stops calling ``compile`` there, nothing changes but the speed.

The one difference: attrs writes into each ``__hash__`` a number, ``hash()`` of the class's
name, which string hashing makes different in every process; a cached ``__hash__`` keeps the
number of the process that compiled it. Hashes stay consistent within a process (which is all
Python promises), but a run with a fixed ``PYTHONHASHSEED`` would not get the hashes (and set
orders) that seed gives, so the cache is off when ``PYTHONHASHSEED`` is set to anything but
``random``.

Where: ``__pycache__/attrs-methods.<cache tag>.bin`` beside this module (under
``sys.pycache_prefix`` when set), written at exit only when a method was compiled, atomically
(``safe_write.replace_entry``: a temporary file renamed over the name), never when bytecode
writing is off (``PYTHONDONTWRITEBYTECODE``, ``-B``); ``WAZA_NO_METHOD_CACHE=1`` turns it off. The file is trusted as a ``.pyc`` there is: whoever can
write that folder can already change waza's bytecode (docs/safety.md). A file that is not
this Python's (its magic number), not a mapping of source to code, or unreadable is ignored.
"""

from __future__ import annotations

import __future__
import atexit
import builtins
import marshal
import os
import re
import sys
from types import CodeType
from typing import Any

#: the number attrs writes into each class's ``__hash__``: ``hash()`` of the class's name, which
#: differs from process to process (string hashing is salted), so it is left out of the key
#: (``return hash((``, or ``... = _cache_wrapper(hash((`` of a class with ``cache_hash=True``)
_HASH_SALT = re.compile(r"(hash\(\(\n[ \t]*)-?\d+,$", re.MULTILINE)
#: the header of the file: this Python's bytecode magic number, then a name
_MARK = b"waza-attrs-methods\n"
#: a larger file is not read (a checkout's, after the whole test suite: ~430 KB)
_MAX_BYTES = 8 << 20
#: more entries than this (old attrs versions, changed classes): keep only those used this time
#: (waza's commands together use ~250)
_MAX_ENTRIES = 600


def _magic() -> bytes:
    # importlib.util costs ~5 ms to import; its MAGIC_NUMBER comes from this frozen module
    import _frozen_importlib_external

    return _frozen_importlib_external.MAGIC_NUMBER


class MethodCache:
    """Compiled attrs methods by source; loaded from ``path``, saved there at exit if new ones came.

    The file is a marshalled mapping of key to the marshalled code: loading it copies bytes,
    and only the code attrs asks for is unmarshalled."""

    def __init__(self, path: str | None, inherited_flags: int | None, module: Any = None) -> None:
        self.path = path
        #: None until the first call: then the ``__future__`` imports of ``module`` (attrs'
        #: ``_make``, whose first statement they are, when the cache was put there before it ran)
        self.flags = inherited_flags
        self.module = module
        #: source key -> marshalled code, each unmarshalled only when attrs asks for it
        self.blobs: dict[str, bytes] = self._read(path) if path else {}
        self.used: set[str] = set()
        self.new = 0

    def compile(self, source: Any, filename: Any, mode: Any, *rest: Any, **options: Any) -> Any:
        """``compile`` as attrs calls it; other calls go to the built-in unchanged."""
        if rest or options or mode != "exec" or type(source) is not str or type(filename) is not str:
            return builtins.compile(source, filename, mode, *rest, **options)
        if self.flags is None:
            self.flags = _future_flags(self.module)
        key = f"{self.flags}:{sys.flags.optimize}:{filename}\0{_HASH_SALT.sub(_SALT_MARK, source)}"
        self.used.add(key)
        blob = self.blobs.get(key)
        if blob is not None:
            try:
                code = marshal.loads(blob)
            except (EOFError, ValueError, TypeError):
                code = None
            if type(code) is CodeType:
                return code
        code = builtins.compile(source, filename, mode, self.flags, True)
        self.blobs[key] = marshal.dumps(code)
        self.new += 1
        return code

    def save(self) -> None:
        """Write the file when this process compiled a method it did not have (atomic)."""
        if not self.new or not self.path or sys.dont_write_bytecode:
            return
        blobs = self.blobs
        if len(blobs) > _MAX_ENTRIES:
            blobs = {k: v for k, v in blobs.items() if k in self.used}
        # deferred: safe_write brings tempfile (~5 ms); only a process that compiled something new writes
        from waza_core.errors import WazaError
        from waza_core.safe_write import replace_entry

        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            replace_entry(self.path, _magic() + _MARK + marshal.dumps(blobs), 0o644)
        except (OSError, ValueError, WazaError):
            return  # as Python does with a .pyc it cannot write: run on without it
        self.new = 0

    @staticmethod
    def _read(path: str) -> dict[str, bytes]:
        try:
            with open(path, "rb") as f:
                data = f.read(_MAX_BYTES + 1)
        except OSError:
            return {}
        head = _magic() + _MARK
        if len(data) > _MAX_BYTES or not data.startswith(head):
            return {}
        try:
            blobs = marshal.loads(memoryview(data)[len(head):])
        except (EOFError, ValueError, TypeError):
            return {}
        if type(blobs) is not dict or not all(type(k) is str and type(v) is bytes for k, v in blobs.items()):
            return {}
        return blobs


def _SALT_MARK(match: re.Match) -> str:
    return match.group(1) + "SALT,"


def cache_path() -> str | None:
    """Where the file goes: beside this module's bytecode (``sys.pycache_prefix`` honoured)."""
    here = os.path.dirname(os.path.abspath(__file__))
    name = f"attrs-methods.{sys.implementation.cache_tag}.bin"
    if sys.implementation.cache_tag is None:
        return None
    if sys.pycache_prefix:  # as Python places bytecode there: the folder's path without its drive
        return os.path.join(sys.pycache_prefix, os.path.splitdrive(here)[1].lstrip(os.sep), name)
    return os.path.join(here, "__pycache__", name)


def _future_flags(module: Any) -> int:
    """The compiler flags ``compile`` called in ``module`` would inherit: its ``__future__`` imports."""
    flags = 0
    for name in __future__.all_feature_names:
        feature = getattr(__future__, name)
        if getattr(module, name, None) is feature:
            flags |= feature.compiler_flag
    return flags


_installed: list[MethodCache] = []


def install() -> MethodCache | None:
    """Let attrs take its compiled methods from the cache (once per process); the cache, or
    None when attrs' module does not look as expected or ``WAZA_NO_METHOD_CACHE`` is set."""
    if _installed:
        return _installed[0]
    if os.environ.get("WAZA_NO_METHOD_CACHE", "") not in ("", "0"):
        return None
    if os.environ.get("PYTHONHASHSEED", "random") != "random":
        # a fixed seed asks for the same hashes in every run; a cached __hash__ carries the
        # number of the process that compiled it (hash() of the class's name under its seed)
        return None
    loaded = sys.modules.get("attr._make")
    cache = MethodCache(cache_path(), None, loaded)
    if loaded is None:
        finder = _BeforeMake(cache)
        sys.meta_path.insert(0, finder)
    try:
        from attr import _make  # deferred: install() is called once attrs is wanted anyway
    except ImportError:
        return None
    finally:
        if loaded is None:
            try:
                sys.meta_path.remove(finder)
            except ValueError:
                pass  # it removed itself when asked for attr._make
    if loaded is not None:
        if getattr(_make, "compile", builtins.compile) is not builtins.compile:
            return None  # someone else shadows it already: leave it
        _make.compile = cache.compile  # type: ignore[attr-defined]
    elif getattr(_make, "compile", None) != cache.compile:
        return None  # attrs' module was not loaded through the finder: it compiles as it always did
    atexit.register(cache.save)
    _installed.append(cache)
    return cache


class _BeforeMake:
    """A finder for ``attr._make`` alone: the module's spec as the other finders give it, its
    loader told to put :meth:`MethodCache.compile` in the module's namespace before running
    its code. Used once: it leaves ``sys.meta_path`` as soon as it is asked for the module,
    and the loader is given back its own ``exec_module`` once that module ran (a zip
    importer's loader is shared by every module of the package). A loader that takes no new
    attribute (slots, one written in C) is left alone: attrs then compiles its own classes."""

    def __init__(self, cache: MethodCache) -> None:
        self.cache = cache

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "attr._make":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec
        cache = self.cache

        def exec_with_cache(module: Any) -> None:
            if getattr(module, "__name__", None) != "attr._make":
                exec_module(module)  # another module of a loader the package shares
                return
            try:
                del loader.exec_module
            except AttributeError:
                pass
            module.compile = cache.compile
            cache.module = module
            exec_module(module)

        try:
            loader.exec_module = exec_with_cache
        except (AttributeError, TypeError):
            pass
        return spec
