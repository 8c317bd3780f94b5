"""waza_core.method_cache: attrs' generated methods compiled once, kept beside waza's bytecode.

Each test runs real processes with their own ``PYTHONPYCACHEPREFIX``, so the file they write
is theirs (not the checkout's ``__pycache__``), and checks what the classes do, not only that
a file appeared.
"""

from __future__ import annotations

import gc
import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO, run_waza
from waza_core import method_cache

#: a child that installs the cache, then builds attrs classes and reports what they do
CHILD = textwrap.dedent("""
    import json, sys
    from waza_core import method_cache
    cache = method_cache.install()
    import attrs

    @attrs.frozen
    class Point:
        x: int
        y: int = 0
        tags: tuple = ()

    @attrs.frozen
    class Other:
        x: int
        y: int = 0
        tags: tuple = ()

    @attrs.define
    class Box:
        items: list = attrs.field(factory=list)
        label: str = "box"

    def _frozen(p):
        try:
            p.x = 2
        except attrs.exceptions.FrozenInstanceError:
            return True
        return False

    p, q = Point(1), Point(1, 0, ())
    b = Box()
    b.items.append(3)
    print(json.dumps({
        "installed": cache is not None,
        "new": cache.new if cache else None,
        "path": cache.path if cache else None,
        "repr": [repr(p), repr(b), repr(Box(label="x"))],
        "eq": [p == q, p == Point(2), p == Other(1), Box() == Box(), Box([1]) == Box()],
        "hash_equal": hash(p) == hash(q),
        "hash_apart": hash(p) != hash(Other(1)),
        "frozen": _frozen(p),
        "defaults": [Point(5).y, Box().label, Box().items is not Box().items],
    }))
""")


