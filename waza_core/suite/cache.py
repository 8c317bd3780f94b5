"""A cache of parsed and checked suite files, so a large suite loads fast the second time.

Parsing YAML and checking it against the schemas costs ~0.3 ms per task file; a suite
of 2000 tasks spends most of its start-up there. Files that loaded *without any
problem* are stored as plain JSON, keyed by their path and ``stat`` identity (size,
mtime, ctime, inode), under a fingerprint of everything that decides validity: the
waza and ruamel.yaml versions, the composed schemas, and each plugin class's source
file. Any change to a file or a plugin misses the cache; a file with problems is
never cached, so error messages are always fresh.

Location: ``$WAZA_CACHE_DIR``, else ``$XDG_CACHE_HOME/waza``, else ``~/.cache/waza``
(directory 0700, files 0600). ``WAZA_NO_CACHE=1`` turns it off. A broken or
unreadable cache is ignored: the cache can only make loading faster, never different.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from pathlib import Path
from typing import Any

FORMAT = 1
#: a checked document is cached only if its JSON is at most this many times the size
#: of its source (plus :data:`GROWTH_SLACK` bytes): a file whose aliases multiply it
#: must never turn into a huge cache file (see docs/safety.md)
MAX_GROWTH = 4
GROWTH_SLACK = 64 * 1024


def cache_dir() -> Path | None:
    if os.environ.get("WAZA_NO_CACHE", "") not in ("", "0"):
        return None
    base = os.environ.get("WAZA_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "waza"


def stat_key(path: Path) -> list[int]:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _class_identity(cls) -> list:
    try:
        src = inspect.getsourcefile(cls)
        st = os.stat(src) if src else None
        return [cls.__module__, cls.__qualname__, src, st.st_mtime_ns if st else 0, st.st_size if st else 0]
    except (TypeError, OSError):
        return [cls.__module__, cls.__qualname__, None, 0, 0]


def fingerprint(registry) -> str:
    from importlib.metadata import version

    from waza_core._version import __version__
    from waza_core.suite import schema

    parts: list[Any] = [FORMAT, __version__, version("ruamel.yaml"),
                        schema.composed("eval", registry), schema.composed("task", registry)]
    for kind in ("grader", "executor"):
        parts.extend(_class_identity(registry.get(kind, n)) for n in registry.names(kind))
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def json_exact(value: Any) -> bool:
    """True when a JSON round trip gives ``value`` back unchanged (no dates, no
    non-string keys): only such documents may be cached."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_exact(v) for k, v in value.items())
    if isinstance(value, list):
        return all(json_exact(v) for v in value)
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return value is None or isinstance(value, (str, int, bool))


class SuiteCache:
    """Checked documents of one suite, by file path."""

    def __init__(self, eval_file: Path, registry) -> None:
        self.dir = cache_dir()
        self.entries: dict[str, Any] = {}
        self.dirty = False
        if self.dir is None:
            return
        self.path = self.dir / "suites" / (hashlib.sha256(str(eval_file).encode()).hexdigest() + ".json")
        self.fp = fingerprint(registry)
        try:
            doc = json.loads(self.path.read_bytes())
            if doc.get("fingerprint") == self.fp:
                self.entries = doc["files"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries = {}

    def get(self, file: Path, kind: str, key: list[int]) -> Any | None:
        entry = self.entries.get(str(file))
        if entry and entry.get("kind") == kind and entry.get("stat") == key:
            return entry.get("data")
        return None

    def put(self, file: Path, kind: str, key: list[int], data: Any) -> None:
        """Remember ``data`` for ``file`` (whose ``stat_key`` is ``key``; its first item
        is the source size), unless it is not plain JSON or much bigger than its source."""
        if self.dir is None or not json_exact(data):
            return
        if len(json.dumps(data, separators=(",", ":"))) > MAX_GROWTH * key[0] + GROWTH_SLACK:
            return
        self.entries[str(file)] = {"kind": kind, "stat": key, "data": data}
        self.dirty = True

    def save(self) -> None:
        if self.dir is None or not self.dirty:
            return
        from waza_core.results.io import write_atomic

        try:
            for folder in (self.dir, self.dir / "suites"):
                try:
                    folder.mkdir(parents=True, mode=0o700)
                    os.chmod(folder, 0o700)  # what waza makes is private whatever the umask
                except FileExistsError:
                    pass
            blob = json.dumps({"fingerprint": self.fp, "files": self.entries}, separators=(",", ":"))
            write_atomic(self.path, blob.encode(), 0o600)
        except Exception:  # a cache that cannot be written is only a slower next load
            pass
