"""Output targets that collide: checked before the first run (exit 2, naming both).

``waza run`` may write many files: the results (``-o``, one per model in a multi-model
run), the journal (``--journal`` / ``--resume``), every ``--reporter FORMAT:PATH``. Two of
them naming one file lose one of the two (``-o J --journal J`` replaced the journal), and
one naming a file of the suite itself (``-o eval.yaml``, ``--reporter junit:tasks/t1.yaml``,
a fixture, a grader's script, a diff snapshot) destroys the suite. So every target is
compared with every other and with the suite's own files before anything runs.

Paths are compared by what they are, not how they are spelled: an existing file by its
device and inode (a hard link, a symbolic link, ``./x`` and ``x`` are one file), a new one by
its resolved path (``os.path.realpath``, which also follows a dangling link to the file it
would create). A character device (a terminal, ``-o /dev/stdout``) and stdout (``-``) are
not files and are left to the checks of their own.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from waza_core.errors import WazaError
from waza_core.model import tasks_that_may_hold
from waza_core.run.multimodel import per_model_path
from waza_core.suite.cache import folded_inode
from waza_core.suite.script_paths import SUITE_DIR, expand
from waza_core.suite.trigger_tests import FILE_NAME as TRIGGER_TESTS

STDOUT = "-"
#: what :func:`_suite_paths` yields: a file the loader read, a task file it read, a file a
#: document names (it may not exist yet), a folder whose whole content is the suite's
_READ, _TASK, _NAMED, _FOLDER = "read", "task", "named", "folder"
#: strings of a suite document longer than this are not file names (prompts, scripts)
_MAX_NAME = 4096


def identity(path: str | os.PathLike[str]) -> tuple | None:
    """What names one file: ``("inode", dev, ino)`` for an existing file, ``("path",
    realpath)`` for one to be created; None for stdout and character devices.

    A path the kernel cannot open but whose resolved path is an existing file
    (``gone/../x``: ``os.path.realpath`` drops ``gone/..`` without looking, and a writer that
    creates missing parents would then write ``x``) is that file."""
    text = os.fspath(path)
    if text == STDOUT:
        return None
    try:
        st = os.stat(text)
    except OSError:
        real = os.path.realpath(text)
        try:
            st = os.stat(real)
        except OSError:
            return ("path", real)
    if stat.S_ISCHR(st.st_mode):
        return None
    return ("inode", st.st_dev, st.st_ino)


def check_outputs(targets: Iterable[tuple[str, str | os.PathLike[str]]], suite: Any = None) -> None:
    """Exit 2 (WazaError naming both) when two ``(label, path)`` targets name one file, or
    a target names a file of ``suite`` (a loaded SuiteSpec) or lies inside one of its
    folders (a fixture folder, a task folder named by a document)."""
    seen: dict[tuple, str] = {}
    existing: list[tuple[str, str, tuple]] = []
    for label, path in targets:
        ident = identity(path)
        if ident is None:
            continue
        if ident in seen:
            raise WazaError(f"{label} and {seen[ident]} name the same file; give each output its own file")
        seen[ident] = label
        existing.append((label, os.fspath(path), ident))
    if suite is None or not existing:
        return
    for label, path, ident in existing:
        owner = _suite_file_of(path, ident, suite)
        if owner is not None:
            raise WazaError(f"{label} would overwrite {owner}, a file of the suite; write outputs elsewhere")


def _suite_file_of(path: str, ident: tuple, suite: Any) -> str | None:
    """What of the suite ``path`` is (eval.yaml, a task file, a file a document names) or
    lies in (the fixtures folder, a task's ``context_dir``), or None.

    A target that resolves to no existing file (``ident`` is a path) cannot be a file the
    loader read (eval.yaml, the task files): those are not resolved at all, which is most of
    the check's cost on a big suite when ``-o`` names a new file. An existing target is
    compared with each task file by ``stat`` only when its inode is one the loader saw for a
    task file (``Suite.task_file_inodes``; a file replaced since the load is the race every
    such check has, between the check and the write)."""
    real = os.path.realpath(path)
    parts = set(Path(real).parts)
    # no task file had the target's inode when the loader stat'ed it: none is the target
    inodes = getattr(suite, "task_file_inodes", None)
    skip_tasks = ident[0] == "path" or (inodes is not None and inodes.rules_out(suite, folded_inode(ident[2])))
    for name, candidate, kind in _suite_paths(suite, parts, task_files=not skip_tasks):
        if kind == _FOLDER:
            inside = os.path.realpath(candidate).rstrip(os.sep) + os.sep
            if real.startswith(inside):
                return name
        elif ident[0] == "inode":
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == ident[1:]:
                return name
        elif kind == _NAMED and real == os.path.realpath(candidate):
            return name
    return None


def _suite_paths(suite: Any, parts: set[str], task_files: bool = True) -> Iterator[tuple[str, str, str]]:
    """(how to name it, path, :data:`_READ` / :data:`_TASK` / :data:`_NAMED` / :data:`_FOLDER`)
    of the suite's own files: eval.yaml, ``.waza.yaml`` and ``trigger_tests.yaml`` beside it,
    the fixtures folder, every task file and ``context_dir`` (a disabled task's too), and every
    string of a document that names a file relative to the eval's folder, the task's folder or
    the fixtures folder, or from ``{suite_dir}``, and each word of a hook's command. Only strings
    whose last part is a part of the target's resolved path are looked at (a cheap filter: a
    100,000-task suite has millions of strings). ``task_files=False``: not the task files
    themselves (the caller ruled them out: no name is made for each of 100,000 tasks)."""
    root = Path(suite.file).parent
    fixtures = root / "fixtures"
    needles = _needles(parts)
    yield f"the eval file {suite.file}", os.fspath(suite.file), _READ
    yield ".waza.yaml", os.fspath(root / ".waza.yaml"), _NAMED
    yield f"the trigger tests {root / TRIGGER_TESTS}", os.fspath(root / TRIGGER_TESTS), _NAMED
    yield f"the fixtures folder {fixtures}", os.fspath(fixtures), _FOLDER
    yield from _named(suite.raw, (root, fixtures), "eval.yaml", parts, root)
    yield from _hook_words(suite.raw.get("hooks") if isinstance(suite.raw, dict) else None, root, parts)
    for tasks, note in ((suite.tasks, ""), (getattr(suite, "disabled_tasks", ()), " (a disabled task)")):
        tasks = list(tasks)
        # the documents that may hold a needle, searched 512 at a time (every one when no needles)
        holders = range(len(tasks)) if needles is None else set(tasks_that_may_hold(tasks, *needles))
        for i, task in enumerate(tasks):
            if task_files:
                yield f"the task file {task.filename}{note}", task.filename, _TASK
            if task.context_dir:
                for base in (Path(task.filename).parent, root):
                    yield f"the context_dir of task {task.id!r}{note}", os.fspath(base / task.context_dir), _FOLDER
            if i not in holders:
                continue  # no string of the document can end in a part of the target
            yield from _named(task.raw, (Path(task.filename).parent, root, fixtures), f"task {task.id!r}{note}",
                              parts, root)


#: characters JSON may write escaped (besides ``\\uXXXX``): a part holding one is not searched as bytes
_ESCAPED = frozenset('"\\/\b\f\n\r\t') | frozenset(chr(c) for c in range(0x20))


def _needles(parts: set[str]) -> tuple[bytes, ...] | None:
    """The UTF-8 of every part a string's last part may equal, to search a task's compact
    JSON for before it is decoded and walked: a string that :func:`_named` would look at
    holds one of them, and its JSON holds the same bytes unless a character is written as
    an escape. None when that cannot be ruled out (a part with a character JSON escapes
    or not UTF-8); a document that was not cached, or holds a ``\\u`` escape, is walked anyway
    (:meth:`~waza_core.model.TaskSpec.may_hold`)."""
    needles = []
    for part in parts:
        if "/" in part:  # the root: a last part never holds a slash
            continue
        if any(c in _ESCAPED for c in part):
            return None
        try:
            needles.append(part.encode("utf-8"))
        except UnicodeEncodeError:
            return None
    return tuple(needles)


def _named(doc: Any, bases: tuple[Path, ...], where: str, parts: set[str],
           root: Path) -> Iterator[tuple[str, str, str]]:
    """Each string of ``doc`` that may name a file, joined to each of ``bases``."""
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            yield from _candidates(value, bases, where, parts, root)


def _hook_words(hooks: Any, root: Path, parts: set[str]) -> Iterator[tuple[str, str, str]]:
    """Each word of each hook's ``command`` (one string, split on white space into the program
    and its arguments when the hook runs: ``python3 {suite_dir}/scripts/note.py before_run``),
    joined to the folder the hook runs in (its ``working_directory``, from where waza runs,
    as :mod:`waza_core.run.hooks` resolves it; else where waza runs) and to the suite's folder."""
    if not isinstance(hooks, dict):
        return
    cwd = Path.cwd()
    for point, entries in hooks.items():
        for i, hook in enumerate(entries if isinstance(entries, list) else ()):
            command = hook.get("command") if isinstance(hook, dict) else None
            if not isinstance(command, str):
                continue
            folder = hook.get("working_directory")
            runs_in = cwd / expand(folder, os.fspath(root)) if isinstance(folder, str) and folder else cwd
            for word in command.split():
                yield from _candidates(word, (runs_in, root), f"eval.yaml (hook {point}[{i}])", parts, root)


