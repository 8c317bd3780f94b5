"""Candidate identity, path policy, storage, seeds, duplicates and malformed proposals."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from waza_core.optimize import candidates as c
from waza_core.optimize.failures import OptimizeFailure

from .conftest import files

paths = st.text(alphabet="abcXYZ019._-/", min_size=1, max_size=30)
contents = st.text(max_size=50).filter(lambda s: c.content_problem(s) is None)
file_sets = st.dictionaries(paths.filter(lambda p: c.path_problem(p) is None), contents, min_size=1, max_size=6)


@given(file_sets, st.randoms())
def test_identity_is_independent_of_file_order(fs, rnd):
    items = list(fs.items())
    shuffled = items[:]
    rnd.shuffle(shuffled)
    assert c.candidate_id("context-overlay", items) == c.candidate_id("context-overlay", shuffled)
    assert c.Candidate("context-overlay", tuple(items)).id == c.Candidate("context-overlay", tuple(shuffled)).id


@given(file_sets, st.data())
def test_identity_changes_with_any_byte(fs, data):
    items = sorted(fs.items())
    base = c.candidate_id("context-overlay", items)
    i = data.draw(st.integers(0, len(items) - 1))
    path, content = items[i]
    raw = bytearray(content.encode())
    if raw:
        j = data.draw(st.integers(0, len(raw) - 1))
        raw[j] = (raw[j] + 1) % 128 if raw[j] < 128 else raw[j]
        changed = raw.decode("utf-8", "replace")
        if changed == content:
            changed = content + "!"
    else:
        changed = "!"
    mutated = items[:i] + [(path, changed)] + items[i + 1:]
    assert c.candidate_id("context-overlay", mutated) != base
    assert c.candidate_id("skill-directory", items) != base  # the target is part of the identity
    # moving a byte between path and content, or between files, changes it too
    assert c.candidate_id("context-overlay", [(path + "x", content)]) != c.candidate_id(
        "context-overlay", [(path, "x" + content)])


@settings(max_examples=examples(300))
@given(st.lists(st.text(alphabet="aA.-_/\\:0COMNULcon1 ", min_size=1, max_size=20), min_size=1, max_size=5))
def test_accepted_paths_stay_inside_and_never_collide(raw_paths):
    fs = [{"path": p, "content": "x"} for p in dict.fromkeys(raw_paths)]
    try:
        accepted = c.check_files(fs, "context-overlay")
    except OptimizeFailure as exc:
        assert exc.category in ("unsafe_candidate_path", "malformed_proposal")
        return
    root = Path("/cand/root")
    folded = set()
    for p, _ in accepted:
        full = Path(os.path.normpath(root.joinpath(*p.split("/"))))
        assert full.is_relative_to(root) and full != root
        assert not PurePosixPath(p).is_absolute() and "\\" not in p
        assert all(not seg.startswith(".") for seg in p.split("/"))
        assert p.casefold() not in folded
        folded.add(p.casefold())
    keys = sorted(folded)
    for a in keys:  # no file is also a folder of another
        assert not any(b.startswith(a + "/") for b in keys)


@pytest.mark.parametrize("path", [
    "/etc/passwd", "../up.md", "a/../b.md", "a/./b.md", ".env", "a/.git/config", ".git", "a\\b.md",
    "C:/x.md", "c:x.md", "CON", "con.txt", "a/Aux.md", "lpt9.log", "COM1", "a//b.md", "a/", "/",
    "trailing.", "sp ace.md", "é.md", "x" * 101, "/".join(["d"] * 17), ("a" * 99 + "/") * 3,
])
def test_path_policy_rejects(path):
    assert c.path_problem(path) is not None


@pytest.mark.parametrize("path", ["SKILL.md", "a/b/c.txt", "refs/x-y_z.1.md", "con-tips.md", "comms.md"])
def test_path_policy_accepts(path):
    assert c.path_problem(path) is None


def test_case_fold_and_file_folder_collisions():
    assert c.collision_problem(["README.md", "readme.md"])
    assert c.collision_problem(["a", "a/b"])
    assert c.collision_problem(["A", "a/b"])
    assert c.collision_problem(["a/b", "a/c"]) is None


def test_seed_with_symlink_is_rejected(tmp_path):
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "a.md").write_text("x")
    os.symlink(tmp_path / "seed" / "a.md", tmp_path / "seed" / "b.md")
    with pytest.raises(OptimizeFailure) as exc:
        c.load_seed(tmp_path / "seed", "context-overlay")
    assert exc.value.category == "unsafe_candidate_path" and "symlink" in exc.value.message


def test_seed_symlink_fails_the_run_before_any_evaluation(suite):
    os.symlink(suite.seed / "checklist.md", suite.seed / "link.md")
    r = suite.run([])
    assert r.category == "unsafe_candidate_path" and r.report["evaluations"] == [] and r.code == 1


def test_seed_must_be_utf8_text(tmp_path):
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "a.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(OptimizeFailure) as exc:
        c.load_seed(tmp_path / "seed", "context-overlay")
    assert exc.value.category == "invalid_config"


def test_candidates_are_stored_before_evaluation(suite, monkeypatch):
    from waza_core.optimize import evaluate as ev

    seen = []
    real = ev.run_engine

    def spy(suite_, registry, cand, target, task_ids, context_dir, **placement):
        folder = out_dir[0] / "candidates" / cand.prefix
        seen.append((folder / "candidate.json").is_file() and (folder / "files" / "checklist.md").is_file())
        return real(suite_, registry, cand, target, task_ids, context_dir, **placement)

    out_dir = [suite.root / "out1"]
    monkeypatch.setattr(ev, "run_engine", spy)
    r = suite.run([files("alpha beta gamma")])
    assert r.outcome == "accepted"
    assert len(seen) == 4 and all(seen)


def test_storage_failure_is_an_infrastructure_failure(suite, monkeypatch):
    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(c, "write_tree", broken)
    r = suite.run([files("alpha beta")])
    assert r.category == "infrastructure_failure" and r.report["evaluations"] == []


def test_duplicates_use_an_iteration_but_no_evaluation(suite):
    r = suite.run([files("alpha beta"), files("alpha beta"), files("alpha gamma\n")], max_iterations=3)
    results = [p["result"] for p in r.report["proposals"]]
    assert results == ["candidate", "duplicate", "duplicate"]  # the third equals the seed
    assert r.report["budget"]["iterations_used"] == 3
    assert [e["role"] for e in r.report["evaluations"] if e["split"] == "optimization"] == ["seed", "candidate"]
    assert r.report["stop_reason"] == "iteration_budget"


@pytest.mark.parametrize("entry,category", [
    ({"raw": "{nope"}, "malformed_proposal"),
    ({"raw": '{"kind": "waza.optimizer-adapter-response"} trailing'}, "malformed_proposal"),
    ({"response": {"kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "propose",
                   "contract_version": "1.0", "status": "done", "parent_id": "0" * 64,
                   "usage": {"status": "unavailable"}}}, "malformed_proposal"),       # wrong parent
    ({"response": {"kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "propose",
                   "contract_version": "7.0", "status": "done", "parent_id": "0" * 64,
                   "usage": {"status": "unavailable"}}}, "unsupported_version"),
    ({"files": [{"path": "a.md", "content": "nul\u0000"}]}, "malformed_proposal"),       # binary
    ({"files": [{"path": "a.md", "content": "\ud800"}]}, "malformed_proposal"),          # lone surrogate
    ({"files": [{"path": "a.md", "content": "1"}, {"path": "a.md", "content": "2"}]}, "malformed_proposal"),
    ({"files": [{"path": "../escape.md", "content": "x"}]}, "unsafe_candidate_path"),
    ({"files": [{"path": "A.md", "content": "x"}, {"path": "a.md", "content": "y"}]}, "unsafe_candidate_path"),
    ({"files": [{"path": "checklist.md/inner.md", "content": "x"}]}, "unsafe_candidate_path"),  # file as folder
    ({"files": [{"path": "a.md", "content": "x"}], "usage": {"status": "measured"}}, "malformed_proposal"),
    ({"error": "model exploded"}, "optimizer_failure"),
])
def test_bad_proposals_fail_the_run(suite, entry, category):
    r = suite.run([entry])
    assert r.category == category, r.report["failure"]
    assert r.code == 1 and r.outcome == "failed"
    prop = r.report["proposals"][0]
    assert prop["result"] == "failed" and prop["failure"]["category"] == category
    assert len(r.report["evaluations"]) == 1  # only the seed was evaluated


def test_overlay_must_not_replace_a_context_folder(suite):
    (suite.dir / "fixtures" / "docs").mkdir()
    (suite.dir / "fixtures" / "docs" / "a.md").write_text("x")
    r = suite.run([files("x", path="docs")])
    assert r.category == "unsafe_candidate_path"


def test_skill_candidate_without_skill_md_is_malformed(make, tmp_path):
    s = make(executor="skillecho")
    s.seed = tmp_path / "skillseed"
    (s.seed).mkdir()
    (s.seed / "SKILL.md").write_text("---\nname: example\n---\nalpha gamma\n")
    r = s.run([files("no skill here", path="notes.md")], target="skill-directory")
    assert r.category == "malformed_proposal" and "SKILL.md" in r.report["failure"]["message"]


def test_crashing_adapter_is_an_optimizer_failure(suite):
    r = suite.run([], adapter="crashing")
    assert r.category == "optimizer_failure" and "segfault-ish" in r.report["failure"]["message"]
