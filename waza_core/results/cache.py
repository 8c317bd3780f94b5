"""The result cache of ``waza run --cache``: a finished run is reused while nothing it
depends on has changed.

The key of a run (:func:`run_key`) is the SHA-256 of a canonical JSON of everything
that could change its result: the suite's config (executor and its options, model,
timeouts, attempts, skill folders, mocks), the task's definition, every grader that
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
from pathlib import Path
from typing import Any, Callable

from waza_core.errors import WazaError

ENTRY_KIND = "waza.run-cache"
ENTRY_VERSION = 1
DEFAULT_DIR = ".waza-cache"
_ENTRY = re.compile(r"^[0-9a-f]{64}\.json$")
_TEMP = re.compile(r"^\.[0-9a-f]{64}\.json\..+\.tmp$")
#: attributes of specs that say where a thing was written, not what it is
_PLACE = {"file", "where", "line", "col", "positions", "source", "dir"}


class ResultCache:
    def __init__(self, directory: str | os.PathLike[str], warn: Callable[[str], None] | None = None) -> None:
        self.dir = Path(directory)
        self.warn = warn or (lambda message: None)
        self.hits = 0
        self.stored = 0

    def _path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.warn(f"result cache: cannot read {path}: {exc.strerror}; running it again")
            return None
        try:
            entry = json.loads(data)
            if not (isinstance(entry, dict) and entry.get("kind") == ENTRY_KIND and entry.get("key") == key
                    and entry.get("version") == ENTRY_VERSION and isinstance(entry.get("run"), dict)
                    and isinstance(entry["run"].get("status"), str)):
                raise ValueError("not a cache entry of this key")
        except (ValueError, UnicodeDecodeError) as exc:
            self.warn(f"result cache: ignoring corrupt entry {path} ({exc}); running it again")
            return None
        self.hits += 1
        return entry["run"]

    def put(self, key: str, run: dict[str, Any]) -> None:
        """Store a finished run (not an errored one); a failure to store only warns."""
        if run.get("status") == "error":
            return
        from waza_core._version import __version__
        from waza_core.results.io import write_atomic

        entry = {"kind": ENTRY_KIND, "version": ENTRY_VERSION, "key": key, "waza_version": __version__, "run": run}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self._path(key), json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass"))
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
    import attrs

    if attrs.has(type(value)):
        return {a.name: canonical(getattr(value, a.name)) for a in attrs.fields(type(value))
                if a.name not in _PLACE}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def tree_digest(folder: Path | None) -> str | None:
    """SHA-256 over the relative paths and bytes of every file under ``folder`` (symlinks as their target text)."""
    if folder is None:
        return None
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
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
    from waza_core._version import __version__

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
    """The cache as one ``waza run`` uses it: built once from the engine, then wrapping the
    function that executes and grades one trial (``run_once(task, run_number)``).

    It reads only what the engine decided (tasks, graders, inputs, model, executor,
    trials), so it attaches to any loop that calls a per-run function.
    """

    def __init__(self, engine: Any, directory: str | os.PathLike[str], warn: Callable[[str], None]) -> None:
        self.engine = engine
        self.store = ResultCache(directory, warn)
        graders = list(engine.global_graders) + [g for t in engine.tasks for g in engine.task_graders[t.id]]
        moody = nondeterministic_graders(graders)
        self.off_reason = (f"the result cache is off: grader(s) {', '.join(moody)} are not deterministic"
                           if moody else None)
        self.from_cache: set[tuple[str, int]] = set()

    @property
    def active(self) -> bool:
        return self.off_reason is None

    def key(self, task: Any, run_number: int) -> str:
        e = self.engine
        files, fixture = e.inputs[task.id]
        config = e.suite.config
        return run_key(config=config, task=task,
                       graders=[g.spec for g in list(e.global_graders) + list(e.task_graders[task.id])],
                       files=files, fixture=fixture, model=e.model, executor=e.executor_name, trials=e.trials,
                       run_number=run_number,
                       extra={"skill_directories": e.options.skill_directories,
                              "skip_graders": e.options.skip_graders, "context_dir": e.options.context_dir,
                              "judge_model": getattr(e.options, "judge_model", None)})

    def wrap(self, run_once: Callable[[Any, int], dict[str, Any]]) -> Callable[[Any, int], dict[str, Any]]:
        if not self.active:
            return run_once

        def cached_run_once(task: Any, run_number: int) -> dict[str, Any]:
            key = self.key(task, run_number)
            hit = self.store.get(key)
            if hit is not None:
                self.from_cache.add((task.id, run_number))
                return {**hit, "cached": True}
            run = run_once(task, run_number)
            self.store.put(key, run)
            return run

        return cached_run_once

    def mark(self, outcome: dict[str, Any]) -> None:
        """Say in the results which runs came from the cache: run and task ``cached``, ``summary.cached_runs``."""
        for task in outcome.get("tasks", []):
            runs = task.get("runs", [])
            if runs and all((task["test_id"], r.get("run_number")) in self.from_cache for r in runs):
                task["cached"] = True
        outcome["summary"]["cached_runs"] = len(self.from_cache)


def attach(engine: Any, directory: str | os.PathLike[str], warn: Callable[[str], None]) -> RunCache:
    """Turn the cache on for ``engine`` (or say why it stays off)."""
    cache = RunCache(engine, directory, warn)
    if cache.active:
        engine.run_once = cache.wrap(engine.run_once)
    else:
        warn(cache.off_reason)
    return cache