def _candidates(value: str, bases: tuple[Path, ...], where: str, parts: set[str],
                root: Path) -> Iterator[tuple[str, str, str]]:
    """The files ``value`` may name, when its last part is a part of the target's path: from
    ``{suite_dir}`` replaced by ``root``, else relative to each of ``bases``."""
    if not 0 < len(value) <= _MAX_NAME or "\n" in value or "\0" in value:
        return
    last = os.path.basename(value.rstrip("/"))
    if not last or last not in parts:
        return
    if SUITE_DIR in value:
        yield f"{value} (named by {where})", expand(value, os.fspath(root)), _NAMED
        return
    for base in bases:
        yield f"{value} (named by {where})", os.fspath(base / value), _NAMED


def run_targets(output: Path | None, models: list[str], journal: Path | None, resume: Path | None,
                reports: Iterable[Any]) -> list[tuple[str, str]]:
    """(label, path) of every file a ``waza run`` will write: ``-o`` (one file per model in a
    multi-model run, unless it is a device), the journal, every reporter's file."""
    targets: list[tuple[str, str]] = []
    if output is not None and str(output) != STDOUT:
        if len(models) > 1 and identity(output) is not None:
            targets.extend((f"-o {output} (model {model!r}: {per_model_path(output, model)})",
                            os.fspath(per_model_path(output, model))) for model in models)
        else:
            targets.append((f"-o {output}", os.fspath(output)))
    if resume is not None:
        targets.append((f"--resume {resume}", os.fspath(resume)))
    elif journal is not None:
        targets.append((f"--journal {journal}", os.fspath(journal)))
    for request in reports:
        if request.target != STDOUT:
            targets.append((f"--reporter {request.label}", request.target))
    return targets


__all__ = ["check_outputs", "identity", "run_targets"]
