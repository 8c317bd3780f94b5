"""inputs.repos: pinned checkouts from real git repositories that never write into the source."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from waza_core.errors import WazaError
from waza_core.mocks import repos
from waza_core.mocks.spec import parse_repos

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def source(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    (src / "app.py").write_text("v1\n")
    git(src, "add", ".")
    git(src, "commit", "-qm", "one")
    git(src, "tag", "v1")
    (src / "app.py").write_text("v2\n")
    git(src, "commit", "-qam", "two")
    return src


def fingerprint(src: Path) -> str:
    """Every file under .git with its content: any write into the source changes it."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(src / ".git"):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            digest.update(str(path.relative_to(src)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def spec(entries):
    return parse_repos(entries)


def test_each_ref_kind_is_pinned_to_a_commit(source):
    head = git(source, "rev-parse", "HEAD")
    first = git(source, "rev-parse", "v1")
    pinned = repos.pin(spec([{"source": str(source), "dest": "a"},
                             {"source": str(source), "dest": "b", "commit": "main"},
                             {"source": str(source), "dest": "c", "commit": "v1"},
                             {"source": str(source), "dest": "d", "commit": first[:10]}]), source, "t")
    assert [p.commit for p in pinned] == [head, head, first, first]


def test_a_relative_source_is_taken_from_the_eval_folder(source):
    pinned = repos.pin(spec([{"source": "src", "dest": "a"}]), source.parent, "t")
    assert pinned[0].source == str(source)


def test_a_ref_that_does_not_exist_is_a_clear_error(source):
    with pytest.raises(WazaError, match=r"inputs.repos\[0\].commit: .* has no commit, branch or tag 'nope'"):
        repos.pin(spec([{"source": str(source), "dest": "a", "commit": "nope"}]), source, "tasks/t.yaml")


def test_a_ref_that_looks_like_an_option_is_only_a_ref(source):
    with pytest.raises(WazaError, match="has no commit"):
        repos.pin(spec([{"source": str(source), "dest": "a", "commit": "--output=/tmp/x"}]), source, "t")


def test_a_source_that_is_not_a_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(WazaError, match="is not a git repository"):
        repos.pin(spec([{"source": "plain", "dest": "a"}]), tmp_path, "t")
    with pytest.raises(WazaError, match="no such folder"):
        repos.pin(spec([{"source": "missing", "dest": "a"}]), tmp_path, "t")


def test_checkout_is_the_pinned_commit_and_the_source_is_untouched(source, tmp_path):
    pinned = repos.pin(spec([{"source": str(source), "dest": "repo/here", "commit": "v1"}]), source, "t")
    before = fingerprint(source)
    ws = tmp_path / "ws"
    ws.mkdir()
    repos.materialize(pinned, str(ws))
    checkout = ws / "repo" / "here"
    assert (checkout / "app.py").read_text() == "v1\n"
    assert git(checkout, "rev-parse", "HEAD") == pinned[0].commit
    assert git(checkout, "status", "--porcelain") == ""
    # the agent commits, gc's and tries to push: the source never changes
    (checkout / "new.txt").write_text("x")
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "agent")
    git(checkout, "gc", "-q")
    push = subprocess.run(["git", "push", "origin", "HEAD:refs/heads/agent"], cwd=checkout, env=GIT_ENV,
                          capture_output=True)
    assert push.returncode != 0
    assert fingerprint(source) == before
    assert not (source / ".git" / "worktrees").exists()


def test_a_moving_branch_does_not_change_later_runs(source, tmp_path):
    pinned = repos.pin(spec([{"source": str(source), "dest": "r", "commit": "main"}]), source, "t")
    (source / "app.py").write_text("v3\n")
    git(source, "commit", "-qam", "three")
    ws = tmp_path / "ws"
    ws.mkdir()
    repos.materialize(pinned, str(ws))
    assert (ws / "r" / "app.py").read_text() == "v2\n"


def test_dest_that_already_exists_is_refused(source, tmp_path):
    pinned = repos.pin(spec([{"source": str(source), "dest": "taken"}]), source, "t")
    ws = tmp_path / "ws"
    (ws / "taken").mkdir(parents=True)
    with pytest.raises(WazaError, match="already exists in the workspace"):
        repos.materialize(pinned, str(ws))


def test_dest_behind_a_symlink_out_of_the_workspace_is_refused(source, tmp_path):
    pinned = repos.pin(spec([{"source": str(source), "dest": "link/r"}]), source, "t")
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    with pytest.raises(WazaError, match="leaves"):
        repos.materialize(pinned, str(ws))
    assert os.listdir(outside) == []


def test_git_variables_of_the_caller_do_not_redirect_the_checkout(source, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(source / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(source))
    pinned = repos.pin(spec([{"source": str(source), "dest": "r", "commit": "v1"}]), source, "t")
    ws = tmp_path / "ws"
    ws.mkdir()
    before = (source / "app.py").read_text()
    repos.materialize(pinned, str(ws))
    assert (source / "app.py").read_text() == before
    assert (ws / "r" / "app.py").read_text() == "v1\n"
