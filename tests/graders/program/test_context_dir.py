"""The grading context directory: private modes, removal, and what tampering does."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.graders.program.conftest import IS_ROOT, context, make_unwritable, make_writable, python_grader, script
from waza_core.errors import GraderError

#: a grader body prefix: where the context is, and a place to report to
PRELUDE = """
import json, os, shutil, stat, sys, time
ctx = os.environ["WAZA_GRADING_CONTEXT"]
d = os.path.dirname(ctx)
ws = os.environ["WAZA_WORKSPACE_DIR"]
open(os.path.join(ws, "where"), "w").write(ctx)
"""


def grader(tmp_path: Path, body: str, timeout: float | None = None):
    return python_grader(script(tmp_path, PRELUDE + body), timeout=timeout)


def where(tmp_path: Path) -> tuple[Path, Path]:
    ctx = Path((tmp_path / "where").read_text())
    return ctx.parent, ctx


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o377])
def test_modes_are_0700_and_0600_whatever_the_umask(tmp_path, umask):
    g = grader(tmp_path, """
print(oct(stat.S_IMODE(os.stat(d).st_mode)), oct(stat.S_IMODE(os.stat(ctx).st_mode)))
""")
    old = os.umask(umask)
    try:
        res = g.grade(context(tmp_path))
    finally:
        os.umask(old)
    assert res.passed, res.feedback
    assert res.feedback == "0o700 0o600"


def test_directory_is_a_new_private_one_each_time(tmp_path):
    g = grader(tmp_path, "print(d)\n")
    first = g.grade(context(tmp_path)).feedback
    second = g.grade(context(tmp_path)).feedback
    assert first != second
    assert os.path.basename(first).startswith("waza-grading-")


@pytest.mark.parametrize("body,kind", [
    ("print('ok')\n", None),
    ("sys.exit(1)\n", "failed"),
    ("time.sleep(30)\n", "timeout"),
])
def test_directory_is_gone_after_success_failure_and_timeout(tmp_path, private_tmp, body, kind):
    g = grader(tmp_path, "open(os.path.join(d, 'scratch.txt'), 'w').write('x')\n" + body, timeout=1)
    if kind == "timeout":
        with pytest.raises(GraderError) as exc:
            g.grade(context(tmp_path))
        assert exc.value.kind == "timeout"
    else:
        assert g.grade(context(tmp_path)).passed is (kind is None)
    d, _ = where(tmp_path)
    assert d.parent == private_tmp
    assert not d.exists()
    assert list(private_tmp.iterdir()) == []


def test_directory_is_gone_when_the_program_cannot_start(tmp_path, private_tmp):
    from tests.graders.program.conftest import spec
    from waza_graders.program import ProgramGrader

    with pytest.raises(GraderError) as exc:
        ProgramGrader(spec(str(tmp_path / "missing"))).grade(context(tmp_path))
    assert exc.value.kind == "start_failed"
    assert list(private_tmp.iterdir()) == []


def test_extra_files_directories_and_links_are_removed_but_link_targets_are_not(tmp_path, private_tmp):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    g = grader(tmp_path, f"""
os.makedirs(os.path.join(d, "sub", "deeper"))
open(os.path.join(d, "sub", "deeper", "copy.json"), "w").write(open(ctx).read())
open(os.path.join(d, ".hidden"), "w").write("x")
os.symlink({str(outside)!r}, os.path.join(d, "link-to-outside"))
os.symlink({str(outside)!r}, os.path.join(d, "sub", "inner-link"))
os.mkfifo(os.path.join(d, "fifo"))
""")
    assert g.grade(context(tmp_path)).passed
    assert list(private_tmp.iterdir()) == []
    assert (outside / "precious.txt").read_text() == "keep me"


def _expect_tampered(g, tmp_path, *names_in_message: str) -> str:
    with pytest.raises(GraderError) as exc:
        g.grade(context(tmp_path))
    assert exc.value.kind == "context_tampered", exc.value
    message = str(exc.value)
    for name in names_in_message:
        assert name in message, message
    return message


def test_program_deletes_the_file(tmp_path):
    g = grader(tmp_path, "os.unlink(ctx)\n")
    message = _expect_tampered(g, tmp_path, "deleted or moved away")
    d, ctx = where(tmp_path)
    assert str(ctx) in message
    assert d.is_dir()  # left in place: waza deletes nothing it cannot vouch for
    shutil.rmtree(d)


def test_program_replaces_the_file(tmp_path):
    g = grader(tmp_path, """
tmp = os.path.join(d, "new")
open(tmp, "w").write("replacement")
os.replace(tmp, ctx)
""")
    message = _expect_tampered(g, tmp_path, "replaced")
    d, ctx = where(tmp_path)
    assert str(ctx) in message
    assert ctx.read_text() == "replacement"
    shutil.rmtree(d)


def test_program_replaces_the_file_with_a_symlink(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("not waza's")
    g = grader(tmp_path, f"""
os.unlink(ctx)
os.symlink({str(target)!r}, ctx)
""")
    message = _expect_tampered(g, tmp_path, "replaced")
    d, ctx = where(tmp_path)
    assert str(ctx) in message
    assert ctx.is_symlink() and target.read_text() == "not waza's"
    shutil.rmtree(d)


def test_program_renames_the_directory(tmp_path):
    g = grader(tmp_path, "os.rename(d, d + '-moved')\n")
    message = _expect_tampered(g, tmp_path, "moved away or deleted")
    d, _ = where(tmp_path)
    assert str(d) in message
    moved = Path(str(d) + "-moved")
    assert (moved / "context.json").is_file()  # untouched: transcript data may be there
    shutil.rmtree(moved)


def test_program_replaces_the_directory(tmp_path):
    g = grader(tmp_path, """
