"""What travels to Ray workers: the suite folder and its fixtures, once per node.

The driver packs one tar archive (:func:`make_bundle`): the suite folder, the
fixtures folder given with ``--context-dir`` when it lies outside the suite folder,
skill folders given by the run (the optimizer's ``skill-directory`` candidates), and
the project file ``.waza.yaml`` the driver found. It goes into Ray's object store
once; the first worker of each node fetches it and unpacks it under a lock
(:func:`unpack_once`) into ``$TMPDIR/waza-ray-<uid>/<digest>/``, and every other
worker of that node uses that copy. The last worker of a node to close removes it
(:func:`release`).

Paths are rewritten, not guessed: :class:`WorkerSpec` maps each packed driver folder
to its place in the unpacked tree, and rebuilds the :class:`SuiteRecipe` with the
worker's paths. A worker's working directory is the driver's, relative to the suite
folder (so a program grader's ``args: [graders/check.py]`` finds its script), when
the driver ran from the suite folder, a parent or a subfolder of it; otherwise the
suite folder.
Anything else a run reads (an absolute path, a file outside these folders) must be
at the same path on every worker: a shared file system or the container image.

Only folders, regular files and relative symbolic links that stay inside their
folder are packed; other links, FIFOs, sockets and devices are left out.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from waza_core.errors import WazaError
from waza_core.run.recipe import SuiteRecipe

#: the largest bundle the driver ships (bytes); a bigger suite folder is exit 2
MAX_BUNDLE_BYTES = 512 * 1024 * 1024
#: the unpacked tree's top folder, inside the digest's folder
TREE = "tree"


@attrs.frozen
class WorkerSpec:
    """Everything a Ray worker needs besides the bundle's bytes: plain, picklable values."""

    digest: str
    recipe: SuiteRecipe  # with the driver's paths
    #: (driver folder or file, its path in the unpacked tree), most specific first
    mapping: tuple[tuple[str, str], ...]
    cwd: str  # the worker's working directory, relative to the unpacked tree
    #: variables set in the worker process: the executor's and graders' allow-lists, plugin settings
    environment: tuple[tuple[str, str], ...] = ()

    def local_path(self, tree: Path, path: str) -> str:
        """``path`` of the driver as the worker sees it: inside the unpacked tree when packed."""
        for src, rel in self.mapping:
            if path == src or path.startswith(src.rstrip(os.sep) + os.sep):
                return str(tree / rel / os.path.relpath(path, src)) if path != src else str(tree / rel)
        return path

    def local_recipe(self, tree: Path) -> SuiteRecipe:
        s = self.recipe.settings
        settings = attrs.evolve(
            s,
            context_dir=self.local_path(tree, s.context_dir) if s.context_dir is not None else None,
            skill_directories=(tuple(self.local_path(tree, d) for d in s.skill_directories)
                               if s.skill_directories is not None else None),
        )
        return attrs.evolve(self.recipe, suite_file=self.local_path(tree, self.recipe.suite_file), settings=settings)


@attrs.frozen
class Bundle:
    data: bytes
    spec: WorkerSpec


