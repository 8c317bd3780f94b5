"""The seal of the suite cache (waza_core/suite/seal.py): lines waza wrote here, each after
checking it, are not checked again; a file without the right seal has every line checked, exactly
as before."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import BASIC_EVAL
from waza_core.suite import cache as cache_mod
from waza_core.suite import seal
from waza_core.suite.cache import SuiteCache, read_entries
from waza_core.suite.load import load_suite

TASK = "id: t1\ninputs: {prompt: hello}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n"


pytestmark = pytest.mark.usefixtures("how_read")  # every test read whole and mapped (tests/suite/conftest.py)


@pytest.fixture
def state(tmp_path, monkeypatch):
    """A private cache folder and key folder, and no key remembered from another test."""
    monkeypatch.setenv("WAZA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("WAZA_NO_CACHE", raising=False)
    monkeypatch.setattr(seal, "_loaded", [])
    return tmp_path


@pytest.fixture
def checks(monkeypatch):
    """The kinds of the cache lines checked again (eval schema, task shape)."""
    calls = []
    real = cache_mod.SuiteCache._trusted

    def counting(self, kind, data, blob):
        calls.append(kind)
        return real(self, kind, data, blob)

    monkeypatch.setattr(cache_mod.SuiteCache, "_trusted", counting)
    return calls


def cache_file(state):
    (f,) = list((state / "cache" / "suites").iterdir())
    return f


def header_and_rest(state):
    data = cache_file(state).read_bytes()
    end = data.index(b"\n")
    return data[:end], data[end + 1:]


def test_a_sealed_cache_is_not_checked_again_and_loads_the_same(make_suite, registry, state, checks):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    head, _ = header_and_rest(state)
    assert b'"seal":"' in head
    key = state / "state" / "waza" / seal.KEY_NAME
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == seal.KEY_BYTES
    assert key.parent.stat().st_mode & 0o777 == 0o700
    checked = len(checks)
    second = load_suite(path, registry)
    assert len(checks) == checked  # no line checked again
    assert second == first and second.config == first.config and second.tasks[0].raw == first.tasks[0].raw


def _replace_in_cache(state, old: bytes, new: bytes) -> None:
    f = cache_file(state)
    data = f.read_bytes()
    assert data.count(old) == 1
    f.write_bytes(data.replace(old, new))


def test_a_warm_validate_of_a_sealed_cache_imports_no_schema_validator(make_suite, state):
    """What docs/architecture.md says the seal spares: jsonschema-rs (and jsonschema) are not
    imported by a warm command once its cache is sealed; the first, unsealed load needs them.
    Nor is msgspec, which writes the cache (waza_core/cache_json.py: a small load reads it
    with the standard library), nor what only runs need (tempfile and shutil for workspaces and
    atomic writes, the mocks' run module for a suite without mocks)."""
    import subprocess
    import sys

    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    code = ("import sys\nfrom waza_core.cli import main\n"
            "try:\n    main(['validate', %r, '-q'])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in ('jsonschema_rs', 'jsonschema', 'msgspec', 'tempfile', 'shutil', "
            "'waza_core.mocks.run') if m in sys.modules))") % str(path)
    env = {**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    assert "jsonschema_rs" in runs[0].stdout and "msgspec" in runs[0].stdout  # the first load checks, writes, seals
    assert runs[1].stdout.strip() == "[]"


@pytest.mark.parametrize(("old", "new", "kind"), [
    (b'"trials_per_task":1', b'"trials_per_task":"many"', "eval"),  # a value the eval schema refuses
    (b'"prompt":"hello"', b'"prompt":["not","text"]', "task"),  # a shape the loader cannot read
])
def test_a_changed_line_under_the_old_seal_is_checked_and_refused(make_suite, registry, state, checks, old, new,
                                                                  kind):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    # the same stat, so the header of the line still matches
    _replace_in_cache(state, old, new)
    checked = len(checks)
    suite = load_suite(path, registry)
    assert checks[checked:].count(kind) == 1
    assert suite == first  # read from the file again, not the changed line


def test_a_forged_or_foreign_seal_means_the_check(make_suite, registry, state, checks):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    head, rest = header_and_rest(state)
    fp = head.split(b'"fingerprint":"')[1].split(b'"')[0].decode()
    name = f"{fp}\n{cache_file(state).name}"  # what the seal binds: the fingerprint and the file's name
    secret = seal.key()
    assert secret is not None and seal.matches(secret, name, rest, head.split(b'"seal":"')[1][:64].decode())
    for forged in ("0" * 64, seal.seal(secret, f"another fingerprint\n{cache_file(state).name}", rest),
                   seal.seal(secret, f"{fp}\nanother-suite.json", rest), seal.seal(b"k" * 32, name, rest), 7,
                   "é" * 64, "A" * 63):
        cache_file(state).write_bytes(b'{"fingerprint":"%s","seal":%s}\n' % (fp.encode(), json.dumps(forged).encode())
                                      + rest)
        checked = len(checks)
        assert load_suite(path, registry) == first
        assert sorted(checks[checked:]) == ["eval", "task"]
        # checked, then written again with the right seal: the next load checks nothing
        assert seal.matches(secret, name, header_and_rest(state)[1],
                            header_and_rest(state)[0].split(b'"seal":"')[1][:64].decode())
        assert load_suite(path, registry) == first and len(checks) == checked + 2


def test_a_cache_written_without_a_seal_is_checked_then_sealed(make_suite, registry, state, checks):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    head, rest = header_and_rest(state)
    unsealed = head.split(b',"seal"')[0] + b"}"
    cache_file(state).write_bytes(unsealed + b"\n" + rest)
    checked = len(checks)
    assert load_suite(path, registry) == first and len(checks) == checked + 2
    assert b'"seal":"' in header_and_rest(state)[0]
    assert set(read_entries(cache_file(state))) == {str(path), str(path.parent / "tasks" / "a.yaml")}


@pytest.mark.parametrize("spoil", ["readable by others", "a link", "short", "a folder", "folder writable by others",
                                   "folder a link"])
def test_a_key_that_is_not_private_is_not_used(make_suite, registry, state, checks, spoil, monkeypatch):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    load_suite(path, registry)
    key = state / "state" / "waza" / seal.KEY_NAME
    if spoil == "readable by others":
        key.chmod(0o644)
    elif spoil == "a link":
        elsewhere = state / "elsewhere.key"
        elsewhere.write_bytes(key.read_bytes())
        elsewhere.chmod(0o600)
        key.unlink()
        key.symlink_to(elsewhere)
    elif spoil == "short":
        key.write_bytes(b"short")
    elif spoil == "a folder":
        key.unlink()
        key.mkdir()
    elif spoil == "folder writable by others":
        key.parent.chmod(0o777)
    else:
        real = state / "real-state"
        key.parent.rename(real)
        key.parent.symlink_to(real)
    monkeypatch.setattr(seal, "_loaded", [])
    for _ in range(2):
        checked = len(checks)
        load_suite(path, registry)
        assert len(checks) == checked + 2  # no usable key: every load checks every line
    assert seal.key(create=True) is None  # and no new key is made over it
    assert key.is_symlink() or key.is_dir() or key.stat().st_size in (5, seal.KEY_BYTES)


def test_a_header_nested_too_deeply_is_ignored_not_a_crash(make_suite, registry, state):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    head, rest = header_and_rest(state)
    deep = head[:-1] + b',"x":' + b"[" * 5000 + b"]" * 5000 + b"}"
    cache_file(state).write_bytes(deep + b"\n" + rest)
    assert load_suite(path, registry) == first
    assert b'"x"' not in header_and_rest(state)[0]  # ignored, and written again


def test_lines_nested_too_deeply_are_refused_not_a_crash(make_suite, registry, state):
    """A document, or a line's head read when a file is looked up out of order."""
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK, "tasks/b.yaml": TASK.replace("t1", "t2")})
    first = load_suite(path, registry)
    head, rest = header_and_rest(state)
    lines = rest.split(b"\n")
    deep = b"[" * 5000 + b"]" * 5000
    task_line = next(i for i, line in enumerate(lines) if b"a.yaml" in line)
    lines[task_line] = lines[task_line].split(b"\t")[0] + b"\t" + deep  # its document
    lines.insert(1, deep + b"\t{}")  # a head, read by the lookup of a file out of order
    cache_file(state).write_bytes(head + b"\n" + b"\n".join(lines))
    assert load_suite(path, registry) == first


