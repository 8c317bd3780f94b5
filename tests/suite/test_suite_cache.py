"""The suite cache makes loading faster, never different."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.errors import SuiteError
from waza_core.plugins import build_plugin_manager
from waza_core.suite.cache import read_entries
from waza_core.suite.load import load_suite

TASK = "id: t1\ninputs: {prompt: hello}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n"

pytestmark = pytest.mark.usefixtures("how_read")  # every test read whole and mapped (tests/suite/conftest.py)





def cached_files(cache):
    (f,) = list((cache / "suites").iterdir())
    return read_entries(f)


def test_second_load_comes_from_the_cache_and_is_identical(make_suite, registry, cache, monkeypatch):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    assert len(cached_files(cache)) == 2  # eval.yaml and the task
    import waza_core.suite.load as suite_mod

    def boom(*a, **k):
        raise AssertionError("parsed again despite the cache")

    monkeypatch.setattr(suite_mod, "read_yaml", boom)
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


def test_the_key_imports_no_built_in_and_is_the_same_once_they_are_loaded():
    """The cache key names a built-in grader or executor by its module and the files of its
    package, not by its class: computing it imports none of them, and a load that imported
    some first (or all) gets the same key, so a warm load stays warm. In a new process: this
    one has imported them all already."""
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "from waza_core.plugins import build_plugin_manager\n"
        "from waza_core.suite.cache import fingerprint\n"
        "fresh = build_plugin_manager()[1]\n"
        "key = fingerprint(fresh)\n"
        "imported = sorted(m for m in sys.modules if m.startswith(('waza_graders.', 'waza_adapters.')))\n"
        "some = build_plugin_manager()[1]\n"
        "some.get('grader', 'text')\n"
        "print(json.dumps([imported, key, fingerprint(some), fingerprint(build_plugin_manager()[1].load_all())]))\n")
    env = {**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    imported, key, after_one, after_all = json.loads(proc.stdout)
    assert imported == []
    assert key == after_one == after_all


def test_the_key_changes_with_a_built_in_package_file(monkeypatch, tmp_path):
    from waza_core.suite import cache as cache_mod

    monkeypatch.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry = build_plugin_manager()[1]
    key = cache_mod.fingerprint(registry)
    real = cache_mod._package_identity("waza_graders")
    path, size, mtime = real[1]
    changed = ("waza_graders", (path, size + 1, mtime), *real[2:])
    monkeypatch.setattr(cache_mod, "_package_identity",
                        lambda package: changed if package == "waza_graders" else real)
    assert cache_mod.fingerprint(registry) != key


def test_a_third_party_plugin_with_a_built_in_name_keys_by_its_class(make_suite, cache):
    """A plugin that is not a built-in is named by its class's file and its schema."""
    from waza_core.suite import cache as cache_mod

    with_plugin = build_plugin_manager(["tests.fixture_plugins.test_graders"])[1]
    assert with_plugin.builtin_module("grader", "flip") is None
    assert with_plugin.builtin_module("grader", "text") == "waza_graders.text"
    part = cache_mod._plugin_identity(with_plugin, "grader", "flip", {})
    assert part[2][0] == "tests.fixture_plugins.test_graders"
    # a built-in whose package files cannot be named (a zip or sourceless install) keys by class
    part = cache_mod._plugin_identity(with_plugin, "grader", "text", {"waza_graders": None})
    assert part[2][:2] == ["waza_graders.text", "TextGrader"] and part[3] is not None


def test_a_package_is_named_by_its_source_files(tmp_path, monkeypatch):
    from waza_core.suite import cache as cache_mod

    pkg = tmp_path / "wazatestpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "grader.py").write_text("SCHEMA = {}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = cache_mod._package_identity("wazatestpkg")
    assert first is not None and [f[0] for f in first[1:]] == [str(pkg / "__init__.py"), str(pkg / "grader.py")]
    (pkg / "grader.py").write_text("SCHEMA = {'type': 'object'}\n")
    assert cache_mod._package_identity("wazatestpkg") != first
    assert cache_mod._package_identity("no_such_package_here") is None


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


