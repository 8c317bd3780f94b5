"""The suite pin and the admission rules.

An optimizer compares scores across evaluations, so everything that decides a score
must be the same for each of them. The pin records it (directory digests, executor,
model, trials, timeout, waza version, the exact task IDs of each split) and is checked
before and after every evaluation. Admission rejects suites whose behaviour the pin
cannot cover: files read relative to the working directory, scripts outside the
pinned folders, retries that hide errors, tasks that bypass the candidate.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path
from typing import Any, Iterable

import attrs

from waza_core._version import __version__
from waza_core.optimize.failures import OptimizeFailure

#: folders never hashed: caches written by graders and version-control metadata
EXCLUDED_DIRS = frozenset({"__pycache__", ".git"})
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1", ".lua", ".php")
FILE_SUFFIXES = (".md", ".txt", ".yaml", ".yml", ".json")
#: where the working directory is searched for a skill with the suite's name
CWD_SKILL_LOCATIONS = ("{name}", "skills/{name}", ".github/skills/{name}", ".claude/skills/{name}",
                       ".copilot/skills/{name}", ".agents/skills/{name}")
CANDIDATE_DIR_NAME = "skill"


class DirDigest:
    """SHA-256 over a folder's regular files: sorted relative paths, length-framed,
    with each file's content hash. File hashes are cached by (size, mtime in ns,
    inode, device): a check before and after every evaluation then costs a walk of
    ``stat`` calls, not a re-read of a large context directory. Any write changes the
    mtime; only a deliberate reset of the mtime to the same nanosecond would be missed.
    (``ctime`` is left out because hard-linking a file for a materialization changes it.)"""

    def __init__(self, root: Path, exclude: Iterable[Path] = ()) -> None:
        self.root = root
        self.exclude = {Path(p).resolve() for p in exclude}
        self._cache: dict[str, tuple[tuple, bytes]] = {}

    def compute(self) -> str:
        h = hashlib.sha256(b"waza-optimizer-dir-v1\0")
        if not self.root.is_dir():
            return h.hexdigest()
        for rel, full, st in self._walk():
            key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
            cached = self._cache.get(rel)
            if cached is None or cached[0] != key:
                digest = _file_sha256(full)
                self._cache[rel] = (key, digest)
            else:
                digest = cached[1]
            r = rel.encode("utf-8", "surrogateescape")
            h.update(struct.pack(">Q", len(r)) + r + digest)
        return h.hexdigest()

    def _walk(self):
        """(relative path, full path, stat) of every regular file, sorted by path bytes.

        ``os.scandir`` on plain strings: the walk runs before and after every
        evaluation, and pathlib objects per file cost more than the ``stat`` calls.
        """
        out = []
        stack = [("", os.fspath(self.root))]
        while stack:
            rel_dir, full_dir = stack.pop()
            with os.scandir(full_dir) as entries:
                for e in entries:
                    if e.is_symlink():
                        raise OptimizeFailure("suite_changed", f"a symlink appeared in a pinned folder: {e.path}")
                    rel = rel_dir + e.name
                    if e.is_dir(follow_symlinks=False):
                        if e.name in EXCLUDED_DIRS or (self.exclude and Path(e.path).resolve() in self.exclude):
                            continue
                        stack.append((rel + "/", e.path))
                    elif e.is_file(follow_symlinks=False):
                        out.append((rel, e.path, e.stat(follow_symlinks=False)))
        out.sort(key=lambda x: x[0].encode("utf-8", "surrogateescape"))
        return out


def _file_sha256(path: Path) -> bytes:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


def find_symlinks(root: Path, exclude: Iterable[Path] = ()) -> list[str]:
    excl = {Path(p).resolve() for p in exclude}
    found = []
    if not root.exists():
        return found
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames + filenames:
            if (base / name).is_symlink():
                found.append(str(base / name))
        dirnames[:] = [d for d in dirnames if d not in EXCLUDED_DIRS and not (base / d).is_symlink()
                       and (base / d).resolve() not in excl]
    return found


@attrs.frozen
class Splits:
    optimization_tag: str
    qualification_tag: str
    optimization: tuple[str, ...]
    qualification: tuple[str, ...]

    def ids(self, split: str) -> tuple[str, ...]:
        return self.optimization if split == "optimization" else self.qualification


def select_splits(suite, optimization_tag: str, qualification_tag: str) -> Splits:
    """Tasks by tag, in suite order. Empty or overlapping splits are ``invalid_suite``."""
    opt = tuple(t.id for t in suite.tasks if optimization_tag in t.tags)
    qual = tuple(t.id for t in suite.tasks if qualification_tag in t.tags)
    problems = []
    if not opt:
        problems.append(f"the optimization split (tag {optimization_tag!r}) has no task")
    if not qual:
        problems.append(f"the qualification split (tag {qualification_tag!r}) has no task")
    both = sorted(set(opt) & set(qual))
    if both:
        problems.append(f"the splits overlap: {', '.join(both)} carry both tags")
    if problems:
        raise OptimizeFailure("invalid_suite", "; ".join(problems))
    return Splits(optimization_tag, qualification_tag, opt, qual)


class SuitePin:
    """What was pinned before the loop, and the check run around every evaluation."""

    def __init__(self, suite, splits: Splits, context_dir: Path, exclude: Iterable[Path] = ()) -> None:

        self.suite = suite
        self.eval_dir = suite.dir.resolve()
        self.context_dir = context_dir.resolve() if context_dir.exists() else context_dir.absolute()
        # the context directory has its own digest; hashing it again inside the eval
        # directory (the default <suite>/fixtures) would double the cost of every check
        self._eval = DirDigest(self.eval_dir, [*exclude, self.context_dir])
        self._ctx = DirDigest(self.context_dir, exclude)
        cfg = suite.config
        self.doc = {
            "eval_file": suite.file.name,
            "eval_dir_sha256": self._eval.compute(),
            "context_dir": _display(self.context_dir, self.eval_dir),
            "context_dir_sha256": self._ctx.compute(),
            "executor": cfg.executor,
            "model": cfg.model,
            "trials_per_task": cfg.trials_per_task,
            "timeout_seconds": cfg.timeout_seconds,
            "waza_version": __version__,
            "splits": {
                "optimization": {"tag": splits.optimization_tag, "task_ids": list(splits.optimization)},
                "qualification": {"tag": splits.qualification_tag, "task_ids": list(splits.qualification)},
            },
        }

    def check(self, when: str) -> None:
        """Raise ``suite_changed`` naming what changed since the pin was taken."""

        changed = []
        if self._eval.compute() != self.doc["eval_dir_sha256"]:
            changed.append("the eval directory (spec, tasks, graders, data or mocks)")
        if self._ctx.compute() != self.doc["context_dir_sha256"]:
            changed.append("the context directory")
        if __version__ != self.doc["waza_version"]:
            changed.append("the waza version")
        if changed:
            raise OptimizeFailure("suite_changed",
                                  f"{when}: {' and '.join(changed)} changed since the suite was pinned")


def _display(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return path.name


def default_context_dir(suite) -> Path:
    return suite.dir / "fixtures"


# -- admission -----------------------------------------------------------------------

def _inside(path: Path, dirs: Iterable[Path]) -> bool:
    p = Path(os.path.normpath(path))
    return any(p == d or p.is_relative_to(d) for d in dirs)


def _has_dotdot(value: str) -> bool:
    return ".." in value.replace("\\", "/").split("/")


def _walk_dicts(node: Any):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk_dicts(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk_dicts(v)


def _grader_dicts(raw: dict) -> list[dict]:
    """Grader entries at this level and inside checkpoints (``graders``/``validators``)."""
    out = []
    for key in ("graders", "validators"):
        out.extend(g for g in raw.get(key) or [] if isinstance(g, dict))
    for cp in raw.get("checkpoints") or []:
        if isinstance(cp, dict):
            out.extend(_grader_dicts(cp))
    return out


def _looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.lower().endswith(SCRIPT_SUFFIXES + FILE_SUFFIXES)


class Admission:
    """Collects every admission problem of a suite, so a user fixes them in one pass."""

    def __init__(self, suite, target: str, splits: Splits, context_dir: Path) -> None:
        self.suite = suite
        self.target = target
        self.splits = splits
        self.suite_dir = suite.dir.resolve()
        self.context_dir = context_dir.resolve() if context_dir.exists() else context_dir.absolute()
        self.pinned = (self.suite_dir, self.context_dir)
        self.problems: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    def check(self, exclude: Iterable[Path] = (), cwd: Path | None = None) -> None:
        suite = self.suite
        raw = suite.raw or {}
        ev = suite.file.name
        if raw.get("hooks"):
            self.add(ev, "hooks are not allowed: they run outside the pinned evaluation")
        if raw.get("baseline") is True or suite.baseline:
            self.add(ev, "baseline: true is not allowed: the optimizer compares candidates, not A/B runs")
        if "scenario" in raw:
            self.add(ev, "scenario suites are not allowed")
        cfg_raw = raw.get("config") or {}
        attempts = cfg_raw.get("max_attempts", suite.config.max_attempts)
        if isinstance(attempts, int) and attempts > 1:
            self.add(ev, f"config.max_attempts is {attempts}; it must be 1 (the runner keeps only the final "
                         "attempt, so an error followed by a passing retry would be lost)")
        self._check_ids()
        split_ids = set(self.splits.optimization) | set(self.splits.qualification)
        for link in find_symlinks(self.suite_dir, exclude) + find_symlinks(self.context_dir, exclude):
            self.add(link, "symlinks are not allowed in the suite or context directory (the pin cannot cover them)")
        self._check_paths_list(ev, "config.skill_directories", cfg_raw.get("skill_directories") or [], self.suite_dir)
        self._check_update_snapshots(ev, raw)
        for g in _grader_dicts(raw):
            self._check_grader(ev, g)
        if self.target == "skill-directory":
            self._check_skill_target(ev, cfg_raw)
        for task in suite.tasks:
            if task.id in split_ids:
                self._check_task(task)
        if self.target == "skill-directory" and cwd is not None:
            found = cwd_skill(suite.skill, cwd)
            if found:
                self.add(str(found), f"a skill named {suite.skill!r} can be found from the working directory, "
                                     "and the runner looks there before the candidate; run waza optimize from "
                                     "a directory without that skill")
        if self.problems:
            raise OptimizeFailure("invalid_suite", "suite not admitted:\n  " + "\n  ".join(self.problems))

    def _check_ids(self) -> None:
        seen: dict[str, Path] = {}
        for t in self.suite.tasks:
            if not isinstance(t.id, str) or not t.id.strip():
                self.add(_rel(t.file, self.suite_dir), "task has no ID")
            elif t.id in seen:
                self.add(_rel(t.file, self.suite_dir),
                         f"task ID {t.id!r} is also used by {_rel(seen[t.id], self.suite_dir)}")
            else:
                seen[t.id] = t.file

    def _check_skill_target(self, ev: str, cfg_raw: dict) -> None:
        disabled = [str(s) for s in cfg_raw.get("disabled_skills") or self.suite.config.disabled_skills]
        for name in ("*", CANDIDATE_DIR_NAME, self.suite.skill):
            if name in disabled:
                self.add(ev, f"config.disabled_skills contains {name!r}, which would remove the candidate skill")

    def _check_path_value(self, where: str, field: str, value: Any, base: Path | None) -> None:
        """A path field must stay inside the pinned folders. ``base`` resolves a relative
        value; None means the field is resolved from the working directory."""
        if not isinstance(value, str) or not value:
            return
        if _has_dotdot(value):
            self.add(where, f"{field} {value!r} uses '..'; use a path inside the suite")
            return
        if os.path.isabs(value):
            if not _inside(Path(value), self.pinned):
                self.add(where, f"{field} {value!r} is outside the suite and context directories")
        elif base is None:
            self.add(where, f"{field} {value!r} is relative to the working directory, not the suite; "
                            "use an absolute path inside the suite")

    def _check_paths_list(self, where, field, values, base) -> None:
        for v in values:
            self._check_path_value(where, field, v, base)

    def _check_update_snapshots(self, where: str, raw: dict) -> None:
        for d in _walk_dicts(raw):
            if d.get("update_snapshots"):
                self.add(where, "update_snapshots is set; it could rewrite pinned files during the run")
                return

    def _check_grader(self, where: str, g: dict) -> None:
        gtype = g.get("type")
        name = g.get("name", gtype)
        cfg = g.get("config") if isinstance(g.get("config"), dict) else {}
        label = f"grader {name!r}"
        self._check_path_value(where, f"{label} schema_file", cfg.get("schema_file"), None)
        self._check_path_value(where, f"{label} context_dir", cfg.get("context_dir"), None)
        if gtype == "trigger" or "skill_path" in cfg:
            self._check_path_value(where, f"{label} skill_path", cfg.get("skill_path"), None)
        for key in ("rubric", "rubric_file"):
            value = cfg.get(key)
            if isinstance(value, str) and (key == "rubric_file" or _looks_like_path(value)):
                self._check_path_value(where, f"{label} {key}", value, None)
        if gtype == "diff" or "expected_files" in cfg:
            for ef in cfg.get("expected_files") or []:
                if isinstance(ef, dict) and ef.get("snapshot") and not cfg.get("context_dir"):
                    self.add(where, f"{label}: snapshot {ef['snapshot']!r} has no grader context_dir, so it "
                                    "resolves from the working directory; set an absolute context_dir inside the suite")
        if gtype == "program":
            self._check_program(where, label, cfg)

    def _check_program(self, where: str, label: str, cfg: dict) -> None:
        command = cfg.get("command")
        if isinstance(command, str) and ("/" in command or "\\" in command):
            self._check_script(where, f"{label} command", command)
        for arg in cfg.get("args") or []:
            if isinstance(arg, str) and (os.path.isabs(arg) or _looks_like_path(arg)) and not arg.startswith("-"):
                self._check_script(where, f"{label} argument", arg)
        timeout = cfg.get("timeout")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            self.add(where, f"{label} must set a positive timeout (the default comes from a .waza.yaml "
                            "the pin does not cover)")

    def _check_script(self, where: str, field: str, value: str) -> None:
        if _has_dotdot(value):
            self.add(where, f"{field} {value!r} uses '..'; pass the script as an absolute path inside the suite")
        elif not os.path.isabs(value):
            self.add(where, f"{field} {value!r} is a relative script path, resolved from the working "
                            "directory; pass the script as an absolute path inside the suite")
        elif not _inside(Path(value), self.pinned):
            self.add(where, f"{field} {value!r} is outside the suite and context directories")

    def _check_task(self, task) -> None:
        where = _rel(task.file, self.suite_dir)
        raw = task.raw or {}
        if not _inside(task.file.resolve(), (self.suite_dir,)):
            self.add(task.filename, "task file lives outside the suite directory")
        inputs = raw.get("inputs") or {}
        if "repos" in inputs:
            self.add(where, "inputs.repos is not allowed: the pin cannot cover a repository's contents or refs")
        if "scenario" in raw:
            self.add(where, "scenario tasks are not allowed")
        context = inputs.get("context") if isinstance(inputs.get("context"), dict) else {}
        if self.target == "skill-directory":
            if "skill_directories" in raw:
                self.add(where, "the task sets its own skill_directories, which would bypass the candidate skill")
            cdir = raw.get("context_dir")
            if isinstance(cdir, str) and not os.path.isabs(cdir):
                self.add(where, f"context_dir {cdir!r} is relative; the runner resolves it from the working "
                                "directory, not the suite; use an absolute path inside the suite")
            else:
                self._check_path_value(where, "context_dir", cdir, self.suite_dir)
        else:
            if "context_dir" in raw:
                self.add(where, "the task sets its own context_dir, which would bypass the candidate overlay")
            if "fixture" in context:
                self.add(where, "the task sets inputs.context.fixture, which would bypass the candidate overlay")
        fixture = context.get("fixture")
        if isinstance(fixture, str):
            self._check_path_value(where, "inputs.context.fixture", fixture, self.context_dir)
        for f in inputs.get("files") or []:
            if isinstance(f, dict):
                self._check_path_value(where, "inputs.files path", f.get("path"), self.context_dir)
        self._check_path_value(where, "inputs.prompt_file", inputs.get("prompt_file"), task.file.parent)
        self._check_paths_list(where, "skill_directories", raw.get("skill_directories") or [], task.file.parent)
        self._check_update_snapshots(where, raw)
        for g in _grader_dicts(raw):
            self._check_grader(where, g)


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return str(path)


def skill_name(skill_md: str) -> str | None:
    """The ``name`` of a SKILL.md's YAML frontmatter, or None when it has none."""
    text = skill_md.lstrip("\ufeff")
    if not text.startswith("---"):
        return None
    lines = text.splitlines()
    if lines[0].strip() != "---":
        return None
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        return None
    # deferred: waza_core.suite adds ~2.0 ms to importing this module
    from waza_core.suite import yamlio

    try:
        data = yamlio.parse("\n".join(lines[1:end]))
    except yamlio.YamlProblem:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def cwd_skill(name: str, cwd: Path) -> Path | None:
    """A SKILL.md for ``name`` that the runner would find from ``cwd`` first."""
    candidates = [cwd / "SKILL.md"] + [cwd / loc.format(name=name) / "SKILL.md" for loc in CWD_SKILL_LOCATIONS]
    for path in candidates:
        try:
            if path.is_file():
                found = skill_name(path.read_text("utf-8", errors="replace"))
                if found == name or path.parent.name == name:
                    return path
        except OSError:
            continue
    return None
