"""``waza get``: resolve grader references into the module cache and pin them in ``waza.lock``.

What waza (Go) ``internal/registry`` does, step by step, for each
``<host>/<owner>/<repo>[/path][#export]@<version>`` reference:

1. the module's source: by default the Git URL ``https://<host>/<owner>/<repo>.git``;
   ``--source MODULE=LOCATION`` points a module (``host/owner/repo``) at another Git URL,
   a local Git repository, or a plain folder (offline use, tests, mirrors);
2. for Git: ``git clone --mirror`` into a temporary folder, the version (a tag, branch or
   commit) resolved to a commit, that commit's tree (``git archive``) unpacked into
   ``<cache>/<host>/<owner>/<repo>/<commit>/``; for a folder: its files copied there, and
   the "commit" is the SHA-1 of the folder's content digest (a folder has no commit; the
   40 hex digits keep the lock format);
3. the module's content digest (:func:`waza_core.suite.refs.digest_directory`: SHA-256 over
   every file's slash path and bytes, in path order);
4. the grader preset the ref selects is loaded once, so a bad ref fails here, not at run
   time;
5. ``waza.lock`` is written with one ``{ref, commit, digest, url}`` per ref, sorted by ref.

``waza run`` then reads only the lock and the cache (:mod:`waza_core.suite.refs`), never the
network, and refuses a module whose digest is not the locked one.

One trap of waza (Go) is fixed: it trusts a cache folder that already exists for a commit
and writes that folder's digest into the lock, so a cache edited by hand would be pinned as
if it were the module. Here an existing cache folder is compared with a fresh unpacking of
the commit, and a difference is an error naming the folder.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.paths import display_path
from waza_core.procs import ProcessStartError
from waza_core.procs import run as run_process
from waza_core.safe_write import write_file
from waza_core.suite import refs, yamlio

GIT_TIMEOUT = 600.0


@attrs.frozen
class LockEntry:
    """One ``graders[]`` entry of ``waza.lock``."""

    ref: str
    commit: str
    digest: str
    url: str


def parse_sources(items: list[str]) -> dict[str, str]:
    """``["github.com/o/r=/path/to/repo", ...]`` -> ``{"github.com/o/r": "/path/to/repo"}``."""
    out: dict[str, str] = {}
    for item in items:
        module, sep, location = item.partition("=")
        module = module.strip().strip("/")
        if not sep or not location.strip() or module.count("/") != 2:
            raise WazaError(f"--source {item!r}: expected HOST/OWNER/REPO=LOCATION (a Git URL, a Git repository "
                            "or a folder)")
        out[module] = location.strip()
    return out


def refs_of_eval(eval_file: Path) -> list[str]:
    """The distinct ``graders[].ref`` values of an eval file, in order."""
    try:
        doc = yamlio.parse(yamlio.read_text(eval_file))
    except FileNotFoundError:
        raise WazaError(f"{display_path(eval_file)}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WazaError(f"cannot read {display_path(eval_file)}: {getattr(exc, 'strerror', None) or exc}") from None
    except yamlio.YamlProblem as exc:
        where = f":{exc.line}:{exc.col}" if exc.line else ""
        raise WazaError(f"{display_path(eval_file)}{where}: {exc.message}") from None
    graders = doc.get("graders") if isinstance(doc, dict) else None
    found: list[str] = []
    for g in graders if isinstance(graders, list) else ():
        ref = g.get("ref") if isinstance(g, dict) else None
        if isinstance(ref, str) and ref not in found:
            found.append(ref)
    return found


def resolve(raw: str, sources: dict[str, str], cache: Path | None = None) -> LockEntry:
    """Fetch the module of ``raw`` into the cache and return its lock entry."""
    try:
        ref = refs.Ref(raw)
    except refs.RefError as exc:
        raise WazaError(str(exc)) from None
    module = f"{ref.host}/{ref.owner}/{ref.repo}"
    location = sources.get(module) or f"https://{module}.git"
    root = cache or refs.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    local = Path(location).expanduser()
    if local.is_dir() and not _is_git(local):
        commit, folder, url = _from_folder(ref, local.resolve(), root)
    else:
        url = str(local.resolve()) if local.is_dir() else location
        commit, folder = _from_git(ref, url, root)
    digest = refs.digest_directory(folder)
    try:
        refs.load_preset(ref, folder)
    except refs.RefError as exc:
        raise WazaError(f"loading {raw}: {exc}") from None
    return LockEntry(raw, commit, digest, url)


def _is_git(folder: Path) -> bool:
    """A working tree (``.git`` in it) or a bare repository (``HEAD`` and ``objects/``); a
    plain folder that merely sits inside some repository is a folder source."""
    return (folder / ".git").exists() or ((folder / "HEAD").is_file() and (folder / "objects").is_dir())


def _git(args: list[str], cwd: str | None = None, check: bool = True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_LFS_SKIP_SMUDGE="1")
    try:
        result = run_process(["git", *args], cwd=cwd, env=env, timeout=GIT_TIMEOUT,
                             max_stdout=1 << 30, max_stderr=1 << 16)
    except ProcessStartError as exc:
        raise WazaError(f"waza get needs git: {exc}") from None
    if result.overflowed:
        raise WazaError(f"git {args[0]} wrote more than waza get reads (1 GiB)")
    if check and result.returncode != 0:
        text = " ".join(result.stderr_text().split())[:500]
        why = f"timed out after {GIT_TIMEOUT:.0f}s" if result.timed_out else (text or f"exit code {result.returncode}")
        raise WazaError(f"git {args[0]} failed: {why}")
    return result


def _module_dir(root: Path, ref: refs.Ref, commit: str) -> Path:
    folder = root / ref.host / ref.owner / ref.repo / commit
    if not folder.resolve().is_relative_to(root.resolve()):
        raise WazaError(f"module path {folder} escapes {root}")
    return folder


def _from_git(ref: refs.Ref, url: str, root: Path) -> tuple[str, Path]:
    with tempfile.TemporaryDirectory(prefix=".mirror-", dir=root) as tmp:
        mirror = os.path.join(tmp, "repo.git")
        try:
            _git(["clone", "--quiet", "--mirror", "--", url, mirror])
        except WazaError as exc:
            raise WazaError(f"resolving {ref.raw}: cannot fetch {url}: {exc}") from None
        found = _git(["--git-dir", mirror, "rev-parse", "--verify", "--quiet", "--end-of-options",
                      f"{ref.version}^{{commit}}"], check=False)
        commit = found.stdout.decode().strip() if found.returncode == 0 else ""
        if not commit:
            raise WazaError(f"resolving {ref.raw}: version {ref.version!r} is not a tag, branch or commit of {url}")
        target = _module_dir(root, ref, commit)
        fresh = os.path.join(tmp, "tree")
        os.mkdir(fresh)
        archive = _git(["--git-dir", mirror, "archive", "--format=tar", commit])
        _untar(archive.stdout, fresh)
        _install(Path(fresh), target)
    return commit, target


def _untar(data: bytes, dest: str) -> None:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")  # no absolute paths, no '..', no device files
        else:  # Python 3.11.0-3.11.3 has no extraction filters: the same refusals, made here
            tar.extractall(dest, members=_data_members(tar, dest))  # noqa: S202  # checked


def _data_members(tar: tarfile.TarFile, dest: str) -> list[tarfile.TarInfo]:
    """The members of ``tar`` as the ``data`` extraction filter lets them through (Python
    3.11.4 and later): a name or link that is absolute or leaves ``dest``, a device or a FIFO is
    refused (a WazaError naming it); setuid, setgid, sticky and write-for-others bits are
    dropped."""
    root = os.path.realpath(dest)
    out = []
    for member in tar.getmembers():
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise WazaError(f"the module's archive holds {member.name!r}, which is not a file, folder or link")
        _inside(root, member.name, member.name)
        if member.issym():
            _inside(root, os.path.join(os.path.dirname(member.name), member.linkname), member.name)
        elif member.islnk():
            _inside(root, member.linkname, member.name)
        if member.isfile() or member.islnk():  # the filter's modes: no high bits, no write for others
            mode = member.mode & 0o755
            member.mode = (mode if mode & 0o100 else mode & ~0o111) | 0o600
        elif member.isdir():
            member.mode = 0o755
        out.append(member)
    return out


def _inside(root: str, name: str, member: str) -> None:
    path = os.path.realpath(os.path.join(root, name))
    if os.path.isabs(name) or not (path == root or path.startswith(root + os.sep)):
        raise WazaError(f"the module's archive holds {member!r}, which leads outside its folder")


def _from_folder(ref: refs.Ref, folder: Path, root: Path) -> tuple[str, Path, str]:
    with tempfile.TemporaryDirectory(prefix=".extract-", dir=root) as tmp:
        fresh = Path(tmp) / "tree"
        shutil.copytree(folder, fresh, symlinks=False, ignore=shutil.ignore_patterns(".git"))
        digest = refs.digest_directory(fresh)
        commit = hashlib.sha1(digest.encode()).hexdigest()
        target = _module_dir(root, ref, commit)
        _install(fresh, target)
    return commit, target, str(folder)


def _install(fresh: Path, target: Path) -> None:
    """Move an unpacked module into place; an existing cache folder must hold the same files."""
    if target.exists():
        if not target.is_dir():
            raise WazaError(f"cache path {target} exists and is not a directory")
        if refs.digest_directory(target) != refs.digest_directory(fresh):
            raise WazaError(f"the module cache {target} differs from the module's content (was it edited?); "
                            "remove that folder and run waza get again")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(fresh, target)
    except OSError:
        if not target.is_dir():  # another waza get put it there first: that one is checked next time
            raise


def lock_text(entries: list[LockEntry]) -> str:
    """``waza.lock`` as waza (Go) writes it (YAML, ``schema_version: 1``, entries sorted by ref)."""
    lines = ["schema_version: 1", "graders:" if entries else "graders: []"]
    for e in sorted(entries, key=lambda e: e.ref):
        lines.append(f"    - ref: {_scalar(e.ref)}")
        for key in ("commit", "digest", "url"):
            lines.append(f"      {key}: {_scalar(getattr(e, key))}")
    return "\n".join(lines) + "\n"


def _scalar(value: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./][A-Za-z0-9_./@#:+~-]*", value) and " #" not in value:
        return value
    return json.dumps(value)


def write_lock(path: Path, entries: list[LockEntry]) -> None:
    write_file(path, lock_text(entries).encode("utf-8"))


def run_get(target: str, sources: dict[str, str], cwd: Path) -> tuple[int, Path]:
    """``waza get TARGET``: (refs resolved, lock path)."""
    is_ref = True
    try:
        refs.Ref(target)
    except refs.RefError:
        is_ref = False
    if not is_ref and Path(target).suffix.lower() in (".yaml", ".yml"):
        eval_file = Path(target)
        raws = refs_of_eval(eval_file)
        if not raws:
            raise WazaError(f"no remote grader refs found in {display_path(eval_file)}")
        lock_path = eval_file.parent / refs.LOCKFILE
    elif is_ref:
        raws, lock_path = [target], cwd / refs.LOCKFILE
    else:
        raise WazaError(f"{target!r} is neither an eval YAML file nor a grader ref "
                        "(<host>/<owner>/<repo>[/path][#export]@<version>)")
    entries = [resolve(raw, sources) for raw in raws]
    write_lock(lock_path, entries)
    return len(entries), lock_path


def lock_entries(doc: Any) -> list[LockEntry]:
    """The entries of a parsed lock (for tests and tools)."""
    return [LockEntry(g["ref"], g["commit"], g["digest"], g["url"]) for g in (doc or {}).get("graders") or []]
