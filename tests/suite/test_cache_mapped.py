"""A large suite cache file is mapped, not read, and the pages a load has read are dropped as
it goes; the mapping is let go when the load ends. A file someone else may write is read, as
before (whoever can write it could truncate it under the mapping). Every other behaviour of
the cache runs mapped too: ``how_read`` in tests/suite/test_suite_cache.py and test_seal.py."""

from __future__ import annotations

import mmap
import os

import pytest

from tests.conftest import BASIC_EVAL
from waza_core import untrusted
from waza_core.suite import cache as cache_mod
from waza_core.suite.load import load_suite

pytestmark = pytest.mark.skipif(not untrusted.can_map(), reason="this platform cannot drop the pages of a mapping")

TASK = "id: {i}\ninputs: {{prompt: 'say item {i} {pad}'}}\ngraders: [{{type: text, name: g, config: {{contains: [x]}}}}]\n"




@pytest.fixture
def seen(monkeypatch):
    """What each SuiteCache of a load read the file as, and how far it dropped pages."""
    got: list[tuple[type, int]] = []
    close = cache_mod.SuiteCache.close

    def spying(self):
        got.append((type(self._buf), self._dropped))
        close(self)

    monkeypatch.setattr(cache_mod.SuiteCache, "close", spying)
    return got


def _suite(make_suite, n: int = 40):
    # ~300 B a line: 40 tasks make a cache file of three pages and more
    return make_suite(BASIC_EVAL, {f"tasks/t{i:02}.yaml": TASK.format(i=f"t{i:02}", pad="p" * 200) for i in range(n)})


def _mapped_files() -> str:
    with open("/proc/self/maps") as fh:
        return fh.read()


def test_a_large_cache_file_is_mapped_its_read_pages_dropped_and_let_go(make_suite, registry, cache, seen,
                                                                         monkeypatch):
    monkeypatch.setattr(cache_mod, "MAP_FROM_BYTES", 4096)
    monkeypatch.setattr(cache_mod, "DROP_EVERY_BYTES", 1)
    path = _suite(make_suite)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    assert f.stat().st_size > 3 * mmap.PAGESIZE
    warm = load_suite(path, registry)
    assert warm == first and all(t.raw_json is not None for t in warm.tasks)
    assert seen[0][0] is bytes  # no file yet
    kind, dropped = seen[1]
    assert kind is mmap.mmap and dropped >= 2 * mmap.PAGESIZE and dropped % mmap.PAGESIZE == 0
    if os.path.exists("/proc/self/maps"):
        assert str(f) not in _mapped_files()  # let go when the load ended


def test_a_small_cache_file_is_read(make_suite, registry, cache, seen):
    path = _suite(make_suite, 2)
    load_suite(path, registry)
    load_suite(path, registry)
    assert [kind for kind, _ in seen] == [bytes, bytes]  # below MAP_FROM_BYTES


@pytest.mark.parametrize("mode", [0o620, 0o602])
def test_a_cache_file_others_may_write_is_read_not_mapped(make_suite, registry, cache, seen, monkeypatch, mode):
    monkeypatch.setattr(cache_mod, "MAP_FROM_BYTES", 1)
    path = _suite(make_suite, 3)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    os.chmod(f, mode)
    assert load_suite(path, registry) == first
    assert seen[1][0] is bytes


def test_read_or_map_keeps_the_limit_and_refuses_what_read_bytes_refuses(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    mapped = untrusted.read_or_map(big, limit=10_000, map_from=4096)
    try:
        assert isinstance(mapped, mmap.mmap) and mapped[:3] == b"xxx" and len(mapped) == 5000
    finally:
        mapped.close()
    assert untrusted.read_or_map(big, limit=10_000, map_from=8192) == b"x" * 5000
    with pytest.raises(untrusted.UntrustedInput, match="more than the 4999 allowed"):
        untrusted.read_or_map(big, limit=4999, map_from=1)
    link = tmp_path / "link"
    link.symlink_to(big)
    with pytest.raises(untrusted.UntrustedInput, match="symbolic link"):
        untrusted.read_or_map(link, limit=10_000, map_from=1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(untrusted.UntrustedInput, match="not a regular file"):
        untrusted.read_or_map(fifo, limit=10_000, map_from=1)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert untrusted.read_or_map(empty, limit=10, map_from=0) == b""  # nothing to map: read