@pytest.mark.parametrize("context", ["{due: 2026-01-02}", "{1: one}"])
def test_a_task_not_cached_keeps_its_own_document(make_suite, registry, cache, context):
    """After a cached task, one that cannot be cached keeps its own document (never the
    compact JSON of the task before it)."""
    files = {"tasks/a.yaml": TASK, "tasks/b.yaml": f"id: t2\ninputs:\n  prompt: p\n  context: {context}\n"}
    path = make_suite(BASIC_EVAL, files)
    for _ in range(2):
        a, b = load_suite(path, registry).tasks
        assert a.raw["id"] == "t1" and isinstance(a._raw, bytes)
        assert b.raw["id"] == "t2" and isinstance(b._raw, dict) and b.raw["inputs"]["context"] == b.context


# -- the file format (one line per file, read in the order of the last load) ------------------------

def five_tasks(make_suite):
    return make_suite(BASIC_EVAL, {f"tasks/{c}.yaml": TASK.replace("t1", c).replace("hello", f"say {c}")
                                   for c in "abcde"})


@pytest.fixture
def parses(monkeypatch):
    """The files parsed (not taken from the cache), by name, of each load."""
    import waza_core.suite.load as suite_mod

    seen: list[str] = []
    real = suite_mod.read_yaml

    def counting(file, problems):
        seen.append(file.name)
        return real(file, problems)

    monkeypatch.setattr(suite_mod, "read_yaml", counting)
    return seen


def cache_lines(cache) -> list[bytes]:
    (f,) = list((cache / "suites").iterdir())
    return f.read_bytes().split(b"\n")


def summary(suite):
    return [(t.id, t.prompt, str(t.file), t.graders) for t in suite.tasks]


def test_lines_are_in_the_order_files_are_loaded(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    first = load_suite(path, registry)
    assert list(cached_files(cache)) == [str(path)] + [str(path.parent / "tasks" / f"{c}.yaml") for c in "abcde"]
    assert cache_lines(cache)[0].startswith(b'{"fingerprint":') and cache_lines(cache)[-1] == b""
    parses.clear()
    before = cache_lines(cache)
    assert summary(load_suite(path, registry)) == summary(first) and parses == []
    assert cache_lines(cache) == before  # a load that found everything in place writes nothing


@pytest.mark.parametrize("damage", [
    lambda line: line.replace(b'"prompt"', b'"prompt', 1),  # the document is not JSON any more
    lambda line: line[1:],  # nor the header
    lambda line: b'{"a":1}' + line[line.index(b"\t"):],  # a header of another shape
    lambda line: line.replace(b"\t", b" "),  # no tab
])
def test_a_damaged_line_is_read_again_and_written_back_whole(make_suite, registry, cache, parses, damage):
    path = five_tasks(make_suite)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    lines = f.read_bytes().split(b"\n")
    lines[3] = damage(lines[3])  # the line of b.yaml
    f.write_bytes(b"\n".join(lines))
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == ["b.yaml"]
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == []


@pytest.mark.parametrize("cut", [1, 20, 200])
def test_a_cache_file_cut_short_is_read_up_to_the_cut(make_suite, registry, cache, parses, cut):
    path = five_tasks(make_suite)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    f.write_bytes(f.read_bytes()[:-cut])
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first)
    assert parses and set(parses) <= {"d.yaml", "e.yaml"}