def _child(tmp_path: Path, **env: str) -> dict:
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    full = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "WAZA_NO_METHOD_CACHE", "PYTHONHASHSEED")}
    full.update(PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"), **env)
    out = subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_second_process_compiles_nothing_and_its_classes_behave_the_same(tmp_path):
    first = _child(tmp_path)
    assert first["installed"] and first["new"] >= 3  # Point, Other, Box (and nothing is lost if attrs adds more)
    path = Path(first["path"])
    assert path.is_file() and path.is_relative_to(tmp_path / "pycache")
    second = _child(tmp_path)
    assert second["new"] == 0
    for result in (first, second):
        assert result["repr"] == ["Point(x=1, y=0, tags=())", "Box(items=[3], label='box')", "Box(items=[], label='x')"]
        assert result["eq"] == [True, False, False, True, False]
        assert result["hash_equal"] and result["hash_apart"] and result["frozen"]
        assert result["defaults"] == [0, "box", True]


def test_what_is_cached_is_what_the_built_in_compile_gives(tmp_path):
    """A cached code object equals a fresh compile of the same source (the hash's number aside)."""
    first = _child(tmp_path)
    cache = method_cache.MethodCache(first["path"], 0)
    assert len(cache.blobs) >= 3
    compared = 0
    for key, blob in cache.blobs.items():
        flags, _, rest = key.split(":", 2)
        filename, source = rest.split("\0", 1)
        if "SALT," in source:
            continue  # compiled with the number of the process that wrote it
        fresh = compile(source, filename, "exec", int(flags), True)
        assert marshal.loads(blob) == fresh
        compared += 1
    assert compared >= 1  # Box: no __hash__, so no number in its source


def test_a_damaged_file_is_ignored_and_written_again(tmp_path):
    path = Path(_child(tmp_path)["path"])
    for damage in (b"", b"not a cache", path.read_bytes()[:40], path.read_bytes()[:-7]):
        path.write_bytes(damage)
        again = _child(tmp_path)
        assert again["new"] >= 3 and again["eq"] == [True, False, False, True, False]
        assert method_cache.MethodCache(str(path), 0).blobs  # a good file again


def test_another_pythons_file_is_not_read(tmp_path):
    path = Path(_child(tmp_path)["path"])
    data = path.read_bytes()
    path.write_bytes(b"\x00\x00\r\n" + data[4:])  # another magic number
    assert method_cache.MethodCache(str(path), 0).blobs == {}
    assert _child(tmp_path)["new"] >= 3


def test_no_file_without_bytecode_writing_and_no_cache_when_asked(tmp_path):
    result = _child(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert result["new"] >= 3 and not Path(result["path"]).exists()
    off = _child(tmp_path, WAZA_NO_METHOD_CACHE="1")
    assert off["installed"] is False and off["eq"] == [True, False, False, True, False]


def test_other_calls_go_to_the_built_in_compile():
    cache = method_cache.MethodCache(None, 0)
    assert eval(cache.compile("1 + 2", "<expr>", "eval")) == 3
    code = cache.compile("x = 1", "<flags>", "exec", 0, True)
    assert code.co_filename == "<flags>" and not cache.blobs and cache.new == 0
    cache.compile("y = 2", "<exec>", "exec")
    assert cache.new == 1 and len(cache.blobs) == 1
    cache.compile("y = 2", "<exec>", "exec")
    assert cache.new == 1
    cache.save()  # no path: nothing to write, nothing raised


def test_the_hash_number_is_left_out_of_the_key():
    cache = method_cache.MethodCache(None, 0)
    one = "def __hash__(self):\n        return hash((\n                1185295497855966427,\n                self.x,\n            ))\n"
    cache.compile(one, "<attrs generated methods m.C>", "exec")
    cache.compile(one.replace("1185295497855966427", "-42"), "<attrs generated methods m.C>", "exec")
    assert cache.new == 1


def test_the_number_of_a_cached_hash_is_left_out_too():
    """``cache_hash=True``: attrs writes the number inside another expression."""
    cache = method_cache.MethodCache(None, 0)
    one = ("def __hash__(self):\n        if self._attrs_cached_hash is None:\n"
           "            object.__setattr__(self, '_attrs_cached_hash', _cache_wrapper(hash((\n"
           "                    1185295497855966427,\n                    self.x,\n                ))))\n")
    cache.compile(one, "<attrs generated methods m.Q>", "exec")
    cache.compile(one.replace("1185295497855966427", "99"), "<attrs generated methods m.Q>", "exec")
    assert cache.new == 1


def test_no_cache_under_a_fixed_hash_seed(tmp_path):
    """A fixed PYTHONHASHSEED asks for the same hashes in every run: a cached __hash__ would
    carry another process's number."""
    result = _child(tmp_path, PYTHONHASHSEED="0")
    assert result["installed"] is False and result["hash_equal"] and result["hash_apart"]
    assert _child(tmp_path, PYTHONHASHSEED="random")["installed"] is True


def test_the_last_collection_still_finalizes_young_cycles():
    """What main() does last: a young garbage cycle is still collected (its __del__ runs)."""
    from waza_core.cli import _spare_the_last_collection

    ran = []

    class Cycle:
        def __del__(self):
            ran.append(True)

    c = Cycle()
    c.me = c
    del c
    try:
        _spare_the_last_collection()
        assert ran == [True] and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # this test process goes on


def test_an_unwritable_folder_is_no_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "pycache").write_text("a file where the folder would go")
    cache = method_cache.MethodCache(str(folder / "pycache" / "x" / "attrs-methods.bin"), 0)
    cache.compile("z = 3", "<z>", "exec")
    cache.save()
    assert cache.new == 1  # not written, and no exception


def test_the_cli_writes_the_file_and_a_second_run_uses_it(tmp_path, monkeypatch):
    env = {"PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")}
    suite = REPO / "examples" / "quickstart" / "eval.yaml"
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    first = run_waza("validate", str(suite), "-q", env=env)
    assert first.returncode == 0, first.stderr
    files = list((tmp_path / "pycache").rglob("attrs-methods.*.bin"))
    assert len(files) == 1
    before = files[0].stat().st_mtime_ns
    second = run_waza("validate", str(suite), "-q", env=env)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert files[0].stat().st_mtime_ns == before  # nothing new compiled, nothing written


def test_main_called_with_arguments_does_not_freeze_the_collector():
    from waza_core.cli import main

    frozen = gc.get_freeze_count()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert gc.get_freeze_count() == frozen


