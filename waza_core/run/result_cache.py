"""The result cache of ``waza run --cache``: a finished run is reused while nothing it
depends on has changed.

The key of a run (:func:`run_key`) is the SHA-256 of a canonical JSON of everything
that could change its result: the whole eval.yaml mapping (config, executor options,
model, timeouts, attempts, skill folders, suite-level mocks and inputs), the task's
definition (with its mocks), every grader that
judges it (type, name, weight, config), the bytes of its input files and of its
fixture folder, the trial number and the waza version. A suite with a grader that is
not deterministic (``Grader.deterministic = False``: ``prompt``, ``behavior``) is not
cached at all, as in waza. Errored runs are not stored: an infrastructure failure
should be retried, not remembered.

One file per run, ``<dir>/<key>.json``, written atomically; an entry that cannot be
read or does not match its key is ignored with a warning (and replaced). ``clear``
removes only files that look like entries, never anything else in the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import deque
from pathlib import Path
from typing import Any, Callable

import attrs

from waza_core import untrusted
from waza_core._version import __version__
from waza_core.errors import WazaError
from waza_core.results.codec import decode_run, decode_run_strictly, run_to_json
from waza_core.safe_write import replace_entry

ENTRY_KIND = "waza.run-cache"
ENTRY_VERSION = 1
DEFAULT_DIR = ".waza-cache"
#: the largest entry read back: a bigger file in the folder is ignored, not read
MAX_ENTRY_BYTES = 64 * 1024 * 1024
_ENTRY = re.compile(r"^[0-9a-f]{64}\.json$")
_TEMP = re.compile(r"^\.[0-9a-f]{64}\.json\..+\.tmp$")
#: attributes of specs that say where a thing was written, not what it is (by the name a field
#: is passed as: ``TaskSpec.filename`` is ``file=``, ``GraderSpec._where`` is ``where=``)
_PLACE = {"file", "where", "at_file", "line", "col", "positions", "source", "dir"}


class ResultCache:
    def __init__(self, directory: str | os.PathLike[str], warn: Callable[[str], None] | None = None) -> None:
        self.dir = Path(directory)
        self.warn = warn or (lambda message: None)
        self.hits = 0
        self.stored = 0

    def _path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The run stored for ``key``, or None. The folder is shared input (CI restores it
        from a cache others write to): an entry that is a link, a FIFO, a device, larger
        than :data:`MAX_ENTRY_BYTES`, not JSON, too deep, or a run with a field of the wrong
        type is ignored with a warning, and the run runs again (docs/safety.md)."""
        path = self._path(key)
        try:
            entry = untrusted.read_json(path, limit=MAX_ENTRY_BYTES)
            if not (isinstance(entry, dict) and entry.get("kind") == ENTRY_KIND and entry.get("key") == key
                    and untrusted.is_int(entry.get("version")) and entry.get("version") == ENTRY_VERSION):
                raise untrusted.UntrustedInput(f"{path}: not a cache entry of this key")
            decode_run_strictly(entry.get("run"), f"{path}: run")
        except FileNotFoundError:
            return None
        except untrusted.UntrustedInput as exc:
            self.warn(f"result cache: ignoring corrupt entry ({exc}); running it again")
            return None
        self.hits += 1
        return entry["run"]

    def put(self, key: str, run: dict[str, Any]) -> None:
        """Store a finished run (not an errored one); a failure to store only warns. The
        entry's name is replaced whatever is there: a link planted in the folder is
        replaced, never written through (nor an outside file chmodded)."""
        if run.get("status") == "error":
            return
        entry = {"kind": ENTRY_KIND, "version": ENTRY_VERSION, "key": key, "waza_version": __version__, "run": run}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # ASCII JSON: a lone surrogate in an agent's output is kept as its \u escape and
            # reads back exactly (as raw bytes it would not be UTF-8, and the entry unreadable)
            replace_entry(self._path(key), json.dumps(entry).encode("ascii"))
            self.stored += 1
        except (OSError, WazaError) as exc:
            self.warn(f"result cache: cannot store a run in {self.dir}: {exc}")

    def clear(self) -> int:
        """Remove every entry (and leftover temporary file); return how many entries went."""
        if not self.dir.exists():
            return 0
        if not self.dir.is_dir():
            raise WazaError(f"--cache-dir {self.dir} is not a folder")
        removed = 0
        try:
            names = os.listdir(self.dir)
        except OSError as exc:
            raise WazaError(f"cannot read cache folder {self.dir}: {exc.strerror}") from None
        for name in names:
            if _ENTRY.match(name) or _TEMP.match(name):
                try:
                    (self.dir / name).unlink()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise WazaError(f"cannot remove {self.dir / name}: {exc.strerror}") from None
                removed += bool(_ENTRY.match(name))
        try:
            self.dir.rmdir()  # only when nothing else is in it
        except OSError:
            pass
        return removed


# -- keys -----------------------------------------------------------------------------

def canonical(value: Any) -> Any:
    """A JSON-able, order-stable form of specs (attrs classes, paths, tuples, mappings)."""

    if attrs.has(type(value)):
        names = [_public(a, value) for a in attrs.fields(type(value)) if a.name not in _PLACE and a.alias not in _PLACE]
        return {name: canonical(getattr(value, name)) for name in names}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _public(field, value: Any) -> str:
    """The name a field is read by: a private field with a public property of its init
    name (``TaskSpec._raw``, read as ``raw``: a document whether the suite cache kept it
    as compact JSON or not) is keyed and read by that name."""
    alias = field.alias
    if alias != field.name and isinstance(getattr(type(value), alias, None), property):
        return alias
    return field.name