def test_a_cache_file_cut_after_a_header_is_read_up_to_the_cut(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    blob = f.read_bytes()
    f.write_bytes(blob[:blob.rindex(b"\t")])  # the last line stops right after its header
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == ["e.yaml"]


def test_a_file_added_in_the_middle_and_one_removed(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    load_suite(path, registry)
    tasks = path.parent / "tasks"
    (tasks / "bb.yaml").write_text(TASK.replace("t1", "bb"))
    (tasks / "d.yaml").unlink()
    parses.clear()
    second = load_suite(path, registry)
    assert [t.id for t in second.tasks] == ["a", "b", "bb", "c", "e"] and parses == ["bb.yaml"]
    assert [os.path.basename(k) for k in cached_files(cache)] == ["eval.yaml", "a.yaml", "b.yaml", "bb.yaml",
                                                                  "c.yaml", "e.yaml"]
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(second) and parses == []


def test_an_edited_file_in_the_middle_is_the_only_one_read_again(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    load_suite(path, registry)
    time.sleep(0.01)
    (path.parent / "tasks" / "c.yaml").write_text(TASK.replace("t1", "c").replace("hello", "edited"))
    parses.clear()
    assert [t.prompt for t in load_suite(path, registry).tasks] == ["say a", "say b", "edited", "say d", "say e"]
    assert parses == ["c.yaml"] and len(cached_files(cache)) == 6
    parses.clear()
    load_suite(path, registry)
    assert parses == []


def test_a_file_that_moved_is_found_out_of_order(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    first = load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    header, *lines, last = f.read_bytes().split(b"\n")
    f.write_bytes(b"\n".join([header] + lines[::-1] + [last]))  # every line found, none where expected
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == []
    assert [os.path.basename(k) for k in cached_files(cache)] == ["eval.yaml"] + [f"{c}.yaml" for c in "abcde"]


def test_a_cache_of_the_first_format_is_ignored_and_replaced(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    entries = cached_files(cache)
    old = {"fingerprint": "x", "files": {k: dict(v, data={"id": "stale"}) for k, v in entries.items()}}
    f.write_text(json.dumps(old))
    parses.clear()
    assert [t.id for t in load_suite(path, registry).tasks] == list("abcde") and len(parses) == 6
    assert cached_files(cache) == entries


def test_a_cached_document_that_is_not_a_mapping_is_ignored(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    load_suite(path, registry)
    (f,) = list((cache / "suites").iterdir())
    lines = f.read_bytes().split(b"\n")
    lines[2] = lines[2].split(b"\t")[0] + b"\t[1,2]"
    f.write_bytes(b"\n".join(lines))
    parses.clear()
    assert [t.id for t in load_suite(path, registry).tasks] == list("abcde") and parses == ["a.yaml"]


def test_a_string_utf8_cannot_carry_is_not_cached(registry, cache, tmp_path):
    # YAML refuses a lone surrogate, but a plugin's check might leave one in a document
    from waza_core.suite.cache import SuiteCache

    store = SuiteCache(tmp_path / "eval.yaml", registry)
    store.put(str(tmp_path / "a.yaml"), "task", [10, 1, 1, 1], {"x": "lone \ud800"})
    store.put(str(tmp_path / "b.yaml"), "task", [10, 1, 1, 1], {"x": "fine"})
    store.save()
    assert cached_files(cache) == {str(tmp_path / "b.yaml"): {"kind": "task", "stat": [10, 1, 1, 1],
                                                              "data": {"x": "fine"}}}


def test_only_documents_json_gives_back_unchanged_are_cached(registry, cache, tmp_path):
    """What a plugin's check or a YAML tag may leave in a document: each value JSON would
    change (a date, a set, bytes, a tuple, a non-string key, NaN, infinity) keeps its file out
    of the cache; plain JSON values are cached, a long integer too."""
    import datetime

    from waza_core.suite.cache import SuiteCache

    store = SuiteCache(tmp_path / "eval.yaml", registry)
    changed = [datetime.date(2026, 1, 2), {1, 2}, b"x", (1, 2), {1: "one"}, float("nan"), float("inf")]
    for i, value in enumerate(changed):
        store.put(str(tmp_path / f"no{i}.yaml"), "task", [10, 1, 1, 1], {"x": [value]})
    plain = {"x": [None, True, False, 0, -1, 1 << 70, 1.5, -0.0, "s", {"k": [1.0e300]}]}
    store.put(str(tmp_path / "yes.yaml"), "task", [10, 1, 1, 1], plain)
    store.save()
    assert cached_files(cache) == {str(tmp_path / "yes.yaml"): {"kind": "task", "stat": [10, 1, 1, 1], "data": plain}}


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_only_while_every_task_comes_from_the_cache(make_suite, registry, cache,
                                                                          monkeypatch, enabled):
    import gc

    import waza_core.suite.load as suite_mod

    path = five_tasks(make_suite)
    load_suite(path, registry)  # warms the cache
    (path.parent / "tasks" / "c.yaml").write_text(TASK.replace("t1", "c") + "tags: [changed]\n")
    states = []
    real = suite_mod._load_checked

    def watching(file, kind, *args):
        states.append((os.path.basename(file), gc.isenabled()))
        return real(file, kind, *args)

    monkeypatch.setattr(suite_mod, "_load_checked", watching)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert [t.tags for t in load_suite(path, registry).tasks][2] == ("changed",)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert after is enabled  # as it was before the load
    # off from the first task file on, back on once c.yaml missed the cache (if it was on at all)
    assert states == [("eval.yaml", enabled), ("a.yaml", False), ("b.yaml", False), ("c.yaml", False),
                      ("d.yaml", enabled), ("e.yaml", enabled)]


def test_grader_types_and_names_are_kept_once_per_load(make_suite, registry, cache):
    path = five_tasks(make_suite)
    for _ in range(2):  # parsed, then from the cache
        tasks = load_suite(path, registry).tasks
        first, last = tasks[0], tasks[-1]
        assert first.graders[0].type is last.graders[0].type == "text"
        assert first.graders[0].name is last.graders[0].name == "g"
        assert last.raw == {"id": "e", "inputs": {"prompt": "say e"},
                            "graders": [{"type": "text", "name": "g", "config": {"contains": ["x"]}}]}


def test_a_cached_task_keeps_its_document_as_compact_json(make_suite, registry, cache, monkeypatch):
    """A tree of dicts per task costs ~0.7 KB more than its JSON (70 MB of a 100,000-task
    suite): a task that went through the cache keeps the bytes and decodes them on access."""
    path = five_tasks(make_suite)
    expected = {"id": "e", "inputs": {"prompt": "say e"},
                "graders": [{"type": "text", "name": "g", "config": {"contains": ["x"]}}]}
    for _ in range(2):  # parsed (and stored), then from the cache
        last = load_suite(path, registry).tasks[-1]
        assert isinstance(last._raw, bytes) and last.raw == expected
        assert last.raw is not last.raw  # a new dict each time: changing one changes nothing
    monkeypatch.setenv("WAZA_NO_CACHE", "1")
    last = load_suite(path, registry).tasks[-1]
    assert isinstance(last._raw, dict) and last.raw == expected
    assert last.raw["graders"][0]["type"] is last.graders[0].type  # the strings are shared


def test_a_file_name_that_is_not_utf8_is_cached_and_found(make_suite, registry, cache, parses):
    path = five_tasks(make_suite)
    odd = os.fsdecode(os.fsencode(path.parent / "tasks") + b"/b\xff.yaml")  # kept as a lone surrogate
    with open(os.fsencode(odd), "w") as fh:
        fh.write(TASK.replace("t1", "odd"))
    first = load_suite(path, registry)
    assert "odd" in [t.id for t in first.tasks] and odd in cached_files(cache)
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == []
    (f,) = list((cache / "suites").iterdir())
    header, *lines, last = f.read_bytes().split(b"\n")
    f.write_bytes(b"\n".join([header] + lines[::-1] + [last]))  # found out of order too
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == []


def test_a_suite_in_a_folder_whose_name_is_not_utf8(registry, cache, tmp_path, parses):
    root = os.fsencode(tmp_path) + b"/suite-\xff"
    os.makedirs(root + b"/tasks")
    with open(root + b"/eval.yaml", "w") as fh:
        fh.write(BASIC_EVAL)
    with open(root + b"/tasks/a.yaml", "w") as fh:
        fh.write(TASK)
    path = os.fsdecode(root + b"/eval.yaml")
    first = load_suite(path, registry)  # the cache file's name was made from the path's UTF-8 bytes: an error
    parses.clear()
    assert summary(load_suite(path, registry)) == summary(first) and parses == []