def test_a_command_sets_up_with_rare_collections_and_runs_with_the_usual_ones(tmp_path, monkeypatch):
    """The collector's thresholds are raised while a command imports and loads (~50 passes
    for nothing at Python's), put back for the runs (a garbage cycle there may hold a
    transcript) and when main() returns in a process that goes on."""
    from tests.conftest import BASIC_EVAL
    from waza_core import cli, collector
    from waza_core.cli import main
    from waza_core.run import local

    seen: dict[str, tuple[int, int, int]] = {}
    monkeypatch.setattr(cli, "_validate_without_typer", lambda args: (seen.update(validate=gc.get_threshold()),
                                                                      sys.exit(0)))
    before = gc.get_threshold()
    with pytest.raises(SystemExit):
        main(["validate", str(tmp_path)])
    assert seen == {"validate": collector.SETUP_THRESHOLDS} and gc.get_threshold() == before

    real_run_unit = local.run_unit

    def watching(*args, **kwargs):
        seen["run"] = gc.get_threshold()
        return real_run_unit(*args, **kwargs)

    monkeypatch.setattr(local, "run_unit", watching)
    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text(BASIC_EVAL)
    (tmp_path / "tasks" / "t.yaml").write_text("id: t\ninputs: {prompt: p}\ngraders:\n  - type: text\n"
                                               "    name: t\n    config: {contains: [p]}\n")
    with pytest.raises(SystemExit):
        main(["run", str(tmp_path / "eval.yaml"), "-q", "-o", str(tmp_path / "r.json")])
    assert seen["run"] == before != collector.SETUP_THRESHOLDS and gc.get_threshold() == before

    from waza_core.run import regrade

    real_regrade_run = regrade.regrade_run

    def grading(*args, **kwargs):
        seen["grade"] = gc.get_threshold()
        return real_regrade_run(*args, **kwargs)

    monkeypatch.setattr(regrade, "regrade_run", grading)
    with pytest.raises(SystemExit):  # `waza grade` regrades saved runs at the usual thresholds too
        main(["grade", str(tmp_path / "eval.yaml"), "--results", str(tmp_path / "r.json"), "-q",
              "--workspace", str(tmp_path)])
    assert seen["grade"] == before and gc.get_threshold() == before


def _run_child(tmp_path: Path, code: str) -> dict:
    script = tmp_path / "child_finder.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "WAZA_NO_METHOD_CACHE", "PYTHONHASHSEED")}
    env.update(PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_loader_that_takes_no_new_attribute_leaves_attrs_as_it_was(tmp_path):
    """A loader with slots (or written in C) cannot be told to put the cache in place: no
    error, no cache, attrs imports and compiles its classes itself."""
    result = _run_child(tmp_path, """
        import importlib.machinery, json, sys
        class Slotted:
            __slots__ = ("inner",)
            def __init__(self, inner): self.inner = inner
            def create_module(self, spec): return None
            def exec_module(self, module): self.inner.exec_module(module)
        class Finder:
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name != "attr._make": return None
                spec = importlib.machinery.PathFinder.find_spec(name, path, target)
                spec.loader = Slotted(spec.loader)
                return spec
        sys.meta_path.insert(0, Finder)
        from waza_core import method_cache
        cache = method_cache.install()
        import attrs
        @attrs.frozen
        class P:
            x: int
        print(json.dumps({"cache": cache is not None, "repr": repr(P(1)),
                          "left": [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "_BeforeMake"]}))
    """)
    assert result == {"cache": False, "repr": "P(x=1)", "left": []}


def test_a_zip_importer_shared_by_attrs_modules_gets_the_cache_in_attr_make_alone(tmp_path):
    """From a zip, one loader serves every module of the package: only ``attr._make`` gets
    the cache in its namespace, and the loader has its own ``exec_module`` back afterwards."""
    import zipfile

    import attr

    package = Path(attr.__file__).parent
    archive = tmp_path / "deps.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for file in package.rglob("*.py"):
            zf.write(file, str(Path("attr") / file.relative_to(package)))
    result = _run_child(tmp_path, f"""
        import json, sys
        sys.path.insert(0, {str(archive)!r})
        from waza_core import method_cache
        cache = method_cache.install()
        import attr, attr.validators
        loader = attr._make.__spec__.loader
        print(json.dumps({{
            "cache": cache is not None, "zip": type(loader).__name__, "from_zip": "deps.zip" in attr.__file__,
            "with_compile": sorted(m for m in sys.modules if m.startswith("attr") and "compile" in vars(sys.modules[m])),
            "patched": "exec_module" in vars(loader),
            "own": any(" attr.validators." in k for k in cache.used)}}))
    """)
    assert result == {"cache": True, "zip": "zipimporter", "from_zip": True, "with_compile": ["attr._make"],
                      "patched": False, "own": True}
