"""``waza run --cache``: reuse, invalidation, non-deterministic graders, corrupt entries."""

from __future__ import annotations

import json

from tests.reporters.conftest import PLUGIN, waza_ci


def _run(suite, cache, out, *extra, env=None):
    proc = waza_ci("run", str(suite), "-p", PLUGIN, "--cache", "--cache-dir", str(cache), "-o", str(out), *extra,
                   env=env)
    return proc, json.loads(out.read_text("utf-8"))


def test_a_second_run_reuses_the_first_and_says_so(ci_suite, tmp_path):
    cache = tmp_path / "cache"
    proc, first = _run(ci_suite, cache, tmp_path / "a.json")
    assert proc.returncode == 1 and first["summary"]["cached_runs"] == 0
    assert len(list(cache.iterdir())) == 9  # 10 runs, the errored one is not stored
    proc, second = _run(ci_suite, cache, tmp_path / "b.json")
    assert proc.returncode == 1
    assert second["summary"]["cached_runs"] == 9
    assert b"9 run(s) from the result cache" in proc.stdout
    by = {t["test_id"]: t for t in second["tasks"]}
    assert by["stable-pass"]["cached"] is True and all(r["cached"] for r in by["stable-pass"]["runs"])
    assert "cached" not in by["errors-task"]  # its errored trial ran again
    assert [r["status"] for r in by["errors-task"]["runs"]] == ["passed", "error"]
    strip = lambda doc: [(t["test_id"], t["status"], [(r["status"], r["validations"]) for r in t["runs"]])  # noqa: E731
                         for t in doc["tasks"]]
    assert strip(first) == strip(second)
    assert second["summary"]["success_rate"] == first["summary"]["success_rate"]


def test_a_change_to_a_task_a_grader_or_a_fixture_runs_it_again(ci_suite, tmp_path):
    cache = tmp_path / "cache"
    _run(ci_suite, cache, tmp_path / "a.json")
    task = ci_suite.parent / "tasks" / "a-stable.yaml"
    task.write_text(task.read_text().replace("six times seven", "seven times six"))
    _, doc = _run(ci_suite, cache, tmp_path / "b.json")
    assert doc["summary"]["cached_runs"] == 7  # stable-pass's two runs are new
    assert "cached" not in {t["test_id"]: t for t in doc["tasks"]}["stable-pass"]
    eval_yaml = ci_suite.read_text().replace('contains: ["42"]', 'contains: ["4"]')
    ci_suite.write_text(eval_yaml)  # the global grader judges every task
    _, doc = _run(ci_suite, cache, tmp_path / "c.json")
    assert doc["summary"]["cached_runs"] == 0
    _, doc = _run(ci_suite, cache, tmp_path / "d.json", "--model", "other")
    assert doc["summary"]["cached_runs"] == 0
    _, doc = _run(ci_suite, cache, tmp_path / "e.json")
    assert doc["summary"]["cached_runs"] == 9
    # anything of eval.yaml counts (suite-level mocks and inputs live beside config there)
    ci_suite.write_text(ci_suite.read_text().replace("description: passing", "description: now passing"))
    _, doc = _run(ci_suite, cache, tmp_path / "f.json")
    assert doc["summary"]["cached_runs"] == 0


def test_fixture_bytes_are_part_of_the_key(tmp_path):
    proc = waza_ci("init", "demo", cwd=tmp_path)
    assert proc.returncode == 0
    demo = tmp_path / "demo"
    out = tmp_path / "r.json"
    waza_ci("run", "eval.yaml", "--cache", "-o", str(out), cwd=demo)
    waza_ci("run", "eval.yaml", "--cache", "-o", str(out), cwd=demo)
    assert json.loads(out.read_text())["summary"]["cached_runs"] == 2
    (demo / "fixtures" / "greet.py").write_text("def greet(name):\n    return 'hi'\n")
    waza_ci("run", "eval.yaml", "--cache", "-o", str(out), cwd=demo)
    assert json.loads(out.read_text())["summary"]["cached_runs"] == 1  # only the task without the fixture


