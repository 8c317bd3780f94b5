"""The pin's folder digest: content-sensitive, order-independent, symlinks refused."""

from __future__ import annotations

import os

import pytest

from waza_core.optimize.failures import OptimizeFailure
from waza_core.optimize.pin import DirDigest


def tree(root, files):
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    return root


def test_digest_follows_content_and_names(tmp_path):
    a = DirDigest(tree(tmp_path / "a", {"x.md": "1", "sub/y.md": "2"})).compute()
    assert a == DirDigest(tree(tmp_path / "b", {"sub/y.md": "2", "x.md": "1"})).compute()
    assert a != DirDigest(tree(tmp_path / "c", {"x.md": "1", "sub/y.md": "3"})).compute()
    assert a != DirDigest(tree(tmp_path / "d", {"x.md": "1", "sub/z.md": "2"})).compute()


def test_an_edit_is_seen_by_a_cached_digest(tmp_path):
    root = tree(tmp_path / "a", {"x.md": "1"})
    d = DirDigest(root)
    before = d.compute()
    (root / "x.md").write_text("22")
    assert d.compute() != before


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_a_symlink_appearing_is_suite_changed(tmp_path, kind):
    root = tree(tmp_path / "a", {"x.md": "1", "sub/y.md": "2"})
    d = DirDigest(root)
    d.compute()
    os.symlink(root / ("x.md" if kind == "file" else "sub"), root / "link")
    with pytest.raises(OptimizeFailure) as exc:
        d.compute()
    assert exc.value.category == "suite_changed" and "link" in str(exc.value)
