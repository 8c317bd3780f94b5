"""Grader references (``ref:``) and a task grader's own ``assertions:``, as waza resolves them."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import BASIC_EVAL, write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import SuiteError
from waza_core.suite.load import load_suite

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REF = "example.com/acme/graders#factuality@v1.0.0"
MANIFEST = """schema_version: 1
module: example.com/acme/graders
exports:
  graders:
    factuality:
      path: graders/factuality.yaml
    strict:
      path: graders/strict
"""
PRESET = """type: text
name: factuality
weight: 2
config:
  contains: ["mock response"]
  not_contains: ["error"]
"""
TASK = "id: t1\nname: Task one\ninputs:\n  prompt: hello\n"


def digest(files: dict[str, bytes]) -> str:
    """waza's DigestDirectory, written out: sorted slash paths, each as path NUL bytes NUL."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + files[rel] + b"\0")
    return "sha256:" + h.hexdigest()


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module in a private cache, and a function writing a suite whose lock pins it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("WAZA_MODULE_CACHE", str(cache))
    root = cache / "example.com" / "acme" / "graders" / COMMIT
    files = {"waza.registry.yaml": MANIFEST.encode(), "graders/factuality.yaml": PRESET.encode(),
             "graders/strict.yml": b"type: text\nconfig: {contains_cs: [Mock]}\n"}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)

    def suite(graders: str, lock_digest: str | None = None, refs=(REF,)) -> object:
        folder = tmp_path / "suite"
        write(folder / "eval.yaml", BASIC_EVAL + graders)
        write(folder / "tasks" / "t1.yaml", TASK)
        entries = "".join(f"  - ref: {r}\n    commit: {COMMIT}\n    digest: {lock_digest or digest(files)}\n"
                          f"    url: https://example.com/acme/graders.git\n" for r in refs)
        write(folder / "waza.lock", "schema_version: 1\ngraders:\n" + entries)
        return folder / "eval.yaml"

    suite.root = root
    suite.files = files
    return suite


def problems_of(path, registry) -> list[str]:
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    return exc.value.problems


def test_ref_expands_with_local_overrides(module, registry):
    path = module(f"graders:\n  - ref: {REF}\n    name: remote_text\n    config:\n      not_contains: [oops]\n")
    (g,) = load_suite(path, registry).graders
    assert (g.type, g.name, g.weight) == ("text", "remote_text", 2.0)
    assert g.config == {"contains": ["mock response"], "not_contains": ["oops"]}  # lists are replaced


def test_ref_alone_takes_the_presets_name_and_path_refs_default_to_the_file_name(module, registry):
    refs = (REF, "example.com/acme/graders/graders/strict@v1.0.0")
    path = module("graders:\n" + "".join(f"  - ref: {r}\n" for r in refs), refs=refs)
    names = [(g.name, g.config) for g in load_suite(path, registry).graders]
    assert names == [("factuality", {"contains": ["mock response"], "not_contains": ["error"]}),
                     ("strict", {"contains_cs": ["Mock"]})]


