"""``inputs.repos``: a checkout of a local git repository in each run's workspace.

waza (Go) runs ``git worktree add`` in the source repository, which writes into its
``.git`` (``worktrees/``, and a ``gc`` there can drop objects a leaked worktree
needs). waza for Python never writes into the source: each run gets
``git clone --shared --no-checkout`` (objects are borrowed read-only through
``objects/info/alternates``, nothing is copied) and a detached checkout of the pinned
commit. The ref is resolved to a commit once, before the first run, so every run of
a suite sees the same tree even when the branch moves meanwhile, and a ref that does
not exist is a config error (exit 2) naming it. Pushing from the checkout is
disabled (its ``origin`` keeps the source only for fetching and ``origin/*`` refs).
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from waza_core.errors import WazaError
from waza_core.mocks.spec import RepoSpec
from waza_core.paths import PathEscape, display_path, resolve_inside

GIT_TIMEOUT = 600.0
NO_PUSH_URL = "waza-no-push://the-source-repository-is-read-only"


@attrs.frozen
class PinnedRepo:
    """An ``inputs.repos`` entry with its source found and its ref resolved."""

    source: str  # absolute path of the source repository (or a folder inside it)
    commit: str  # full object name of the commit to check out
    dest: str  # relative path in the workspace, already cleaned
    ref: str  # the ref as written (``HEAD`` when none was)


def git_env() -> dict[str, str]:
    """waza's environment without ``GIT_*`` (a ``GIT_DIR`` from a hook would redirect
    every command), never prompting, and without Git LFS downloads."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_LFS_SKIP_SMUDGE="1")
    return env


def _git(args: list[str], cwd: str | None = None, cancel=None):
    # deferred: waza_core.procs adds ~7.7 ms to importing this module
    from waza_core.procs import ProcessStartError
    from waza_core.procs import run as run_process

    try:
        return run_process(["git", *args], cwd=cwd, env=git_env(), timeout=GIT_TIMEOUT, cancel=cancel,
                           max_stdout=1 << 16, max_stderr=1 << 16)
    except ProcessStartError as exc:
        raise WazaError(f"inputs.repos needs git: {exc}") from None


def _why(result) -> str:
    text = " ".join(result.stderr_text().split())
    if result.timed_out:
        return f"git timed out after {GIT_TIMEOUT:.0f}s"
    return text[:500] or f"git exited with code {result.returncode}"


def pin(repos: tuple[RepoSpec, ...], base_dir: Path, where: str) -> tuple[PinnedRepo, ...]:
    """Find each source and resolve its ref to a commit; every problem is a WazaError."""
    out = []
    for i, repo in enumerate(repos):
        at = f"{where}: inputs.repos[{i}]"
        source = Path(repo.source).expanduser()
        source = source if source.is_absolute() else (base_dir / source)
        source = source.absolute()
        if not source.is_dir():
            raise WazaError(f"{at}.source {repo.source!r}: no such folder {display_path(source)}")
        top = _git(["rev-parse", "--git-dir"], cwd=str(source))
        if top.returncode != 0:
            raise WazaError(f"{at}.source {repo.source!r}: {display_path(source)} is not a git repository")
        ref = repo.commit or "HEAD"
        found = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], cwd=str(source))
        sha = found.stdout_text().strip()
        if found.returncode != 0 or not sha:
            what = "has no commit yet" if repo.commit is None else f"has no commit, branch or tag {ref!r}"
            raise WazaError(f"{at}.commit: the repository {display_path(source)} {what}")
        out.append(PinnedRepo(source=str(source), commit=sha, dest=repo.dest, ref=ref))
    return tuple(out)


def materialize(pinned: tuple[PinnedRepo, ...], workspace: str, cancel=None) -> None:
    """Check out each repository under ``workspace``; ``dest`` must not exist yet."""

    for i, repo in enumerate(pinned):
        at = f"inputs.repos[{i}] ({repo.ref} of {display_path(repo.source)})"
        try:
            target = resolve_inside(workspace, repo.dest)
        except PathEscape as exc:
            raise WazaError(f"{at}: dest {repo.dest!r}: {exc}") from None
        if os.path.lexists(target):
            raise WazaError(f"{at}: dest {repo.dest!r} already exists in the workspace (put there by inputs.files "
                            "or the context fixture); choose a folder that does not exist")
        target.parent.mkdir(parents=True, exist_ok=True)
        steps = (
            (["clone", "--quiet", "--shared", "--no-checkout", "--", repo.source, str(target)], None),
            (["checkout", "--quiet", "--detach", repo.commit], str(target)),
            (["config", "remote.origin.pushurl", NO_PUSH_URL], str(target)),
        )
        for args, cwd in steps:
            result = _git(args, cwd=cwd, cancel=cancel)
            if result.cancelled:
                raise WazaError(f"{at}: cancelled (waza is shutting down)")
            if result.returncode != 0:
                raise WazaError(f"{at}: git {args[0]} failed: {_why(result)}")