def make_bundle(recipe: SuiteRecipe, environment: dict[str, str], cwd: str | None = None,
                project_file: Path | None = None) -> Bundle:
    """Pack what the runs of ``recipe`` read; the bundle and the spec workers rebuild from."""
    cwd = os.path.abspath(cwd or os.getcwd())
    suite_file = os.path.abspath(recipe.suite_file)
    suite_dir = os.path.dirname(suite_file)
    # the suite folder keeps its place below the driver's working directory when it has one
    anchor = cwd if _under(suite_dir, cwd) else suite_dir
    suite_rel = os.path.normpath(os.path.join("work", os.path.relpath(suite_dir, anchor)))
    folders: list[tuple[str, str]] = [(suite_dir, suite_rel)]
    s = recipe.settings
    extra = ([("context", s.context_dir)] if s.context_dir is not None else []) + \
        [(f"skills/{i}", d) for i, d in enumerate(s.skill_directories or ())]
    for name, folder in extra:
        folder = os.path.abspath(folder)
        if os.path.isdir(folder) and not any(_under(folder, src) for src, _ in folders):
            folders.append((folder, name))
    files: list[tuple[str, str]] = []
    if project_file is not None and project_file.is_file():
        files.append((str(project_file.absolute()), "work/.waza.yaml"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        size = 0
        for src, arc in folders:
            for path, name in _walk(src, arc):
                size += _add(tar, path, name, arc)
                if size > MAX_BUNDLE_BYTES:
                    raise WazaError(f"the files to ship to the Ray workers ({src} and the folders the run reads) "
                                    f"are larger than {MAX_BUNDLE_BYTES // 2**20} MB; move big files out of the "
                                    "suite folder, or put them at the same path on every worker")
        for path, name in files:
            _add(tar, path, name, name)
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()[:32]
    mapping = tuple(sorted([(src, rel) for src, rel in folders], key=lambda m: -len(m[0])))
    # the driver's folder when it was shipped (the suite folder, one of its parents or
    # subfolders), else the suite folder
    work_cwd = os.path.normpath(os.path.join("work", os.path.relpath(cwd, anchor))) if _under(cwd, anchor) \
        else suite_rel
    spec = WorkerSpec(digest=digest, recipe=attrs.evolve(recipe, suite_file=suite_file), mapping=mapping,
                      cwd=work_cwd, environment=tuple(sorted(environment.items())))
    return Bundle(data, spec)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _walk(root: str, arc: str) -> Iterator[tuple[str, str]]:
    """(path, archive name) of ``root`` and everything below it, sorted, links not followed."""
    yield root, arc
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        for name in sorted(dirnames) + sorted(filenames):
            path = os.path.join(dirpath, name)
            yield path, os.path.normpath(os.path.join(arc, rel, name))


def _add(tar: tarfile.TarFile, path: str, name: str, top: str) -> int:
    """Add one entry (a folder, a regular file, a link that stays inside ``top``); its size."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise WazaError(f"cannot read {path} to ship it to the Ray workers: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        if os.path.isabs(target) or not _under(os.path.normpath(os.path.join(os.path.dirname(name), target)), top):
            return 0
    elif not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return 0
    info = tar.gettarinfo(path, arcname=name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if info.isreg():
        try:
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
        except OSError as exc:
            raise WazaError(f"cannot read {path} to ship it to the Ray workers: {exc.strerror}") from None
        return info.size
    tar.addfile(info)
    return 0


# -- the worker side ----------------------------------------------------------------------


def cache_root() -> Path:
    """``$TMPDIR/waza-ray-<uid>``: private (0700) to this user; refused when it is not."""
    base = Path(tempfile.gettempdir()) / f"waza-ray-{os.getuid()}"
    try:
        base.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise WazaError(f"{base} must be a folder of this user with mode 0700 (it holds the unpacked suites)")
    return base


class _Locked:
    """An exclusive ``flock`` on ``<digest>.lock`` for unpacking and counting users."""

    def __init__(self, base: Path, digest: str) -> None:
        self.fd = os.open(base / f"{digest}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __enter__(self) -> _Locked:
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _users(base: Path, digest: str) -> Path:
    """``<digest>.users/``: one empty file per worker process using the tree, named by its pid."""
    path = base / f"{digest}.users"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _alive(pid: str) -> bool:
    """Whether worker ``pid`` still runs. A zombie does not: a worker killed with its node
    stays one while nobody reaps it (its new parent may be a subreaper that never waits)."""
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the signal test is all there is
    return state not in (b"Z", b"X")


def unpack_once(digest: str, fetch: Callable[[], bytes]) -> Path:
    """The unpacked tree of bundle ``digest`` on this node; ``fetch()`` (the object
    store read) is called only by the first worker of the node. Counts one user."""
    base = cache_root()
    root = base / digest
    with _Locked(base, digest):
        if not (root / ".complete").exists():
            shutil.rmtree(root, ignore_errors=True)  # a half-unpacked tree of a killed worker
            tmp = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=base))
            try:
                with tarfile.open(fileobj=io.BytesIO(fetch()), mode="r:") as tar:
                    if hasattr(tarfile, "data_filter"):
                        tar.extractall(tmp / TREE, filter="data")
                    else:  # pragma: no cover - Python 3.11.0-3.11.3: names were checked when packed
                        tar.extractall(tmp / TREE)  # noqa: S202
                (tmp / ".complete").write_text(digest)
                os.rename(tmp, root)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        (_users(base, digest) / str(os.getpid())).touch()
    return root / TREE


def release(digest: str) -> None:
    """This worker is done with bundle ``digest``; the last one removes the unpacked tree.

    Workers that died without saying so (a killed process) are recognised by their pid
    no longer running, so a lost worker does not keep the tree for ever."""
    _remove_if_unused(cache_root(), digest, os.getpid())


def _remove_if_unused(base: Path, digest: str, leaving: int | None = None) -> bool:
    """Forget the users of ``digest`` that are gone (and ``leaving``); remove the tree
    when none is left. True when it is gone."""
    with _Locked(base, digest):
        users = _users(base, digest)
        for entry in os.listdir(users):
            if entry == str(leaving) or not _alive(entry):
                try:
                    os.unlink(users / entry)
                except OSError:
                    pass
        if os.listdir(users):
            return False
        shutil.rmtree(base / digest, ignore_errors=True)
        for debris in base.glob(f".{digest}-*"):  # a worker killed while unpacking (the lock is ours now)
            shutil.rmtree(debris, ignore_errors=True)
        os.rmdir(users)
    return True


def sweep(digest: str, wait_seconds: float) -> bool:
    """Remove this node's tree of ``digest`` once its users are all gone, waiting up to
    ``wait_seconds`` for them to die: the driver runs it on every node after it killed
    workers (a killed worker never releases, and may still be dying when the last one
    that did looked). A tree some live worker still uses is left. True when removed."""
    base = Path(tempfile.gettempdir()) / f"waza-ray-{os.getuid()}"
    if not (base / f"{digest}.users").is_dir():
        return True  # nothing unpacked on this node (or already removed)
    deadline = time.monotonic() + wait_seconds
    while not _remove_if_unused(cache_root(), digest):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True