def test_waza_run_uses_the_referenced_grader(module, waza, tmp_path):
    path = module(f"graders:\n  - ref: {REF}\n    name: remote_text\n")
    out = tmp_path / "r.json"
    proc = waza("run", str(path), "-o", str(out), env={"WAZA_MODULE_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr.decode()
    v = json.loads(out.read_text())["tasks"][0]["runs"][0]["validations"]["remote_text"]
    assert (v["type"], v["passed"], v["weight"]) == ("text", True, 2.0)


@pytest.mark.parametrize("change,message", [
    ("no_lock", "eval contains remote grader refs but {lock} is missing; run `waza get"),
    ("other_ref", "remote grader ref 'example.com/acme/graders#factuality@v1.0.0' is not present in waza.lock"),
    ("no_module", "module not available offline for ref 'example.com/acme/graders#factuality@v1.0.0' at"),
    ("digest", "digest mismatch for ref 'example.com/acme/graders#factuality@v1.0.0': lock has sha256:0000"),
    ("bad_ref", "ref 'example.com/acme#x@v1' must use <host>/<owner>/<repo>[/path]@<version>"),
    ("no_version", "ref 'example.com/acme/graders#factuality' must include @<version>"),
    ("no_export", "manifest does not export grader 'nope'"),
])
def test_unresolvable_refs_are_load_errors_at_the_ref(module, registry, change, message):
    ref = {"bad_ref": "example.com/acme#x@v1", "no_version": "example.com/acme/graders#factuality",
           "no_export": "example.com/acme/graders#nope@v1.0.0"}.get(change, REF)
    lock_refs = ("example.com/other/x#y@v1",) if change == "other_ref" else (ref,)
    path = module(f"graders:\n  - type: text\n    name: plain\n    config: {{contains: [x]}}\n"
                  f"  - ref: {ref}\n", lock_digest="sha256:" + "0" * 64 if change == "digest" else None,
                  refs=lock_refs)
    text = path.read_text()
    if change == "no_lock":
        (path.parent / "waza.lock").unlink()
    if change == "no_module":
        import shutil

        shutil.rmtree(module.root)
    out = problems_of(path, registry)
    assert len(out) == 1
    line = text.splitlines().index(f"  - ref: {ref}") + 1
    assert f"eval.yaml:{line}:5: grader ref {ref!r}: " in out[0]
    assert message.format(lock=path.parent / "waza.lock") in out[0]


def test_resolved_grader_gets_the_usual_config_checks(module, registry):
    (module.root / "graders" / "factuality.yaml").write_text("type: text\nconfig: {contain: [x]}\n")
    module.files["graders/factuality.yaml"] = b"type: text\nconfig: {contain: [x]}\n"
    path = module(f"graders:\n  - ref: {REF}\n")
    out = problems_of(path, registry)
    assert "grader ref" in out[0] and "factuality.yaml): unknown key 'contain' (did you mean 'contains'?)" in out[0]


def test_type_mismatch_program_presets_and_duplicate_names(module, registry):
    path = module(f"graders:\n  - ref: {REF}\n    type: code\n")
    assert "local type 'code' does not match remote type 'text'" in problems_of(path, registry)[0]
    path = module(f"graders:\n  - type: text\n    name: factuality\n    config: {{contains: [a]}}\n  - ref: {REF}\n")
    assert "duplicate grader name 'factuality' (also entry 1)" in problems_of(path, registry)[0]
    (module.root / "graders" / "factuality.yaml").write_text("type: program\nconfig: {command: x}\n")
    module.files["graders/factuality.yaml"] = b"type: program\nconfig: {command: x}\n"
    path = module(f"graders:\n  - ref: {REF}\n")
    assert "remote program graders are not supported without explicit trust" in problems_of(path, registry)[0]


def test_entry_without_ref_still_needs_type_and_name(make_suite, registry):
    path = make_suite(BASIC_EVAL + "graders:\n  - name: g\n    config: {contains: [a]}\n", {"tasks/t1.yaml": TASK})
    assert "missing required key 'type'" in problems_of(path, registry)[0]


# -- a task grader's own assertions -----------------------------------------------------

def test_task_grader_assertions_become_its_config(make_suite, registry):
    task = TASK + "graders:\n  - name: c\n    type: code\n    assertions: ['len(output) > 0']\n"
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/t1.yaml": task}), registry)
    assert suite.tasks[0].graders[0].config == {"assertions": ["len(output) > 0"]}
    task = TASK + "graders:\n  - name: c\n    type: code\n    assertions: []\n    config: {assertions: ['1']}\n"
    assert load_suite(make_suite(BASIC_EVAL, {"tasks/t1.yaml": task}), registry).tasks[0].graders[0].config == {
        "assertions": ["1"]}


@pytest.mark.parametrize("entry,message", [
    ("    type: code\n    assertions: ['1']\n    config: {assertions: ['2']}\n",
     "tasks/t1.yaml:8:5: grader 'c': set assertions on the grader entry or in config.assertions, not both"),
    ("    type: text\n    assertions: ['1']\n    config: {contains: [x]}\n",
     "tasks/t1.yaml:8:5: grader 'c': assertions: only a code grader takes assertions"),
    ("    type: code\n    assertions: []\n",
     "grader 'c': missing required key 'assertions'"),
    ("    type: code\n    assertions: [1]\n",
     "tasks/t1.yaml:8:18: graders[0].assertions[0]: expected string, got integer 1"),
])
def test_task_grader_assertions_problems(make_suite, registry, entry, message):
    task = TASK + "graders:\n  - name: c\n" + entry
    out = problems_of(make_suite(BASIC_EVAL, {"tasks/t1.yaml": task}), registry)
    assert len(out) == 1 and message in out[0], out


def test_eval_graders_take_no_assertions_key(make_suite, registry):
    path = make_suite(BASIC_EVAL + "graders:\n  - name: c\n    type: code\n    assertions: ['1']\n",
                      {"tasks/t1.yaml": TASK})
    # a 1.x eval only warns about the unknown entry key (as waza Go ignores it), so the
    # assertions it held do not count: the code grader has none
    assert "missing required key 'assertions'" in problems_of(path, registry)[0]
