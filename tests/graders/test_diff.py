"""The diff grader: snapshots (exact bytes), fragments, waza's messages, --update-snapshots."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import GraderError
from waza_core.grading.base import GraderSetup

from .conftest import ctx, suite_at


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "out.txt").write_bytes(b"line one\nline two\n")
    return root


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "snapshots" / "out.txt").write_bytes(b"line one\nline two\n")
    return suite_at(folder)


def test_snapshot_and_fragments_pass(build, ws, suite):
    cfg = {"context_dir": str(suite.dir / "snapshots"),
           "expected_files": [{"path": "out.txt", "snapshot": "out.txt",
                               "contains": ["+line one", "two", "-three", "", "+  ", "-\t ", "  line two "]}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All diff checks passed")
    assert res.details == {"expected_files": [{"path": "out.txt", "snapshot": "out.txt",
                                               "contains": cfg["expected_files"][0]["contains"]}],
                           "failures": None, "workspace_dir": str(ws), "snapshot_updates": []}


def test_snapshot_is_exact_bytes_and_fragments_are_trimmed_substrings(build, ws, suite):
    (ws / "out.txt").write_bytes(b"line one\r\nline two\r\n")
    cfg = {"context_dir": str(suite.dir / "snapshots"),
           "expected_files": [{"path": "out.txt", "snapshot": "out.txt",
                               "contains": ["+ne o", "-\u00a0two\u00a0", "+absent"]}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    assert res.details["failures"] == ["File out.txt does not match snapshot out.txt",
                                       "File out.txt contains fragment that should be absent: two",
                                       "File out.txt missing expected fragment: absent"]
    assert res.score == 2 / 5  # exists + snapshot + 3 fragments


def test_missing_file_fails_every_sub_check(build, ws, suite):
    cfg = {"context_dir": str(suite.dir), "expected_files": [
        {"path": "nope.txt", "snapshot": "s.txt", "contains": ["+a", "-b"]},
        {"path": "out.txt", "contains": ["one"]}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    assert res.details["failures"] == ["Expected file not found in workspace: nope.txt",
                                       "Snapshot comparison skipped (file not found): nope.txt",
                                       "Contains check skipped (file not found): nope.txt \u2192 +a",
                                       "Contains check skipped (file not found): nope.txt \u2192 -b"]
    assert res.score == 2 / 6


def test_unreadable_snapshot_is_a_failure_naming_it(build, ws, suite):
    cfg = {"context_dir": str(suite.dir), "expected_files": [{"path": "out.txt", "snapshot": "none.txt"}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    assert res.feedback == (f"Failed to read snapshot file none.txt for out.txt: open {suite.dir / 'none.txt'}: "
                            "no such file or directory")
    assert res.score == 0.5


def test_relative_context_dir_is_found_from_the_cwd_or_else_the_suite(build, ws, suite, tmp_path, monkeypatch):
    cfg = {"context_dir": "snapshots", "expected_files": [{"path": "out.txt", "snapshot": "out.txt"}]}
    monkeypatch.chdir(tmp_path)  # no ./snapshots here: the suite's folder is used
    assert build("diff", cfg, suite=suite).grade(ctx(workspace=ws)).passed
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "out.txt").write_text("from the cwd\n")
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))  # waza's rule first: the cwd
    assert res.feedback == "File out.txt does not match snapshot out.txt"


def test_snapshot_leaving_context_dir_through_a_link_is_invalid(build, ws, suite, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "out.txt").write_bytes(b"line one\nline two\n")
    os.symlink(tmp_path / "elsewhere", suite.dir / "snapshots" / "link")
    cfg = {"context_dir": str(suite.dir / "snapshots"),
           "expected_files": [{"path": "out.txt", "snapshot": "link/out.txt"}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    assert res.feedback == "Invalid snapshot file link/out.txt for out.txt: path escapes context directory"


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "link/secret"])
def test_workspace_paths_leaving_it_are_a_grader_error(build, ws, tmp_path, path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "secret").write_text("s")
    os.symlink(tmp_path / "o", ws / "link")
    with pytest.raises(GraderError) as exc:
        build("diff", {"expected_files": [{"path": path, "contains": ["s"]}]}).grade(ctx(workspace=ws))
    assert exc.value.kind == "path_escape" and f"expected_files path {path!r} is refused" in str(exc.value)


def test_no_workspace(build):
    res = build("diff", {"expected_files": [{"path": "a", "contains": ["x"]}]}).grade(ctx())
    assert (res.score, res.passed, res.feedback) == (0.0, False, "No workspace directory available for diff grading")


def test_update_snapshots_rewrites_creates_and_counts(build, ws, suite):
    snaps = suite.dir / "snapshots"
    (snaps / "out.txt").write_bytes(b"line one\nold\nextra\n")
    os.chmod(snaps / "out.txt", 0o600)
    (ws / "same.txt").write_bytes(b"same")
    (snaps / "same.txt").write_bytes(b"same")
    (ws / "new.txt").write_bytes(b"a\nb")
    cfg = {"context_dir": str(snaps), "expected_files": [
        {"path": "out.txt", "snapshot": "out.txt"}, {"path": "same.txt", "snapshot": "same.txt"},
        {"path": "new.txt", "snapshot": "deep/new.txt"}]}
    res = build("diff", cfg, suite=suite, setup=GraderSetup(update_snapshots=True)).grade(ctx(workspace=ws))
    assert res.passed and res.score == 1.0
    assert res.feedback == "All diff checks passed (snapshots: 1 updated, 1 created, 1 unchanged)"
    assert res.details["snapshot_updates"] == [
        {"path": "out.txt", "snapshot": "out.txt", "status": "updated", "lines_changed": 2},
        {"path": "same.txt", "snapshot": "same.txt", "status": "unchanged", "lines_changed": 0},
        {"path": "new.txt", "snapshot": "deep/new.txt", "status": "created", "lines_changed": 2}]
    assert (snaps / "out.txt").read_bytes() == b"line one\nline two\n"
    assert stat.S_IMODE(os.stat(snaps / "out.txt").st_mode) == 0o600  # an existing file keeps its mode
    assert (snaps / "deep" / "new.txt").read_bytes() == b"a\nb"
    assert not [p for p in snaps.rglob(".*.tmp")]
    # the config key does the same as the flag
    assert build("diff", dict(cfg, update_snapshots=True), suite=suite).grade(ctx(workspace=ws)).passed


def test_update_never_writes_outside_the_suite_folder(build, ws, suite, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    cfg = {"context_dir": str(outside), "expected_files": [{"path": "out.txt", "snapshot": "out.txt"}]}
    res = build("diff", cfg, suite=suite, setup=GraderSetup(update_snapshots=True)).grade(ctx(workspace=ws))
    assert not res.passed and res.feedback.startswith("Failed to write snapshot file out.txt for out.txt: ")
    assert "outside the suite folder" in res.feedback
    assert not (outside / "out.txt").exists()
    # a snapshot link inside the suite that points outside is refused too
    os.symlink(outside / "target.txt", suite.dir / "snapshots" / "link.txt")
    cfg = {"context_dir": str(suite.dir), "expected_files": [{"path": "out.txt", "snapshot": "snapshots/link.txt"}]}
    res = build("diff", cfg, suite=suite, setup=GraderSetup(update_snapshots=True)).grade(ctx(workspace=ws))
    assert res.feedback == "Invalid snapshot file snapshots/link.txt for out.txt: path escapes context directory"
    cfg = {"expected_files": [{"path": "out.txt", "snapshot": "snapshots/link.txt"}]}  # no context_dir
    res = build("diff", cfg, suite=suite, setup=GraderSetup(update_snapshots=True)).grade(ctx(workspace=ws))
    assert "outside the suite folder" in res.feedback and not res.passed
    assert not (outside / "target.txt").exists()


def test_update_without_a_known_suite_writes_nothing(build, ws, tmp_path):
    cfg = {"context_dir": str(tmp_path), "expected_files": [{"path": "out.txt", "snapshot": "s.txt"}]}
    res = build("diff", cfg, setup=GraderSetup(update_snapshots=True)).grade(ctx(workspace=ws))
    assert "no suite folder is known" in res.feedback and not (tmp_path / "s.txt").exists()


def test_config_errors(problems):
    assert problems("diff", {}) == ["missing required key 'expected_files'"]
    assert problems("diff", {"expected_files": []}) == ["expected_files: [] should be non-empty"]
    assert problems("diff", {"expected_files": [{"path": "a", "snapshot": ""}]}) == [
        "expected_files[0] ('a') must have 'snapshot' or 'contains'"]
    assert problems("diff", {"expected_files": [{"path": "a", "contains": ["x"]}], "update": True}) == [
        "unknown key 'update'; expected one of: context_dir, expected_files, update_snapshots"]


SUITE = """\
name: snap
skill: demo
config:
  executor: cli
  model: toy
  trials_per_task: 1
  timeout_seconds: 30
  cli:
    command: ["{python}", "-c", "open('report.txt', 'w').write('status: ready\\\\n')"]
