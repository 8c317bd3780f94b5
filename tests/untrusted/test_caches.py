"""Caches are input someone else could have shaped (docs/safety.md): a result-cache entry
or a suite-cache line that is a link, a FIFO, huge or of the wrong types is ignored with a
warning and run (or read) again; writing an entry never follows a link out."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.conftest import BASIC_EVAL
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.run.result_cache import MAX_ENTRY_BYTES, ResultCache

KEY = "a" * 64
TASK = """
id: t1
inputs:
  prompt: hello
graders:
  - type: text
    name: t
    config: {contains: ["hello"]}
"""


def _entry(run):
    return json.dumps({"kind": "waza.run-cache", "version": 1, "key": KEY, "run": run})


@pytest.mark.parametrize("run, said", [
    ({"status": "passed", "run_number": True}, "run_number"),
    ({"status": "sideways"}, "is not a run status"),
    ({"status": "passed", "duration_ms": "fast"}, "duration_ms"),
    ({"status": "passed", "validations": {"g": {"score": "high"}}}, "score"),
    ('{"status": "passed", "duration_ms": NaN}', "NaN"),
    ('{"status": "passed", "duration_ms": 1' + "0" * 30 + "}", "out of range"),
    ({"status": 5}, "status"),
])
def test_wrong_typed_entries_are_ignored_with_a_warning(tmp_path, run, said):
    warnings = []
    cache = ResultCache(tmp_path, warn=warnings.append)
    text = _entry({}).replace("{}", run) if isinstance(run, str) else _entry(run)
    (tmp_path / f"{KEY}.json").write_text(text)
    assert cache.get(KEY) is None
    assert "ignoring corrupt entry" in warnings[-1] and said in warnings[-1] and "running it again" in warnings[-1]


def test_links_fifos_and_huge_entries_are_ignored(tmp_path):
    warnings = []
    cache = ResultCache(tmp_path / "c", warn=warnings.append)
    (tmp_path / "c").mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text(_entry({"status": "passed"}))
    entry = tmp_path / "c" / f"{KEY}.json"
    entry.symlink_to(outside)
    assert cache.get(KEY) is None and "a symbolic link" in warnings[-1]
    entry.unlink()
    os.mkfifo(entry)
    assert cache.get(KEY) is None and "a FIFO" in warnings[-1]  # and it did not hang
    entry.unlink()
    with open(entry, "wb") as fh:
        fh.truncate(MAX_ENTRY_BYTES + 1)
    assert cache.get(KEY) is None and "more than the" in warnings[-1]


def test_storing_replaces_a_planted_link_and_never_writes_or_chmods_its_target(tmp_path):
    cache = ResultCache(tmp_path / "c")
    (tmp_path / "c").mkdir()
    outside = tmp_path / "precious"
    outside.write_text("keep")
    outside.chmod(0o644)
    (tmp_path / "c" / f"{KEY}.json").symlink_to(outside)
    os.mkfifo(tmp_path / "c" / ("b" * 64 + ".json"))
    cache.put(KEY, {"status": "passed"})
    cache.put("b" * 64, {"status": "passed"})
    assert outside.read_text() == "keep" and stat.S_IMODE(outside.stat().st_mode) == 0o644
    assert not (tmp_path / "c" / f"{KEY}.json").is_symlink()
    assert cache.get(KEY) == {"status": "passed"} and cache.get("b" * 64) == {"status": "passed"}


def test_a_run_with_planted_entries_runs_them_again(make_suite, tmp_path):
    suite = make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK})
    cache = tmp_path / "cache"
    proc = run_waza("run", str(suite), "--cache", "--cache-dir", str(cache), "-o", str(tmp_path / "a.json"))
    assert proc.returncode == 0, proc.stderr
    [entry] = list(cache.iterdir())
    entry.unlink()
    os.mkfifo(entry)
    proc = run_waza("run", str(suite), "--cache", "--cache-dir", str(cache), "-o", str(tmp_path / "b.json"),
                    timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"a FIFO" in proc.stderr + proc.stdout and b"running it again" in proc.stderr + proc.stdout
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["summary"]["cached_runs"] == 0 and doc["tasks"][0]["runs"][0]["status"] == "passed"
    assert entry.is_file()  # replaced by the fresh run


def _suite_cache_file(env_dir):
    [path] = list((env_dir / "suites").iterdir())
    return path


def test_a_suite_cache_line_of_the_wrong_types_is_a_miss(make_suite, tmp_path):
    suite = make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK})
    env = {"WAZA_CACHE_DIR": str(tmp_path / "sc")}
    assert run_waza("validate", str(suite), env=env).returncode == 0
    path = _suite_cache_file(tmp_path / "sc")
    lines = path.read_bytes().split(b"\n")
    for bad in (b'{"id":5,"inputs":3,"graders":7}', b'{"id":"t1","inputs":{"prompt":1}}',
                b'{"name":5,"tasks":7}', b'{"id":"t1","inputs":{"prompt":"x"},"graders":[{"type":true}]}'):
        path.write_bytes(b"\n".join([lines[0]] + [h.partition(b"\t")[0] + b"\t" + bad if h else h
                                                  for h in lines[1:]]))
        proc = run_waza("validate", str(suite), env=env)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
        assert b"valid (1 task(s)" in proc.stdout


def test_the_suite_cache_file_planted_as_a_link_or_fifo(make_suite, tmp_path):
    suite = make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK})
    env = {"WAZA_CACHE_DIR": str(tmp_path / "sc")}
    assert run_waza("validate", str(suite), env=env).returncode == 0
    path = _suite_cache_file(tmp_path / "sc")
    path.unlink()
    outside = tmp_path / "outside"
    outside.write_text("keep")
    outside.chmod(0o644)
    path.symlink_to(outside)
    assert run_waza("validate", str(suite), env=env).returncode == 0
    assert outside.read_text() == "keep" and stat.S_IMODE(outside.stat().st_mode) == 0o644
    assert path.is_file() and not path.is_symlink()
    path.unlink()
    os.mkfifo(path)
    assert run_waza("validate", str(suite), env=env, timeout=30).returncode == 0


def test_a_warm_load_needs_no_more_memory_than_the_cache_file(make_suite, tmp_path):
    """The suite cache file (limit 1 GiB) is read in a buffer of its own size: reading it with
    ``read(limit + 1)`` asked for 1 GiB first, and under ``ulimit -v`` below that every warm
    load failed ("an input is too large to be read in the memory available")."""
    import resource
    import subprocess
    import sys

    suite = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: hi}\n"
                                    "graders:\n  - {type: text, name: g, config: {contains: [hi]}}\n"})
    env = {**os.environ, "WAZA_CACHE_DIR": str(tmp_path / "cache"), "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("WAZA_NO_CACHE", None)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (900 << 20, 900 << 20))

    written = []
    for _ in ("cold", "warm"):
        proc = subprocess.run([sys.executable, "-m", "waza_core", "validate", str(suite)], env=env,
                              capture_output=True, text=True, timeout=60, preexec_fn=limit)
        assert proc.returncode == 0, proc.stderr
        (cache_file,) = (tmp_path / "cache" / "suites").iterdir()
        written.append(cache_file.stat().st_mtime_ns)
    assert written[0] == written[1]  # the warm load read the cache (a failed read would rewrite it)
