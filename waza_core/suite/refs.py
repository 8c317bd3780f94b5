"""Grader references: ``- ref: host/owner/repo[/path][#export]@version`` in eval.yaml.

A grader defined once in a *grader module* (a Git repository with a
``waza.registry.yaml`` manifest) is reused by reference, as waza (Go) does it
(``internal/registry``): ``waza get`` (:mod:`waza_core.suite.get`) pins each ref in ``waza.lock`` beside
eval.yaml (commit and content digest) and unpacks the module into the module cache
(``$WAZA_MODULE_CACHE``, default ``~/.waza/cache``) as ``host/owner/repo/<commit>/``.
Loading a suite resolves every ref offline from that lock and cache, checks the digest,
reads the grader preset the ref selects and merges the entry's own fields over it:
``name``/``weight`` replace the preset's, ``config`` is deep-merged (the entry wins, lists
are replaced), a ``type`` must equal the preset's. Every problem is reported at the
entry's ``ref`` with what to do. The lock and cache are the same files waza (Go) writes,
so either tool's ``waza get`` serves both.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

LOCKFILE = "waza.lock"
_COMMIT = re.compile(r"[0-9a-fA-F]{40}")
_DIGEST = re.compile(r"sha256:[0-9a-fA-F]{64}")


class RefError(Exception):
    """A ref that cannot be resolved; the message says why and what to do."""


class Ref:
    """A parsed ``<host>/<owner>/<repo>[/path][#export]@<version>`` reference."""

    def __init__(self, raw: str) -> None:
        raw = raw.strip()
        if not raw:
            raise RefError("ref is empty")
        if "\\" in raw:
            raise RefError(f"ref {raw!r} must use forward-slash paths")
        base, sep, version = raw.partition("@")
        if not sep or not version.strip():
            raise RefError(f"ref {raw!r} must include @<version>")
        base, _, export = base.partition("#")
        parts = base.split("/")
        if len(parts) < 3:
            raise RefError(f"ref {raw!r} must use <host>/<owner>/<repo>[/path]@<version>")
        for i, part in enumerate(parts[:3]):
            problem = _segment_problem(part)
            if problem:
                raise RefError(f"ref {raw!r} has invalid module segment {i}: {problem}")
        path = ""
        if len(parts) > 3:
            rest = "/".join(parts[3:])
            if ".." in rest.split("/") or rest.startswith("/"):
                raise RefError(f"ref {raw!r} has invalid module path {rest!r}")
            path = os.path.normpath(rest).replace(os.sep, "/")
            path = "" if path == "." else path
        self.raw, self.host, self.owner, self.repo = raw, parts[0], parts[1], parts[2]
        self.path, self.export, self.version = path, export.strip(), version.strip()


def _segment_problem(segment: str) -> str | None:
    if segment == "":
        return "empty segment"
    if segment.strip() != segment:
        return "contains surrounding whitespace"
    if segment in (".", ".."):
        return f"must not be {segment!r}"
    if any(c in segment for c in "/\\:"):
        return "contains a path separator or drive separator"
    return None


def cache_root() -> Path:
    """``$WAZA_MODULE_CACHE``, else ``~/.waza/cache`` (waza Go's module cache)."""
    root = os.environ.get("WAZA_MODULE_CACHE") or os.path.join(os.path.expanduser("~"), ".waza", "cache")
    return Path(root).absolute()


def load_lock(eval_file: Path) -> dict[str, dict]:
    """The lock beside ``eval_file``: ref -> entry. RefError when missing or malformed."""
    # deferred: waza_core.suite adds ~3.7 ms to importing this module
    from waza_core.suite import yamlio

    path = eval_file.parent / LOCKFILE
    try:
        text = yamlio.read_text(path)
    except FileNotFoundError:
        raise RefError(f"eval contains remote grader refs but {path} is missing; run `waza get {eval_file}` "
                       "first") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RefError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        doc = yamlio.parse(text) or {}
    except yamlio.YamlProblem as exc:
        raise RefError(f"parsing lockfile {path}: {exc.message}") from None
    if not isinstance(doc, dict):
        raise RefError(f"parsing lockfile {path}: expected a mapping")
    version = doc.get("schema_version") or 1
    if version != 1:
        raise RefError(f"validating lockfile {path}: unsupported lockfile schema_version {version}")
    entries: dict[str, dict] = {}
    for i, g in enumerate(doc.get("graders") or []):
        if not isinstance(g, dict):
            raise RefError(f"validating lockfile {path}: graders[{i}] must be a mapping")
        for key in ("ref", "commit", "digest", "url"):
            if not isinstance(g.get(key), str) or not g.get(key):
                raise RefError(f"validating lockfile {path}: graders[{i}].{key} is required")
        if not _COMMIT.fullmatch(g["commit"]):
            raise RefError(f"validating lockfile {path}: graders[{i}].commit: must be a 40-character Git SHA")
        if not _DIGEST.fullmatch(g["digest"]):
            raise RefError(f"validating lockfile {path}: graders[{i}].digest: must be a sha256:<64-hex> digest")
        if g["ref"] in entries:
            raise RefError(f"validating lockfile {path}: duplicate lock entry for ref {g['ref']!r}")
        entries[g["ref"]] = g
    return entries


def digest_directory(folder: Path) -> str:
    """waza's module digest: sha256 over each file's slash path, NUL, bytes, NUL, in path order."""
    files = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                raise RefError(f"cannot digest non-regular file {os.path.join(dirpath, name)}")
        for name in filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or not os.path.isfile(full):
                raise RefError(f"cannot digest non-regular file {full}")
            files.append(full)
    h = hashlib.sha256()
    for full in sorted(files):
        h.update(Path(os.path.relpath(full, folder)).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        with open(full, "rb") as fh:
            h.update(fh.read())
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


def resolve(entry: dict, lock: dict[str, dict]) -> tuple[dict, Path]:
    """The concrete grader entry for a ``ref`` entry, and the preset file it came from."""
    ref = Ref(entry["ref"])
    locked = lock.get(entry["ref"])
    if locked is None:
        raise RefError(f"remote grader ref {entry['ref']!r} is not present in {LOCKFILE}; run `waza get`")
    root = cache_root()
    module = root / ref.host / ref.owner / ref.repo / locked["commit"]
    if not module.resolve().is_relative_to(root.resolve()):
        raise RefError(f"module path {module} escapes {root}")
    if not module.is_dir():
        if module.exists():
            raise RefError(f"cache path {module} exists and is not a directory")
        raise RefError(f"module not available offline for ref {entry['ref']!r} at {module}; run `waza get` "
                       "while online")
    digest = digest_directory(module)
    if digest != locked["digest"]:
        raise RefError(f"digest mismatch for ref {entry['ref']!r}: lock has {locked['digest']}, cache has {digest}")
    preset, source = load_preset(ref, module)
    return merge(preset, entry), source


def load_preset(ref: Ref, module: Path) -> tuple[dict, Path]:
    """The grader preset ``ref`` selects in an unpacked module, and its file (``waza get``
    loads it once before pinning, so a bad ref fails there)."""
    if ref.export:
        folder = _join(module, ref.path) if ref.path else module
        exports = _manifest(folder)
        if ref.export not in exports:
            raise RefError(f"manifest does not export grader {ref.export!r}")
        return _grader_file(_join(folder, exports[ref.export]), ref.export)
    if ref.path:
        return _grader_file(_join(module, ref.path), os.path.basename(ref.path))
    exports = _manifest(module)
    if len(exports) != 1:
        raise RefError(f"ref {ref.raw!r} must select one grader with #export or /path")
    name, rel = next(iter(exports.items()))
    return _grader_file(_join(module, rel), name)


def _join(base: Path, slash_path: Any) -> Path:
    if not isinstance(slash_path, str) or not slash_path.strip() or "\\" in slash_path \
            or slash_path.startswith("/") or ".." in slash_path.split("/"):
        raise RefError(f"invalid module path {slash_path!r}")
    target = (base / slash_path).resolve()
    if not target.is_relative_to(base.resolve()):
        raise RefError(f"path {target} escapes {base}")
    return target


def _load_yaml(path: Path) -> Any:
    # deferred: waza_core.suite adds ~3.7 ms to importing this module
    from waza_core.suite import yamlio

    try:
        return yamlio.parse(yamlio.read_text(path))
    except FileNotFoundError:
        raise RefError(f"{path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RefError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except yamlio.YamlProblem as exc:
        raise RefError(f"parsing {path}: {exc.message}") from None


def _manifest(folder: Path) -> dict[str, str]:
    doc = _load_yaml(folder / "waza.registry.yaml")
    graders = ((doc or {}).get("exports") or {}).get("graders") if isinstance(doc, dict) else None
    if not isinstance(graders, dict) or not graders:
        raise RefError(f"manifest {folder / 'waza.registry.yaml'} has no grader exports")
    return {str(k): (v or {}).get("path") if isinstance(v, dict) else None for k, v in graders.items()}


def _grader_file(path: Path, fallback: str) -> tuple[dict, Path]:
    candidates = [path] if path.suffix else [path, path.with_name(path.name + ".yaml"),
                                              path.with_name(path.name + ".yml")]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise RefError(f"grader file not found: {path}")
    doc = _load_yaml(found)
    if not isinstance(doc, dict):
        raise RefError(f"{found} must hold one grader mapping")
    if not doc.get("type"):
        raise RefError(f"remote grader {found} must declare type")
    if doc.get("type") == "program":
        raise RefError("remote program graders are not supported without explicit trust")
    if not doc.get("name"):
        doc = dict(doc, name=os.path.splitext(fallback)[0])
    return doc, found


def merge(preset: dict, local: dict) -> dict:
    """The entry's own fields over the preset (waza's MergeGraderConfig)."""
    if local.get("type") and local["type"] != preset["type"]:
        raise RefError(f"local type {local['type']!r} does not match remote type {preset['type']!r}")
    out = {k: v for k, v in preset.items() if k in ("type", "name", "weight", "config")}
    config = _deep_merge(dict(preset.get("config") or {}), local.get("config") or {})
    if config:
        out["config"] = config
    for key in ("name", "weight"):
        if local.get(key):
            out[key] = local[key]
    return out


def _deep_merge(dst: dict, src: dict) -> dict:
    for key, value in src.items():
        if isinstance(value, dict) and isinstance(dst.get(key), dict):
            dst[key] = _deep_merge(dict(dst[key]), value)
        else:
            dst[key] = value
    return dst
