"""The project configuration file ``.waza.yaml``, looked up as waza (Go) does.

The lookup starts at a directory (the process's working directory by default, not
the suite's folder, as in Go), checks it and then at most ten parents, and stops at
the first ``.waza.yaml``. Keys are camelCase. Only the keys waza for Python uses are
checked; the others (scaffolding, storage, ...) are read and ignored, so one file can
serve both implementations. A file that cannot be read or parsed is a
:class:`~waza_core.errors.WazaError` naming it: a silently ignored typo would change
timeouts without anyone noticing.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError
from waza_core.limits import MAX_TIMEOUT_SECONDS

FILE_NAME = ".waza.yaml"
MAX_PARENTS = 10
#: the names ``--backend`` and ``defaults.backend`` take (``waza_core.run.backend`` makes them);
#: here, at the bottom, so that the settings can be checked without importing the run layer
BACKENDS = ("local", "ray")


def find(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The first ``.waza.yaml`` in ``start`` or one of its ten nearest parents."""
    here = Path(start if start is not None else os.getcwd()).absolute()
    for _ in range(MAX_PARENTS + 1):
        candidate = here / FILE_NAME
        if candidate.is_file():
            return candidate
        if os.path.lexists(candidate):  # a folder, a FIFO, a dangling link: an error, not "no file"
            raise WazaError(f"{candidate}: the project config must be a regular file")
        if here.parent == here:
            break
        here = here.parent
    return None


def load(start: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], Path | None]:
    """``(settings, file)``; ``({}, None)`` when there is no project file."""
    path = find(start)
    if path is None:
        return {}, None
    return _read(path), path


def _read(path: Path) -> dict[str, Any]:
    # deferred: waza_core.suite adds ~2.9 ms to importing this module
    from waza_core.suite import yamlio

    try:
        text = yamlio.read_text(path)
    except UnicodeDecodeError as exc:
        raise WazaError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise WazaError(f"cannot read project config {path}: {exc.strerror}") from None
    try:
        data = yamlio.parse(text)
    except yamlio.YamlProblem as exc:
        where = f"{path}:{exc.line}:{exc.col}" if exc.line else str(path)
        raise WazaError(f"{where}: {exc.message}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise WazaError(f"{path}: expected a mapping at the top level")
    return data


def program_timeout(start: str | os.PathLike[str] | None = None) -> float | None:
    """``graders.programTimeout`` in seconds, or ``None`` when not set (or 0, as in Go).

    Every program grader of a suite asks, so the answer is remembered per file
    identity (path, size, times, inode): a suite of thousands of program graders
    parses ``.waza.yaml`` once, and an edited file is read again.
    """
    path = find(start)
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return _program_timeout(path)
    return _cached_program_timeout(path, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))


@functools.lru_cache(maxsize=16)
def _cached_program_timeout(path: Path, _identity: tuple[int, ...]) -> float | None:
    return _program_timeout(path)  # an error is raised again each time: lru_cache keeps no exception


def _program_timeout(path: Path) -> float | None:
    graders = _read(path).get("graders")
    if graders is None:
        return None
    if not isinstance(graders, dict):
        raise WazaError(f"{path}: 'graders' must be a mapping")
    value = graders.get("programTimeout")
    if value is None:
        return None

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TIMEOUT_SECONDS:
        raise WazaError(f"{path}: graders.programTimeout must be a number of seconds from 0 to "
                        f"{MAX_TIMEOUT_SECONDS}, got {value!r}")
    return float(value) or None


#: ``.waza.yaml`` ``defaults`` keys ``waza run`` reads, and the type of each
RUN_DEFAULTS: dict[str, type | tuple[type, ...]] = {"backend": str, "rayAddress": str, "maxSpend": (int, float),
                                                    "maxRunCost": (int, float), "prices": str}


def run_default(key: str, start: str | os.PathLike[str] | None = None) -> Any:
    """``defaults.<key>`` of the project file for ``waza run`` (see :data:`RUN_DEFAULTS`), or None."""
    path = find(start)
    if path is None:
        return None
    defaults = _read(path).get("defaults")
    if defaults is None:
        return None
    if not isinstance(defaults, dict):
        raise WazaError(f"{path}: 'defaults' must be a mapping")
    value = defaults.get(key)
    want = RUN_DEFAULTS[key]
    if value is not None and (not isinstance(value, want) or isinstance(value, bool)):
        what = "number" if isinstance(want, tuple) else want.__name__
        raise WazaError(f"{path}: defaults.{key} must be a {what}, got {value!r}")
    if key == "backend" and value is not None:
        if value not in BACKENDS:
            raise WazaError(f"{path}: defaults.backend must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value