def test_a_non_deterministic_grader_turns_the_cache_off(ci_suite, tmp_path):
    task = ci_suite.parent / "tasks" / "b-fails.yaml"
    task.write_text(task.read_text() + "graders:\n  - type: moody\n    name: judge\n")
    cache = tmp_path / "cache"
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-p", "tests.reporters.moody_grader", "--cache", "--cache-dir",
                   str(cache), "-q", "-o", str(tmp_path / "r.json"))
    assert proc.returncode == 1
    assert b"the result cache is off: grader(s) judge (moody) are not deterministic" in proc.stderr
    assert not cache.exists()
    assert "cached_runs" not in json.loads((tmp_path / "r.json").read_text())["summary"]


def test_a_corrupt_entry_is_ignored_with_a_warning(ci_suite, tmp_path):
    cache = tmp_path / "cache"
    _run(ci_suite, cache, tmp_path / "a.json")
    entries = sorted(cache.iterdir())
    entries[0].write_text("{not json")
    entries[1].write_bytes(b"\xff\xfe")
    proc, doc = _run(ci_suite, cache, tmp_path / "b.json")
    assert doc["summary"]["cached_runs"] == 7
    assert proc.stderr.count(b"waza: warning: result cache: ignoring corrupt entry") == 2
    assert b"Traceback" not in proc.stderr
    proc, doc = _run(ci_suite, cache, tmp_path / "c.json")  # rewritten whole
    assert doc["summary"]["cached_runs"] == 9 and b"corrupt" not in proc.stderr


def test_the_key_is_the_same_whether_the_suite_cache_was_used_or_not(ci_suite, tmp_path):
    """A task loaded through the suite cache keeps its document as compact JSON; the run
    key reads the document itself, so a run without the suite cache (WAZA_NO_CACHE=1)
    finds the runs a run with it stored, and the other way round."""
    cache = tmp_path / "cache"
    _run(ci_suite, cache, tmp_path / "a.json", env={"WAZA_NO_CACHE": "1"})
    _proc, warm = _run(ci_suite, cache, tmp_path / "b.json")  # suite cache filled
    _proc, again = _run(ci_suite, cache, tmp_path / "c.json")  # documents from the suite cache
    _proc, off = _run(ci_suite, cache, tmp_path / "d.json", env={"WAZA_NO_CACHE": "1"})
    assert warm["summary"]["cached_runs"] == again["summary"]["cached_runs"] == off["summary"]["cached_runs"] == 9


def test_the_key_is_the_same_for_the_suite_in_another_folder_run_from_another_folder(ci_suite, tmp_path):
    """Where a task or a grader is written (its file, ``where``) is not part of the key."""
    import shutil

    cache = tmp_path / "cache"
    _run(ci_suite, cache, tmp_path / "a.json")
    moved = tmp_path / "elsewhere" / "suite"
    shutil.copytree(ci_suite if ci_suite.is_dir() else ci_suite.parent, moved)
    target = moved if ci_suite.is_dir() else moved / ci_suite.name
    _proc, second = _run(target, cache, tmp_path / "b.json")
    assert second["summary"]["cached_runs"] == 9


def test_the_key_leaves_out_every_field_that_says_where():
    from waza_core.model import GraderSpec, TaskSpec
    from waza_core.run.result_cache import canonical

    task = TaskSpec(id="t", name="t", prompt="p", file="/a/t.yaml", raw={"id": "t"})
    assert canonical(task) == canonical(TaskSpec(id="t", name="t", prompt="p", file="/b/t.yaml", raw={"id": "t"}))
    assert not {"file", "filename"} & set(canonical(task))
    at = GraderSpec(type="text", name="g", config={"contains": ["x"]}, where=0, at_file="/a/t.yaml")
    written = GraderSpec(type="text", name="g", config={"contains": ["x"]}, where="b/t.yaml:4:5")
    assert canonical(at) == canonical(written) == {"type": "text", "name": "g", "weight": 1.0,
                                                   "config": {"contains": ["x"]}}


def test_the_key_reads_the_task_document_not_its_stored_form():
    from pathlib import Path

    from waza_core.model import TaskSpec
    from waza_core.run.result_cache import canonical

    doc = {"id": "t", "inputs": {"prompt": "p"}, "b": 1, "a": [1, 2]}
    kept = TaskSpec(id="t", name="t", prompt="p", file=Path("t.yaml"), raw=doc)
    blob = b'{"b":1,"a":[1,2],"id":"t","inputs":{"prompt":"p"}}'
    compact = TaskSpec(id="t", name="t", prompt="p", file=Path("t.yaml"), raw=blob)
    assert canonical(kept) == canonical(compact) and canonical(kept)["raw"] == canonical(doc)
