"""waza migrate: the newest schema form, every comment and byte kept, and --check for CI."""

from __future__ import annotations

import codecs
import json
import os

import pytest

from tests.conftest import write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import WazaError
from waza_core.suite import migrate
from waza_core.suite.load import load_suite

OLD = """\
# A suite written for waza 0.30 (comments must survive)
name: demo   # the name
skill: demo
config:
  executor: mock
  max_workers: 3     # older spelling
  parallel: true
tasks:
    - "tasks/*.yaml"   # odd indentation kept as is
"""


@pytest.fixture
def suite_dir(tmp_path):
    write(tmp_path / "s" / "tasks" / "t1.yaml",
          "id: t1\ninputs: {prompt: hi}\ngraders: [{type: text, name: g, config: {contains: [hi]}}]\n")
    return tmp_path / "s"


def test_inserts_the_version_and_renames_max_workers_keeping_everything_else(suite_dir):
    f = write(suite_dir / "eval.yaml", OLD)
    m = migrate.plan(f)
    assert m.changes == ('set schemaVersion "1.5" (none was declared: it read as 1.5)',
                         "config.max_workers -> config.workers")
    assert m.new_text == OLD.replace("name: demo ", 'schemaVersion: "1.5"\nname: demo ', 1).replace(
        "max_workers: 3", "workers: 3")


def test_migrated_suite_loads_to_the_same_suite(suite_dir, registry):
    f = write(suite_dir / "eval.yaml", OLD)
    before = load_suite(f, registry)
    migrate.write(migrate.plan(f))
    after = load_suite(f, registry)
    assert (after.config, after.tasks, after.graders) == (before.config, before.tasks, before.graders)
    assert after.config.workers == 3 and not after.warnings
    assert not migrate.plan(f).needed  # idempotent


@pytest.mark.parametrize("declared,change", [
    ('"1.0"', "schemaVersion '1.0' -> \"1.5\""),
    ("1.2", "schemaVersion '1.2' -> \"1.5\""),
    ("1.5", "schemaVersion '1.5' -> \"1.5\""),  # a YAML number is quoted: 1.50 would not be 1.5
    ("", 'set schemaVersion "1.5"'),
])
def test_version_values(suite_dir, declared, change):
    f = write(suite_dir / "eval.yaml", f"schemaVersion: {declared}\nname: d\nskill: d\ntasks: [tasks/*.yaml]\n")
    m = migrate.plan(f)
    assert m.changes[0].startswith(change)
    assert m.new_text.startswith('schemaVersion: "1.5"')


@pytest.mark.parametrize("head,note", [
    ('schemaVersion: "1.5"\n', None),
    ('schemaVersion: "1.99"\n', "newer than this waza (1.5); left as is"),
    ('schemaVersion: "2.0"\nscenario: flow\n', None),
])
def test_nothing_to_do(suite_dir, head, note):
    f = write(suite_dir / "eval.yaml", head + "name: d\nskill: d\ntasks: [tasks/*.yaml]\n")
    m = migrate.plan(f)
    assert not m.needed and m.new_text is None
    assert (note in m.notes[0]) if note else not m.notes


def test_both_worker_keys_only_note(suite_dir):
    f = write(suite_dir / "eval.yaml", 'schemaVersion: "1.5"\nname: d\nconfig: {workers: 2, max_workers: 3}\n'
                                       "tasks: [tasks/*.yaml]\n")
    m = migrate.plan(f)
    assert not m.needed and "config.max_workers is ignored" in m.notes[0]


@pytest.mark.parametrize("name,text,message", [
    ("eval.yaml", 'schemaVersion: "3.0"\nname: d\n', "(major 3) is not supported"),
    ("eval.yaml", 'schemaVersion: "2.0"\nname: d\n', "is for scenario suites"),
    ("t.yaml", "id: t\ninputs: {prompt: x}\n", "task files are unversioned"),
    ("notes.txt", "hello", "unsupported schema artifact"),
    ("other.yaml", "just: data\n", "unsupported schema artifact"),
    ("eval.yaml", "{name: d, skill: d, tasks: [x]}\n", "flow style"),
    ("eval.yaml", "name: [\n", "invalid YAML"),
])
def test_refusals(suite_dir, name, text, message):
    f = write(suite_dir / name, text)
    with pytest.raises(WazaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        migrate.plan(f)


def test_results_are_raised_to_1_8_changing_only_the_version(tmp_path):
    f = tmp_path / "r.json"
    text = '{\n  "eval_id": "x",\n  "schemaVersion": "1.4",\n  "tasks": [{"schemaVersion": "1.0"}]\n}\n'
    f.write_text(text)
    m = migrate.plan(f)
    assert m.changes == ("schemaVersion '1.4' -> \"1.8\"",)
    assert m.new_text == text.replace('"1.4"', '"1.8"')  # the nested one is not the file's version
    f.write_text('{"eval_id": "x", "tasks": []}')
    m = migrate.plan(f)
    assert m.new_text == '{"schemaVersion": "1.8", "eval_id": "x", "tasks": []}'
    f.write_text('{\n  "eval_id": "x",\n  "tasks": []\n}')
    assert migrate.plan(f).new_text == '{\n  "schemaVersion": "1.8",\n  "eval_id": "x",\n  "tasks": []\n}'
    f.write_text(json.dumps({"schemaVersion": "1.9", "eval_id": "x", "tasks": []}))
    m = migrate.plan(f)
    assert not m.needed and m.target == "1.9"
    f.write_text(json.dumps({"schemaVersion": "2.0", "eval_id": "x", "tasks": []}))
    with pytest.raises(WazaError, match="results schemaVersion '2.0'"):
        migrate.plan(f)


def test_mode_and_bom_are_kept(suite_dir):
    f = suite_dir / "eval.yaml"
    f.write_bytes(codecs.BOM_UTF8 + b"name: d\nskill: d\ntasks: [tasks/*.yaml]\n")
    os.chmod(f, 0o640)
    migrate.write(migrate.plan(f))
    assert f.read_bytes() == codecs.BOM_UTF8 + b'schemaVersion: "1.5"\nname: d\nskill: d\ntasks: [tasks/*.yaml]\n'
    assert f.stat().st_mode & 0o777 == 0o640


def test_cli_check_and_write(waza, suite_dir):
    write(suite_dir / "eval.yaml", OLD)
    res = waza("migrate", "--check", str(suite_dir))
    assert res.returncode == 1 and b"needs migration to schemaVersion 1.5" in res.stdout
    assert b"1 file(s) need migrating" in res.stderr
    assert (suite_dir / "eval.yaml").read_text() == OLD  # --check changes nothing
    res = waza("migrate", str(suite_dir / "eval.yaml"))
    assert res.returncode == 0 and b"migrated to schemaVersion 1.5" in res.stdout
    res = waza("migrate", "--check", str(suite_dir / "eval.yaml"))
    assert res.returncode == 0 and b"already compatible with schemaVersion 1.5; no migration needed." in res.stdout


def test_cli_cross_major_is_exit_2(waza, suite_dir):
    write(suite_dir / "eval.yaml", 'schemaVersion: "3.0"\nname: d\n')
    res = waza("migrate", str(suite_dir / "eval.yaml"))
    assert res.returncode == 2 and res.stderr.startswith(b"waza: error: ") and b"Traceback" not in res.stderr