os.rename(d, d + "-moved")
os.mkdir(d, 0o700)
open(ctx, "w").write("{}")
""")
    message = _expect_tampered(g, tmp_path, "replaced")
    d, ctx = where(tmp_path)
    assert str(d) in message
    assert ctx.read_text() == "{}"  # the replacement is left in place
    assert (Path(str(d) + "-moved") / "context.json").is_file()
    shutil.rmtree(d)
    shutil.rmtree(str(d) + "-moved")


def test_program_replaces_the_directory_with_a_symlink(tmp_path):
    g = grader(tmp_path, """
os.rename(d, d + "-moved")
os.symlink(d + "-moved", d)
""")
    message = _expect_tampered(g, tmp_path, "replaced")
    d, _ = where(tmp_path)
    assert str(d) in message
    assert d.is_symlink() and (Path(str(d) + "-moved") / "context.json").is_file()
    os.unlink(d)
    shutil.rmtree(str(d) + "-moved")


def test_tampering_after_a_timeout_reports_both(tmp_path):
    g = grader(tmp_path, "os.unlink(ctx)\ntime.sleep(30)\n", timeout=1)
    message = _expect_tampered(g, tmp_path, "deleted or moved away", "timed out after 1 s")
    shutil.rmtree(where(tmp_path)[0])
    assert message


def test_unwritable_temporary_directory_is_an_error_naming_it(tmp_path, private_tmp):
    g = grader(tmp_path, "print('never runs')\n")
    make_unwritable(private_tmp)
    try:
        with pytest.raises(GraderError) as exc:
            g.grade(context(tmp_path))
    finally:
        make_writable(private_tmp)
    assert exc.value.kind == "context_io"
    assert str(private_tmp) in str(exc.value) and "cannot create a grading context directory" in str(exc.value)
    assert not (tmp_path / "where").exists()


@pytest.mark.parametrize("make", ["missing", "a-file"])
def test_unusable_tmpdir_is_an_error_not_a_silent_fallback(tmp_path, monkeypatch, make):
    base = tmp_path / make
    if make == "a-file":
        base.write_text("")
    monkeypatch.setenv("TMPDIR", str(base))
    g = grader(tmp_path, "print('never runs')\n")
    with pytest.raises(GraderError) as exc:
        g.grade(context(tmp_path))
    assert exc.value.kind == "context_io" and str(base) in str(exc.value)


def test_context_file_that_cannot_be_written_is_an_error_naming_it(tmp_path, private_tmp):
    """A real write failure: the file-size limit makes write() fail with EFBIG."""
    code = f"""
import json, os, resource, signal, sys
sys.path.insert(0, {str(REPO)!r})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from tests.graders.program.conftest import IS_ROOT, context, spec
from waza_core.errors import GraderError
from waza_graders.program import ProgramGrader
g = ProgramGrader(spec(sys.executable, "-S", "-c", "print('never runs')"))
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
try:
    g.grade(context(None, output="x" * 100000))
except GraderError as exc:
    print(json.dumps({{"kind": exc.kind, "message": str(exc)}}))
"""
    env = dict(os.environ, TMPDIR=str(private_tmp))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    err = json.loads(proc.stdout)
    assert err["kind"] == "context_io"
    assert "cannot write grading context" in err["message"] and "/context.json" in err["message"]
    assert str(private_tmp) in err["message"]
    assert list(private_tmp.iterdir()) == []  # the half-written file went with its directory


def test_directory_that_cannot_be_removed_is_an_error_naming_it(tmp_path):
    if IS_ROOT and shutil.which("chattr") is None:
        pytest.skip("running as root without chattr")
    g = grader(tmp_path, """
import subprocess
sub = os.path.join(d, "locked")
os.makedirs(sub)
open(os.path.join(sub, "copy.json"), "w").write(open(ctx).read())
if os.geteuid() == 0:
    subprocess.run(["chattr", "+i", sub], check=True)
else:
    os.chmod(sub, 0o500)
""")
    try:
        with pytest.raises(GraderError) as exc:
            g.grade(context(tmp_path))
    finally:
        d, _ = where(tmp_path)
        make_writable(d / "locked")
    assert exc.value.kind == "context_io"
    assert str(d / "locked") in str(exc.value) and "transcript data may remain" in str(exc.value)
    shutil.rmtree(d)


def test_modes_are_checked_by_a_stat_from_outside(tmp_path):
    """The directory really is private to the owner (not just reported so by the child)."""
    g = grader(tmp_path, "time.sleep(0.5)\n")
    import threading

    seen = {}

    def peek():
        import time

        for _ in range(100):
            if (tmp_path / "where").exists():
                d, ctx = where(tmp_path)
                try:
                    seen["d"] = stat.S_IMODE(os.stat(d).st_mode)
                    seen["f"] = stat.S_IMODE(os.stat(ctx).st_mode)
                    seen["uid"] = os.stat(ctx).st_uid
                except FileNotFoundError:
                    pass
                return
            time.sleep(0.02)

    t = threading.Thread(target=peek)
    t.start()
    assert g.grade(context(tmp_path)).passed
    t.join()
    assert seen == {"d": 0o700, "f": 0o600, "uid": os.getuid()}
