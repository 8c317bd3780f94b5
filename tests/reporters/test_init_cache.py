"""``waza init``, ``waza new``, the result cache store and shell completion."""

from __future__ import annotations

import json
import os

import pytest
from ruamel.yaml import YAML

from tests.inprocess import run_waza_in_process as run_waza


def test_init_then_run_exits_0_with_a_valid_results_file(tmp_path):
    proc = run_waza("init", "demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    demo = tmp_path / "demo"
    for rel in ("eval.yaml", "tasks/explain-greet.yaml", "fixtures/greet.py", ".waza.yaml",
                ".github/workflows/waza.yml", ".gitignore"):
        assert (demo / rel).is_file(), rel
    proc = run_waza("run", "eval.yaml", "-o", "results.json", cwd=demo)
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads((demo / "results.json").read_text("utf-8"))
    import jsonschema

    from waza_core.suite import schema

    jsonschema.validate(doc, schema.load("results"))
    assert doc["summary"]["succeeded"] == doc["summary"]["total_tests"] == 2
    assert run_waza("validate", "eval.yaml", cwd=demo).returncode == 0


def test_the_workflow_runs_gates_and_posts_the_summary(tmp_path):
    assert run_waza("init", str(tmp_path / "p")).returncode == 0
    wf = YAML(typ="safe").load((tmp_path / "p" / ".github/workflows/waza.yml").read_text("utf-8"))
    assert set(wf[True] if True in wf else wf["on"]) == {"push", "pull_request"}
    steps = wf["jobs"]["eval"]["steps"]
    script = "\n".join(s.get("run", "") for s in steps)
    assert "waza run eval.yaml -o results.json" in script and "--reporter markdown:summary.md" in script
    assert "gh run download" in script and "--name waza-results" in script
    assert "waza gate --baseline baseline/results.json --current results.json --format github-actions" in script
    assert 'cat summary.md >> "$GITHUB_STEP_SUMMARY"' in script and "gh pr comment" in script
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "waza-results" and "results.json" in upload["with"]["path"]


def test_init_and_new_never_overwrite(tmp_path):
    (tmp_path / "eval.yaml").write_text("mine")
    proc = run_waza("init", ".", cwd=tmp_path)
    assert proc.returncode == 2 and b"not overwriting existing file(s): eval.yaml" in proc.stderr
    assert (tmp_path / "eval.yaml").read_text() == "mine"
    assert not (tmp_path / "tasks").exists()  # nothing written at all
    proc = run_waza("new", "eval", "suite1", cwd=tmp_path)
    assert proc.returncode == 0
    proc = run_waza("new", "task", "extra", "--suite", "suite1", "--prompt", 'Say "hi"\nthen stop', cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    task = tmp_path / "suite1" / "tasks" / "extra.yaml"
    before = task.read_bytes()
    proc = run_waza("new", "task", "extra", "--suite", "suite1", cwd=tmp_path)
    assert proc.returncode == 2 and b"not overwriting" in proc.stderr and task.read_bytes() == before
    proc = run_waza("run", "suite1", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert {t["test_id"] for t in json.loads(proc.stdout)["tasks"]} == {"explain-greet", "summarise-notes", "extra"}


@pytest.mark.parametrize("prompt", ['Say "hi"\nthen stop \\ end', "bell \x07 tab\t cr\r esc \x1b del \x7f c1 \x9f",
                                    "ünïcödé ‮ \u2028 \u2029 \x85 \ufeff ok", "key: value # not a comment",
                                    "- [a, {b: c}]"])
def test_new_task_writes_any_prompt_as_valid_yaml(tmp_path, prompt):
    """The prompt reads back exactly as given, whatever characters it holds."""
    from ruamel.yaml import YAML

    assert run_waza("new", "eval", "s", cwd=tmp_path).returncode == 0
    proc = run_waza("new", "task", "t", "--suite", "s", "--prompt", prompt, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    task = YAML(typ="safe").load((tmp_path / "s" / "tasks" / "t.yaml").read_text("utf-8"))
    assert task["inputs"]["prompt"] == prompt
    proc = run_waza("validate", "s/eval.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


def test_write_new_never_replaces_a_file_that_appeared_after_the_check(tmp_path, monkeypatch):
    """The existence check runs first; a file made between it and the write still wins."""
    import os

    from waza_core.cli import init
    from waza_core.errors import WazaError

    target = tmp_path / "eval.yaml"
    real_link = os.link

    def racing_link(src, dst):
        target.write_text("theirs")  # another process gets there first
        return real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    with pytest.raises(WazaError, match="not overwriting existing file"):
        init.write_new(target, b"ours")
    assert target.read_text() == "theirs"
    assert os.listdir(tmp_path) == ["eval.yaml"]  # no temporary file left behind
    monkeypatch.undo()
    init.write_new(tmp_path / "new.yaml", b"ours")
    assert (tmp_path / "new.yaml").read_bytes() == b"ours" and oct((tmp_path / "new.yaml").stat().st_mode)[-3:] == "644"


@pytest.mark.parametrize("args, message", [
    (["new", "task", "../escape"], "task id '../escape' must be"),
    (["new", "task", "ok"], "no such file"),
    (["new", "eval", "a/b"], "suite name 'a/b' must be"),
])
def test_new_refuses_bad_names(tmp_path, args, message):
    proc = run_waza(*args, cwd=tmp_path)
    assert proc.returncode == 2 and message.encode() in proc.stderr and b"Traceback" not in proc.stderr


def test_a_symlink_in_the_way_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".gitignore").symlink_to(target)
    proc = run_waza("init", "p", cwd=tmp_path)
    assert proc.returncode == 2 and target.read_text() == "keep"


# -- the cache store -----------------------------------------------------------------

def test_cache_store_round_trip_corruption_and_clear(tmp_path):
    from waza_core.run.result_cache import ResultCache

    warnings = []
    cache = ResultCache(tmp_path / "c", warn=warnings.append)
    key = "a" * 64
    assert cache.get(key) is None
    cache.put(key, {"status": "passed", "run_number": 1})
    cache.put("b" * 64, {"status": "error"})  # errors are retried, never stored
    assert cache.get(key) == {"status": "passed", "run_number": 1} and cache.hits == 1
    assert sorted(os.listdir(tmp_path / "c")) == [f"{key}.json"]
    (tmp_path / "c" / f"{key}.json").write_text("{half")
    assert cache.get(key) is None and "ignoring corrupt entry" in warnings[-1]
    (tmp_path / "c" / f"{key}.json").write_text(json.dumps({"kind": "waza.run-cache", "version": 1,
                                                            "key": "c" * 64, "run": {"status": "passed"}}))
    assert cache.get(key) is None and "not a cache entry of this key" in warnings[-1]
    (tmp_path / "c" / f"{key}.json").write_text('{"run": ' + "[" * 100000 + "]" * 100000 + "}")
    assert cache.get(key) is None and "ignoring corrupt entry" in warnings[-1]  # not a RecursionError
    hostile = {"status": "failed", "final_output": "lone \ud800 surrogate, \x00 and ünïcödé"}
    cache.put(key, hostile)
    assert cache.get(key) == hostile  # kept exactly, and the entry stays readable
    (tmp_path / "c" / "notes.txt").write_text("not ours")
    assert cache.clear() == 1
    assert os.listdir(tmp_path / "c") == ["notes.txt"]  # never anything else


def test_cache_clear_command(tmp_path):
    d = tmp_path / ".waza-cache"
    d.mkdir()
    (d / ("f" * 64 + ".json")).write_text("{}")
    proc = run_waza("cache", "clear", cwd=tmp_path)
    assert proc.returncode == 0 and b"removed 1 cached run(s)" in proc.stdout and not d.exists()
    (tmp_path / "file").write_text("x")
    proc = run_waza("cache", "clear", "--cache-dir", "file", cwd=tmp_path)
    assert proc.returncode == 2 and b"is not a folder" in proc.stderr


def test_run_keys_change_with_what_the_run_depends_on(tmp_path):
    from waza_core.run.result_cache import run_key

    fixture = tmp_path / "fx"
    fixture.mkdir()
    (fixture / "a.txt").write_text("one")
    base = dict(config={"timeout": 1}, task={"id": "t", "prompt": "p"}, graders=[{"type": "text"}],
                files=[("a", "b")], fixture=fixture, model="m", executor="mock", trials=1, run_number=1)
    key = run_key(**base)
    assert run_key(**base) == key
    for change in ({"model": "n"}, {"run_number": 2}, {"graders": [{"type": "text", "w": 2}]},
                   {"task": {"id": "t", "prompt": "q"}}, {"files": [("a", "c")]}, {"executor": "x"},
                   {"extra": {"mocks": [1]}}):
        assert run_key(**{**base, **change}) != key, change
    (fixture / "a.txt").write_text("two")
    assert run_key(**base) != key
    key = run_key(**base)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (fixture / "linked").symlink_to(tmp_path / "one")
    linked = run_key(**base)
    assert linked != key
    (fixture / "linked").unlink()
    (fixture / "linked").symlink_to(tmp_path / "two")
    assert run_key(**base) != linked  # a link to a folder counts by where it points


# -- shell completion ------------------------------------------------------------------

def test_shell_completion_is_on():
    proc = run_waza("--help")
    assert b"--install-completion" in proc.stdout and b"--show-completion" in proc.stdout
    proc = run_waza(env={"_WAZA_COMPLETE": "complete_bash", "COMP_WORDS": "waza ga", "COMP_CWORD": "1"})
    assert proc.stdout.split() == [b"gate"]


def test_the_example_workflow_is_what_init_writes_and_the_pair_regresses(tmp_path):
    from tests.conftest import REPO

    assert run_waza("init", str(tmp_path / "p")).returncode == 0
    written = (tmp_path / "p" / ".github/workflows/waza.yml").read_text("utf-8")
    assert (REPO / "examples/ci/waza.yml").read_text("utf-8") == written
    proc = run_waza("gate", "--baseline", str(REPO / "examples/ci/baseline.json"),
                    "--current", str(REPO / "examples/ci/current.json"), "-f", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["regression_pct"] == 50.0
