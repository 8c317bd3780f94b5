"""The file grader: waza's checks, messages and score, and no look outside the workspace."""

from __future__ import annotations

import os
import threading

import pytest

from waza_core.errors import GraderError

from .conftest import ctx


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("# Title\n")
    return root


CONFIG = {
    "must_exist": ["README.md", "missing.txt"],
    "must_not_exist": ["src/app.py", "build"],
    "content_patterns": [
        {"path": "src/app.py", "must_match": ["def main", "class \\w+"], "must_not_match": ["TODO", "42"]},
        {"path": "gone.py", "must_match": ["x"], "must_not_match": ["y"]},
    ],
}


def test_waza_messages_and_fractional_score(build, ws):
    res = build("file", CONFIG).grade(ctx(workspace=ws))
    assert res.details["failures"] == [
        "File must exist but not found: missing.txt",
        "File must not exist but found: src/app.py",
        "File src/app.py missing expected pattern: class \\w+",
        "File src/app.py contains forbidden pattern: 42",
        "File not found for content check: gone.py",
        "File gone.py missing expected pattern (file not found): x",
        "File gone.py could not verify absence of pattern (file not found): y",
    ]
    # 2 + 2 + (4 + 1) + (2 + 1) = 12 checks, 7 failed
    assert res.score == 5 / 12 and not res.passed
    assert res.feedback == "; ".join(res.details["failures"])
    assert res.details["must_exist"] == ["README.md", "missing.txt"]
    assert res.details["content_patterns"][0]["path"] == "src/app.py"
    assert res.details["workspace_dir"] == str(ws)


def test_all_pass(build, ws):
    res = build("file", {"must_exist": ["src/app.py"], "content_patterns": [{"path": "README.md",
                                                                             "must_match": ["(?m)^# \\pL+$"]}]})
    res = res.grade(ctx(workspace=ws))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All file checks passed")
    assert res.details["failures"] is None and res.details["must_not_exist"] is None


def test_no_workspace_is_a_plain_failure(build):
    res = build("file", {"must_exist": ["a"]}).grade(ctx(workspace=None))
    assert (res.score, res.passed, res.feedback) == (0.0, False, "No workspace directory available for file grading")


def test_a_directory_fails_the_readable_check_and_its_patterns(build, ws):
    res = build("file", {"content_patterns": [{"path": "src", "must_match": ["a"]}]}).grade(ctx(workspace=ws))
    assert res.details["failures"] == [f"Failed to read file src: read {ws / 'src'}: is a directory",
                                       "File src missing expected pattern (file not found): a"]
    assert res.score == 0.0


def test_a_fifo_is_refused_without_blocking(build, ws):
    os.mkfifo(ws / "pipe")
    g = build("file", {"must_exist": ["pipe"], "content_patterns": [{"path": "pipe", "must_not_match": ["x"]}]})
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", g.grade(ctx(workspace=ws))), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "reading a FIFO blocked the grader"
    assert box["r"].details["failures"] == [
        "Failed to read file pipe: openat pipe: not a regular file",
        "File pipe could not verify absence of pattern (file not found): x"]
    assert box["r"].score == 1 / 3  # must_exist passes: the FIFO exists


def test_dangling_link_inside_counts_as_missing(build, ws):
    os.symlink("nowhere.txt", ws / "dangling")
    res = build("file", {"must_exist": ["dangling"], "must_not_exist": ["dangling"]}).grade(ctx(workspace=ws))
    assert res.details["failures"] == ["File must exist but not found: dangling"]


def test_link_inside_the_workspace_is_followed(build, ws):
    os.symlink("src/app.py", ws / "alias.py")
    res = build("file", {"content_patterns": [{"path": "alias.py", "must_match": ["main"]}]}).grade(ctx(workspace=ws))
    assert res.passed


@pytest.mark.parametrize("path,reason", [
    ("/etc/hostname", "the path must be relative"),
    ("../outside.txt", "the path must not contain '..'"),
    ("src/../README.md", "the path must not contain '..'"),
    ("escape/secret", "through a symbolic link"),
    (".", "names the workspace itself"),
])
@pytest.mark.parametrize("key", ["must_exist", "must_not_exist", "content_patterns"])
def test_paths_leaving_the_workspace_are_a_grader_error(build, ws, tmp_path, path, reason, key):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    os.symlink(tmp_path / "outside", ws / "escape")
    config = {key: [{"path": path, "must_match": ["secret"]}] if key == "content_patterns" else [path]}
    with pytest.raises(GraderError) as exc:
        build("file", config, name="files").grade(ctx(workspace=ws))
    assert exc.value.kind == "path_escape"
    assert str(exc.value).startswith(f"{key} path {path!r} ")
    assert reason in str(exc.value)


def test_config_errors(problems):
    assert problems("file", {}) == ["needs at least one path in must_exist, must_not_exist or content_patterns"]
    assert problems("file", {"must_exist": []}) == [
        "needs at least one path in must_exist, must_not_exist or content_patterns"]
    assert problems("file", {"content_patterns": [{"path": "a", "must_match": ["a(?!b)"]}]}) == [
        "invalid must_match pattern 'a(?!b)' for file a: invalid perl operator: (?! "
        "(negative lookahead is not supported (waza uses RE2 syntax))"]
    assert problems("file", {"must_exits": ["a"]})[0] == "unknown key 'must_exits' (did you mean 'must_exist'?)"
    assert problems("file", {"content_patterns": [{"path": "a"}]}) == []


def test_a_content_pattern_with_only_a_path_checks_that_the_file_is_readable(build, ws):
    """waza (Go) accepts the entry and counts its one implicit check."""
    g = build("file", {"content_patterns": [{"path": "README.md"}, {"path": "missing.md"}]})
    res = g.grade(ctx(workspace=ws))
    assert (res.score, res.passed) == (0.5, False)
    assert res.details["failures"] == ["File not found for content check: missing.md"]


def test_file_grader_reads_the_workspace(registry):
    assert registry.get("grader", "file").needs_workspace is True


def test_a_path_below_a_file_is_a_stat_error_not_a_missing_file(build, ws):
    """Go's os.IsNotExist is false for ENOTDIR, so waza reports the error of os.Root's Stat
    ("statat" and the path as configured)."""
    res = build("file", {"must_exist": ["README.md/x"], "must_not_exist": ["README.md/y"]}).grade(ctx(workspace=ws))
    assert res.details["failures"] == [
        "Failed to check required file README.md/x: statat README.md/x: not a directory",
        "Failed to check forbidden file README.md/y: statat README.md/y: not a directory"]


def test_a_symlink_loop_is_a_stat_error_not_a_grader_error(build, ws):
    """Go's os.Root reports ELOOP; the run is graded, not turned into an error."""
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    res = build("file", {"must_exist": ["loop-a"], "must_not_exist": ["loop-b"],
                         "content_patterns": [{"path": "loop-a", "must_match": ["x"]}]}).grade(ctx(workspace=ws))
    assert res.details["failures"] == [
        "Failed to check required file loop-a: statat loop-a: too many levels of symbolic links",
        "Failed to check forbidden file loop-b: statat loop-b: too many levels of symbolic links",
        "Failed to read file loop-a: openat loop-a: too many levels of symbolic links",
        "File loop-a missing expected pattern (file not found): x"]
    assert res.score == 0.0