graders:
  - type: diff
    name: report
    config:
      context_dir: snapshots
      expected_files:
        - path: report.txt
          snapshot: report.txt
tasks: ["tasks/*.yaml"]
"""


def test_waza_run_update_snapshots_end_to_end(waza, tmp_path):
    import sys

    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "snapshots").mkdir()
    (suite / "eval.yaml").write_text(SUITE.replace("{python}", sys.executable))
    (suite / "tasks" / "t.yaml").write_text("id: t\nname: t\ninputs:\n  prompt: write the report\n")
    (suite / "snapshots" / "report.txt").write_text("status: stale\n")
    out = tmp_path / "r.json"
    first = waza("run", str(suite / "eval.yaml"), "-o", str(out), cwd=tmp_path)
    assert first.returncode == 1, first.stderr.decode()
    v = json.loads(out.read_text())["tasks"][0]["runs"][0]["validations"]["report"]
    assert v["feedback"] == "File report.txt does not match snapshot report.txt"
    second = waza("run", str(suite / "eval.yaml"), "--update-snapshots", "-o", str(out), cwd=tmp_path)
    assert second.returncode == 0, second.stderr.decode()
    v = json.loads(out.read_text())["tasks"][0]["runs"][0]["validations"]["report"]
    assert v["feedback"] == "All diff checks passed (snapshots: 1 updated, 0 created, 0 unchanged)"
    assert (suite / "snapshots" / "report.txt").read_text() == "status: ready\n"
    assert waza("run", str(suite / "eval.yaml"), cwd=tmp_path).returncode == 0


def test_symlink_loops_are_failures_not_errors(build, ws, suite):
    """A loop in the workspace is a missing file (waza reads through os.Root and fails); a
    loop where a snapshot should be is an unreadable snapshot."""
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    os.symlink("snap-b", suite.dir / "snapshots" / "snap-a")
    os.symlink("snap-a", suite.dir / "snapshots" / "snap-b")
    cfg = {"context_dir": str(suite.dir / "snapshots"), "expected_files": [
        {"path": "loop-a", "contains": ["x"]}, {"path": "out.txt", "snapshot": "snap-a"}]}
    res = build("diff", cfg, suite=suite).grade(ctx(workspace=ws))
    failures = res.details["failures"]
    assert failures[:2] == ["Expected file not found in workspace: loop-a",
                            "Contains check skipped (file not found): loop-a \u2192 x"]
    snap = suite.dir / "snapshots" / "snap-a"
    assert failures[2] == f"Failed to read snapshot file snap-a for out.txt: open {snap}: " \
                          "too many levels of symbolic links"
    assert res.score == 1 / 4
