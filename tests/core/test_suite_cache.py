"""The suite cache makes loading faster, never different."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.errors import SuiteError
from waza_core.plugins import build_plugin_manager
from waza_core.suite.load import load_suite

TASK = "id: t1\ninputs: {prompt: hello}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("WAZA_CACHE_DIR", str(d))
    monkeypatch.delenv("WAZA_NO_CACHE", raising=False)
    return d


def cached_files(cache):
    (f,) = list((cache / "suites").iterdir())
    return json.loads(f.read_text())["files"]


def test_second_load_comes_from_the_cache_and_is_identical(make_suite, registry, cache, monkeypatch):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    assert len(cached_files(cache)) == 2  # eval.yaml and the task
    import waza_core.suite.load as suite_mod

    def boom(*a, **k):
        raise AssertionError("parsed again despite the cache")

    monkeypatch.setattr(suite_mod, "_read_yaml", boom)
    second = load_suite(path, registry)
    assert second == first
    assert second.tasks[0].graders == first.tasks[0].graders


def test_cache_files_are_private(make_suite, registry, cache):
    old_umask = os.umask(0o022)
    try:
        load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK}), registry)
    finally:
        os.umask(old_umask)
    (f,) = list((cache / "suites").iterdir())
    assert f.stat().st_mode & 0o777 == 0o600
    assert (cache / "suites").stat().st_mode & 0o777 == 0o700
    assert cache.stat().st_mode & 0o777 == 0o700  # the folder waza made, as docs/cli.md says


def test_an_existing_cache_folder_keeps_its_mode(make_suite, registry, cache):
    cache.mkdir(mode=0o755)
    os.chmod(cache, 0o755)
    load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK}), registry)
    assert cache.stat().st_mode & 0o777 == 0o755 and len(cached_files(cache)) == 2


def test_an_edited_file_is_read_again(make_suite, registry, cache):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    load_suite(path, registry)
    time.sleep(0.01)
    (path.parent / "tasks" / "a.yaml").write_text(TASK.replace("hello", "changed"))
    assert load_suite(path, registry).tasks[0].prompt == "changed"
    (path.parent / "tasks" / "a.yaml").write_text(TASK + "enabled: maybe\n")
    with pytest.raises(SuiteError, match="enabled: expected boolean"):
        load_suite(path, registry)


def test_files_with_problems_are_never_cached(make_suite, registry, cache):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK, "tasks/b.yaml": "id: b\ninputs: {prompt: x}\nenabled: 1\n"})
    for _ in range(2):
        with pytest.raises(SuiteError, match="enabled: expected boolean"):
            load_suite(path, registry)
    assert not any(k.endswith("b.yaml") for k in cached_files(cache))


def test_a_different_plugin_set_misses_the_cache(make_suite, registry, cache):
    task = TASK.replace("type: text", "type: flip")
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": task})
    with_plugin = build_plugin_manager(["tests.fixture_plugins.test_graders"])[1]
    load_suite(path, with_plugin)
    with pytest.raises(SuiteError, match="unknown grader type 'flip'"):
        load_suite(path, registry)


def test_a_corrupt_cache_is_ignored(make_suite, registry, cache):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    f.write_text('{"fingerprint": ')
    assert load_suite(path, registry).tasks[0].prompt == "hello"


def test_cache_can_be_turned_off(make_suite, registry, cache, monkeypatch):
    monkeypatch.setenv("WAZA_NO_CACHE", "1")
    load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK}), registry)
    assert not cache.exists()


def test_unwritable_cache_dir_does_not_fail_loading(make_suite, registry, tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setenv("WAZA_CACHE_DIR", str(blocker))
    assert load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK}), registry).tasks[0].id == "t1"
    assert os.path.isfile(blocker)


@pytest.mark.parametrize("context", ["{due: 2026-01-02}", "{1: one}", "{x: .inf}"])
def test_documents_json_cannot_round_trip_are_not_cached(make_suite, registry, cache, context):
    task = f"id: t1\ninputs:\n  prompt: p\n  context: {context}\n"
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": task})
    first = load_suite(path, registry)
    assert not any(k.endswith("a.yaml") for k in cached_files(cache))
    assert load_suite(path, registry).tasks[0].context == first.tasks[0].context