def test_a_key_kept_with_the_cache_is_no_secret(make_suite, registry, state, checks, monkeypatch):
    """A key inside the cache folder (or a cache inside the key's) would be restored with it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(state / "cache" / "state"))
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    assert b'"seal"' not in header_and_rest(state)[0]
    checked = len(checks)
    assert load_suite(path, registry) == first and len(checks) == checked + 2
    assert not (state / "cache" / "state" / "waza" / seal.KEY_NAME).exists()


def test_a_sealed_file_copied_under_another_suites_name_is_not_sealed_there(make_suite, registry, state, tmp_path):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    load_suite(path, registry)
    sealed_bytes = cache_file(state).read_bytes()
    other = tmp_path / "other" / "eval.yaml"
    other.parent.mkdir()
    other.write_text(BASIC_EVAL)
    assert SuiteCache(path, registry).sealed
    copy = SuiteCache(other, registry).path
    copy.write_bytes(sealed_bytes)
    assert SuiteCache(path, registry).sealed and not SuiteCache(other, registry).sealed


def test_no_place_for_a_key_is_no_error(make_suite, registry, state, checks, monkeypatch):
    blocker = state / "not-a-folder"
    blocker.write_text("a file where the state folder would go")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": TASK})
    first = load_suite(path, registry)
    assert b'"seal"' not in header_and_rest(state)[0]
    checked = len(checks)
    assert load_suite(path, registry) == first and len(checks) == checked + 2


def test_the_key_is_made_once_and_kept(state):
    first = seal.key(create=True)
    seal._loaded.clear()
    assert first is not None and len(first) == seal.KEY_BYTES and seal.key() == first
    assert not [p for p in (state / "state" / "waza").iterdir() if p.name != seal.KEY_NAME]  # no temp file left
    assert os.stat(state / "state" / "waza" / seal.KEY_NAME).st_uid == os.geteuid()


def test_a_relative_state_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert seal.state_dir() == tmp_path / ".local" / "state" / "waza"
    monkeypatch.setenv("HOME", "relative-home")
    assert seal.state_dir() is None  # never a key under the current folder