def tree_digest(folder: Path | None) -> str | None:
    """SHA-256 over the relative paths and bytes of every file under ``folder`` (symlinks as their target text)."""
    if folder is None:
        return None
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in dirnames:  # a link to a folder is not walked: its target text is in the key
            path = Path(dirpath) / name
            if path.is_symlink():
                h.update(path.relative_to(folder).as_posix().encode("utf-8", "surrogatepass") + b"\0dirlink:"
                         + os.readlink(path).encode("utf-8", "surrogatepass") + b"\0")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            h.update(rel.encode("utf-8", "surrogatepass") + b"\0")
            try:
                if path.is_symlink():
                    h.update(b"link:" + os.readlink(path).encode("utf-8", "surrogatepass"))
                else:
                    with open(path, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
            except OSError as exc:
                raise WazaError(f"result cache: cannot read fixture {path}: {exc.strerror}") from None
            h.update(b"\0")
    return h.hexdigest()


def run_key(*, config: Any, task: Any, graders: list[Any], files: Any, fixture: Path | None, model: str | None,
            executor: str, trials: int, run_number: int, extra: dict[str, Any] | None = None) -> str:
    """The cache key of one run: see the module docstring for what goes in."""
    material = {
        "waza_version": __version__,
        "config": canonical(config),
        "executor": executor,
        "model": model,
        "trials": trials,
        "run_number": run_number,
        "task": canonical(task),
        "graders": [canonical(g) for g in graders],
        "files": canonical(files),
        "fixture": tree_digest(fixture),
        "extra": canonical(extra or {}),
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def nondeterministic_graders(graders: list[Any]) -> list[str]:
    """Names of the graders whose verdict may change on the same evidence (they turn the cache off)."""
    return sorted({f"{g.spec.name} ({g.spec.type})" for g in graders if not getattr(g, "deterministic", True)})


# -- attaching the cache to a run ---------------------------------------------------------

class RunCache:
    """The cache as one ``waza run`` uses it: it wraps the run's backend
    (:class:`CachingBackend`), so a unit whose key is stored never reaches the backend.

    It reads only what the prepared suite decided (task, graders, inputs, settings), so
    the same key comes out wherever the run would have run.
    """

    def __init__(self, prepared: Any, directory: str | os.PathLike[str], warn: Callable[[str], None]) -> None:
        self.prepared = prepared
        self.store = ResultCache(directory, warn)
        moody = nondeterministic_graders(prepared.all_graders())
        self.off_reason = (f"the result cache is off: grader(s) {', '.join(moody)} are not deterministic"
                           if moody else None)
        self.from_cache = 0

    @property
    def active(self) -> bool:
        return self.off_reason is None

    def key(self, unit: Any) -> str:
        p = self.prepared
        task = p.tasks[unit.task_id]
        inputs = p.inputs[unit.task_id]
        return run_key(config=p.suite.config, task=task, graders=[g.spec for g in p.graders_of(unit.task_id)],
                       files=inputs.files, fixture=inputs.fixture, model=unit.model,
                       executor=p.settings.executor, trials=0, run_number=unit.trial,
                       extra={"settings": p.settings, "max_attempts": unit.max_attempts,
                              "skill_directories": p.skill_directories(task),
                              # the whole eval.yaml mapping: suite-level mocks (command_mocks,
                              # mcp_mocks), inputs and hooks live there, not in config
                              "suite": p.suite.raw})

    def wrap_backend(self, backend: Any) -> Any:
        return CachingBackend(backend, self) if self.active else backend

    def mark(self, doc: Any) -> None:
        """Say in the results which runs came from the cache: run and task ``cached``, ``summary.cached_runs``."""
        for task in doc.tasks:
            self.mark_task(task)
        if doc.summary is not None:
            doc.summary.extra["cached_runs"] = self.from_cache


    def mark_task(self, task: Any) -> None:
        """Task ``cached`` when all its runs came from the cache (as it finishes, for a run
        whose tasks are streamed to the results file and not kept)."""
        if task.runs and all(r.extra.get("cached") is True for r in task.runs):
            task.extra["cached"] = True


class CachingBackend:
    """A backend in front of another: stored runs come back at once, the others are run
    by the inner backend and stored as they finish."""

    def __init__(self, inner: Any, cache: RunCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits: deque[Any] = deque()
        self.keys: dict[tuple[str, int, str], str] = {}
        self.submitted = False

    def submit(self, units: Any) -> None:
        # deferred: waza_core.run.backend adds ~69.9 ms to importing this module
        from waza_core.run.backend import CompletedRun

        misses = []
        for unit in units:
            key = self.cache.key(unit)
            stored = self.cache.store.get(key)
            run = decode_run(stored, "cached run") if stored is not None else None
            if run is None:
                self.keys[(unit.task_id, unit.trial, unit.model)] = key
                misses.append(unit)
                continue
            run.extra["cached"] = True
            self.hits.append(CompletedRun(unit, run))
        if misses:
            self.inner.submit(misses)
            self.submitted = True

    def results(self) -> Any:

        while self.hits:
            self.cache.from_cache += 1
            yield self.hits.popleft()
        if not self.submitted:
            return
        for done in self.inner.results():
            key = self.keys.get((done.unit.task_id, done.unit.trial, done.unit.model))
            if key is not None:
                self.cache.store.put(key, run_to_json(done.run))
            yield done

    def cancel(self) -> int:
        dropped = len(self.hits)
        self.hits.clear()
        return dropped + (self.inner.cancel() if self.submitted else 0)

    def interrupt(self) -> None:
        self.hits.clear()
        self.inner.interrupt()

    def close(self) -> None:
        self.inner.close()
