"""Candidates: complete sets of UTF-8 text files with a content-derived identity.

The identity is what makes duplicates detectable and lineage trustworthy, so it is
computed from length-framed bytes (no two different file sets can encode alike), over
files sorted by their UTF-8 path bytes (arrival order never matters).

The path policy keeps every accepted path inside the candidate directory on every
platform waza runs on, so writing a candidate can neither escape its folder nor have
two files land on one name on a case-insensitive file system.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, Iterable

import attrs

from waza_core.errors import WazaError
from waza_core.optimize.failures import OptimizeFailure

ID_DOMAIN = b"waza-optimizer-candidate-v1\0"
ID_PREFIX_LEN = 16
MAX_PATH_BYTES = 255
MAX_SEGMENT_BYTES = 100
MAX_DEPTH = 16
MAX_FILES = 1024

_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")
_DRIVE = re.compile(r"^[A-Za-z]:")
RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                      *(f"lpt{i}" for i in range(1, 10))})
SKILL_FILE = "SKILL.md"


def _u64(n: int) -> bytes:
    return struct.pack(">Q", n)


def sort_key(path: str) -> bytes:
    return path.encode("utf-8")


def candidate_id(target: str, files: Iterable[tuple[str, str]]) -> str:
    """SHA-256 over the target and the sorted (path, content) pairs, length-framed."""
    items = sorted(files, key=lambda f: sort_key(f[0]))
    h = hashlib.sha256(ID_DOMAIN)
    t = target.encode("utf-8")
    h.update(_u64(len(t)) + t + _u64(len(items)))
    for path, content in items:
        p, c = path.encode("utf-8"), content.encode("utf-8")
        h.update(_u64(len(p)) + p + _u64(len(c)) + c)
    return h.hexdigest()


def path_problem(path: Any) -> str | None:
    """Why ``path`` violates the candidate path policy, or None when it is safe."""
    if not isinstance(path, str) or not path:
        return "empty path"
    if "\\" in path:
        return "backslashes are not allowed; use '/'"
    if path.startswith("/"):
        return "absolute paths are not allowed"
    if _DRIVE.match(path):
        return "drive letters are not allowed"
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid UTF-8"
    if len(encoded) > MAX_PATH_BYTES:
        return f"longer than {MAX_PATH_BYTES} bytes"
    segments = path.split("/")
    if len(segments) > MAX_DEPTH:
        return f"deeper than {MAX_DEPTH} levels"
    for seg in segments:
        if seg == "":
            return "empty path segment (leading, trailing or double '/')"
        if seg == "..":
            return "'..' segments are not allowed"
        if seg.startswith("."):
            return f"dot-files and dot-folders ({seg!r}) are not allowed"
        if not _SEGMENT.fullmatch(seg):
            return f"segment {seg!r} has characters outside [A-Za-z0-9._-]"
        if seg.endswith("."):
            return f"segment {seg!r} ends with '.'"
        if len(seg.encode("utf-8")) > MAX_SEGMENT_BYTES:
            return f"segment longer than {MAX_SEGMENT_BYTES} bytes"
        if seg.split(".", 1)[0].casefold() in RESERVED:
            return f"{seg!r} is a reserved name on Windows"
    return None


def collision_problem(paths: Iterable[str]) -> str | None:
    """Two paths that would share a name case-insensitively, or a file that is also
    a folder of another path (``a`` and ``a/b``)."""
    folded: dict[str, str] = {}
    dirs: dict[str, str] = {}
    for p in paths:
        key = p.casefold()
        if key in folded:
            return f"{p!r} and {folded[key]!r} collide on a case-insensitive file system"
        folded[key] = p
        parts = key.split("/")
        for i in range(1, len(parts)):
            dirs.setdefault("/".join(parts[:i]), p)
    for key, p in folded.items():
        if key in dirs:
            return f"{p!r} is a file, but {dirs[key]!r} uses it as a folder"
    return None


def content_problem(content: str) -> str | None:
    """Binary content: a NUL character or a lone surrogate (which JSON can encode)."""
    if "\x00" in content:
        return "contains a NUL character (binary content)"
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8 text (lone surrogate)"
    return None


def check_files(files: list[dict], target: str) -> tuple[tuple[str, str], ...]:
    """Check a proposed file list; returns (path, content) pairs sorted by path.

    Path problems are ``unsafe_candidate_path``; everything else that makes the set
    not a valid candidate is ``malformed_proposal``.
    """
    seen: set[str] = set()
    out = []
    for f in files:
        path, content = f["path"], f["content"]
        problem = path_problem(path)
        if problem:
            raise OptimizeFailure("unsafe_candidate_path", f"candidate path {path!r}: {problem}", path=path)
        if path in seen:
            raise OptimizeFailure("malformed_proposal", f"candidate path {path!r} appears twice", path=path)
        seen.add(path)
        problem = content_problem(content)
        if problem:
            raise OptimizeFailure("malformed_proposal", f"candidate file {path!r} {problem}", path=path)
        out.append((path, content))
    problem = collision_problem(seen)
    if problem:
        raise OptimizeFailure("unsafe_candidate_path", f"candidate paths: {problem}")
    if target == "skill-directory" and SKILL_FILE not in seen:
        raise OptimizeFailure("malformed_proposal", f"a skill-directory candidate must include {SKILL_FILE}")
    return tuple(sorted(out, key=lambda f: sort_key(f[0])))


def overlay_problem(paths: Iterable[str], base: Path) -> str | None:
    """An overlay file must not replace a folder of the base context (or sit below a file)."""
    for p in paths:
        parts = p.split("/")
        for i in range(1, len(parts)):
            prefix = base.joinpath(*parts[:i])
            if prefix.exists() and not prefix.is_dir():
                return f"{p!r} would need {'/'.join(parts[:i])!r}, a file of the context directory, as a folder"
        if base.joinpath(*parts).is_dir():
            return f"{p!r} would replace a folder of the context directory"
    return None


@attrs.frozen
class Candidate:
    target: str
    files: tuple[tuple[str, str], ...]  # sorted by UTF-8 path bytes
    id: str = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(sorted(self.files, key=lambda f: sort_key(f[0]))))
        object.__setattr__(self, "id", candidate_id(self.target, self.files))

    @property
    def prefix(self) -> str:
        return self.id[:ID_PREFIX_LEN]

    def file_dicts(self) -> list[dict[str, str]]:
        return [{"path": p, "content": c} for p, c in self.files]

    def content(self, path: str) -> str | None:
        return dict(self.files).get(path)


@attrs.frozen
class Lineage:
    parent_id: str | None
    origin: str  # "seed" | "proposal"
    adapter: str | None
    adapter_version: str | None
    iteration: int


def load_seed(seed_dir: Path, target: str) -> Candidate:
    """Read a seed directory as a candidate. Symlinks and unsafe paths are
    ``unsafe_candidate_path``; unreadable or binary content is ``invalid_config``."""
    if not seed_dir.is_dir():
        raise OptimizeFailure("invalid_config", f"--seed {seed_dir}: no such folder")
    if seed_dir.is_symlink():
        raise OptimizeFailure("unsafe_candidate_path", f"--seed {seed_dir} is a symlink; pass the real folder")
    files = []
    for root, dirnames, filenames in os.walk(seed_dir):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = Path(root) / name
            rel = full.relative_to(seed_dir).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise OptimizeFailure("unsafe_candidate_path", f"seed contains a symlink: {rel}", path=rel)
            if stat.S_ISDIR(st.st_mode):
                continue
            problem = path_problem(rel)
            if problem:
                raise OptimizeFailure("unsafe_candidate_path", f"seed file {rel!r}: {problem}", path=rel)
            if not stat.S_ISREG(st.st_mode):
                raise OptimizeFailure("invalid_config", f"seed entry {rel!r} is not a regular file")
            try:
                content = full.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                raise OptimizeFailure("invalid_config", f"seed file {rel!r} is not UTF-8 text") from None
            except OSError as exc:
                raise OptimizeFailure("invalid_config", f"cannot read seed file {rel!r}: {exc.strerror}") from None
            if "\x00" in content:
                raise OptimizeFailure("invalid_config", f"seed file {rel!r} contains NUL (binary content)")
            files.append((rel, content))
    if not files:
        raise OptimizeFailure("invalid_config", f"--seed {seed_dir}: the folder has no files")
    if len(files) > MAX_FILES:
        raise OptimizeFailure("invalid_config", f"--seed {seed_dir}: more than {MAX_FILES} files")
    problem = collision_problem(p for p, _ in files)
    if problem:
        raise OptimizeFailure("unsafe_candidate_path", f"seed paths: {problem}")
    if target == "skill-directory" and not any(p == SKILL_FILE for p, _ in files):
        raise OptimizeFailure("invalid_config", f"--seed {seed_dir}: a skill-directory seed must contain {SKILL_FILE}")
    return Candidate(target, tuple(files))


def write_tree(dest: Path, files: Iterable[tuple[str, str]], mode: int = 0o600, dir_mode: int = 0o700) -> None:
    """Write files under ``dest`` (which must exist). Paths are policy-checked, so
    joining them cannot leave ``dest``; each file is replaced, never written through."""
    # deferred: waza_core.safe_write adds ~11.3 ms to importing this module
    from waza_core.safe_write import write_file

    for path, content in files:
        target = dest.joinpath(*path.split("/"))
        parent = target.parent
        if parent != dest:
            parent.mkdir(parents=True, exist_ok=True, mode=dir_mode)
        write_file(target, content.encode("utf-8"), mode, through_links=False)


class CandidateStore:
    """``candidates/<id-prefix>/candidate.json`` + ``files/<path>``, written before any
    evaluation so every evaluated candidate can be inspected and re-run afterwards."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records: dict[str, dict[str, Any]] = {}

    def save(self, cand: Candidate, lineage: Lineage) -> dict[str, Any]:
        # deferred: waza_core.results.io adds ~61.7 ms to importing this module
        from waza_core.results.io import write_atomic
        from waza_core.results.jsonbytes import dumps

        rel = f"candidates/{cand.prefix}/"
        record = {
            "id": cand.id, "parent_id": lineage.parent_id, "origin": lineage.origin,
            "adapter": lineage.adapter, "adapter_version": lineage.adapter_version,
            "iteration": lineage.iteration, "path": rel,
            "files": [{"path": p, "sha256": hashlib.sha256(c.encode("utf-8")).hexdigest(),
                       "bytes": len(c.encode("utf-8"))} for p, c in cand.files],
        }
        folder = self.root / cand.prefix
        try:
            self.root.mkdir(mode=0o700, exist_ok=True)
            folder.mkdir(mode=0o700)
            (folder / "files").mkdir(mode=0o700)
            write_tree(folder / "files", cand.files)
            doc = dict(record, target=cand.target)
            write_atomic(folder / "candidate.json", dumps(doc), 0o600)
        except (OSError, WazaError) as exc:
            raise OptimizeFailure("infrastructure_failure", f"cannot save candidate {cand.prefix}: {exc}",
                                  candidate_id=cand.id) from None
        self.records[cand.id] = record
        return record
