"""Item 1: ``-o`` targets that are not regular files, and the modes of what waza writes.

A results file is written atomically when the target is a regular file or new, written
through a symlink, written directly to a FIFO or character device, and refused (exit 2)
for anything else. An existing file keeps its mode; a new one follows the umask.
"""

from __future__ import annotations

import os
import socket
import stat

import pytest

from tests.hostile.conftest import FULL_DEV, NULL_DEV, FifoReader, is_device, make_device, no_traceback, valid_results
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core import safe_write
from waza_core.errors import WazaError


def test_a_character_device_is_written_to_not_replaced(waza, small_suite, tmp_path):
    dev = make_device(tmp_path / "null", NULL_DEV)
    proc = waza("run", str(small_suite), "-o", str(dev))
    no_traceback(proc)
    assert proc.returncode == 1  # task b fails: the device took the results
    assert is_device(dev)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".null")] == []


def test_a_full_device_is_exit_2_and_stays_a_device(waza, small_suite, tmp_path):
    dev = make_device(tmp_path / "full", FULL_DEV)
    proc = waza("run", str(small_suite), "-o", str(dev))
    no_traceback(proc)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert f"cannot write {dev}" in err and "No space left" in err
    assert is_device(dev)


def test_a_fifo_with_a_reader_gets_the_whole_results(waza, small_suite, tmp_path):
    reader = FifoReader(tmp_path / "fifo")
    proc = waza("run", str(small_suite), "-o", str(reader.path))
    no_traceback(proc)
    assert proc.returncode == 1
    doc = valid_results(reader.result())
    assert [t["test_id"] for t in doc["tasks"]] == ["a", "b"]
    assert stat.S_ISFIFO(os.lstat(reader.path).st_mode)


def test_a_fifo_nobody_reads_is_an_error_in_bounded_time(tmp_path, monkeypatch):
    monkeypatch.setattr(safe_write, "FIFO_WAIT_SECONDS", 0.3)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(WazaError, match="FIFO and nothing read it"):
        safe_write.write_file(tmp_path / "fifo", b"{}")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def test_a_symlink_is_written_through(waza, small_suite, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    proc = waza("run", str(small_suite), "-o", str(link))
    assert proc.returncode == 1
    assert link.is_symlink() and os.readlink(link) == str(real)
    valid_results(real.read_bytes())
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    safe_write.write_file(link, b"{}\n")
    assert link.is_symlink() and (tmp_path / "made.json").read_bytes() == b"{}\n"


def test_a_link_to_an_inherited_descriptor_writes_to_that_descriptor(waza, small_suite, tmp_path):
    """``-o /dev/stdout`` (a link to /proc/self/fd/1), tried on a private link of the same
    kind: the results reach stdout (a pipe here) and the human summary moves to stderr."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    proc = waza("run", str(small_suite), "-o", str(link))
    no_traceback(proc)
    assert proc.returncode == 1
    doc = valid_results(proc.stdout)
    assert len(doc["tasks"]) == 2
    assert "RESULTS  basic" in proc.stderr.decode()
    assert link.is_symlink()


def test_a_socket_or_a_folder_is_refused_before_running(waza, small_suite, tmp_path):
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        proc = waza("run", str(small_suite), "-o", str(sock_path))
    finally:
        sock.close()
    no_traceback(proc)
    assert proc.returncode == 2
    assert "it is a socket" in proc.stderr.decode()
    assert "RESULTS" not in proc.stdout.decode()  # nothing ran
    proc = waza("run", str(small_suite), "-o", str(tmp_path))
    assert proc.returncode == 2 and "folder" in proc.stderr.decode()


def test_an_existing_private_file_stays_private(waza, small_suite, tmp_path):
    out = tmp_path / "r.json"
    out.write_text("{}")
    out.chmod(0o600)
    proc = waza("run", str(small_suite), "-o", str(out))
    assert proc.returncode == 1
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    valid_results(out.read_bytes())


@pytest.mark.parametrize("umask, expected", [(0o077, 0o600), (0o022, 0o644), (0o027, 0o640)])
def test_a_new_file_follows_the_umask(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        safe_write.write_file(tmp_path / "new.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == expected


def test_a_given_mode_only_tightens_an_existing_file(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    f.chmod(0o640)
    safe_write.write_file(f, b"y", 0o600)
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    f.chmod(0o400)
    safe_write.write_file(f, b"z", 0o644)
    assert stat.S_IMODE(f.stat().st_mode) == 0o400 and f.read_bytes() == b"z"


def test_root_keeps_the_owner_of_a_file_it_rewrites(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    f = tmp_path / "f"
    f.write_text("x")
    os.chown(f, 4321, 4321)
    safe_write.write_file(f, b"y")
    st = f.stat()
    assert (st.st_uid, st.st_gid) == (4321, 4321)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    f = tmp_path / "r.json"
    f.write_text("old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(WazaError, match="No space left"):
        safe_write.write_file(f, b"new")
    assert f.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_links_are_replaced_not_followed_when_asked(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(outside)
    safe_write.write_file(link, b"new", 0o600, through_links=False)
    assert not link.is_symlink() and link.read_bytes() == b"new" and outside.read_text() == "keep"


def test_append_follows_the_same_rules(tmp_path):
    dev = make_device(tmp_path / "null", NULL_DEV)
    with safe_write.open_append(dev) as fh:
        fh.write(b"line\n")
    assert is_device(dev)
    journal = tmp_path / "j.jsonl"
    with safe_write.open_append(journal, 0o600) as fh:
        fh.write(b"1\n")
    with safe_write.open_append(journal, 0o600) as fh:
        fh.write(b"2\n")
    assert journal.read_bytes() == b"1\n2\n" and stat.S_IMODE(journal.stat().st_mode) == 0o600
    with pytest.raises(WazaError, match="folder"):
        safe_write.open_append(tmp_path)


def test_grade_output_uses_the_same_rules(waza, small_suite, tmp_path):
    results = tmp_path / "r.json"
    assert waza("run", str(small_suite), "--skip-graders", "-o", str(results)).returncode == 0
    dev = make_device(tmp_path / "full", FULL_DEV)
    proc = waza("grade", str(small_suite), "--results", str(results), "-o", str(dev))
    no_traceback(proc)
    assert proc.returncode == 2 and is_device(dev)
    null = make_device(tmp_path / "null", NULL_DEV)
    proc = waza("grade", str(small_suite), "--results", str(results), "-o", str(null))
    assert proc.returncode == 0 and is_device(null)


def test_several_models_to_a_device_write_no_file_beside_it(waza, small_suite, tmp_path):
    """``-o /dev/null -m a -m b`` once made the regular files /dev/null_a and /dev/null_b."""
    folder = tmp_path / "dev"
    folder.mkdir()
    null = make_device(folder / "null", NULL_DEV)
    proc = waza("run", str(small_suite), "-o", str(null), "-m", "a", "-m", "b/c")
    no_traceback(proc)
    assert proc.returncode == 1 and is_device(null)
    assert sorted(p.name for p in folder.iterdir()) == ["null"]
    full = make_device(folder / "full", FULL_DEV)
    proc = waza("run", str(small_suite), "-o", str(full), "-m", "a", "-m", "b")
    no_traceback(proc)
    assert proc.returncode == 2 and b"No space left" in proc.stderr and is_device(full)
    assert sorted(p.name for p in folder.iterdir()) == ["full", "null"]


def test_several_models_to_a_fifo_are_refused_before_running(waza, small_suite, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = waza("run", str(small_suite), "-o", str(fifo), "-m", "a", "-m", "b")
    no_traceback(proc)
    assert proc.returncode == 2 and b"takes one results document" in proc.stderr
    assert b"running" not in proc.stderr and sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "suite"]


def test_a_model_too_long_for_a_file_name_fails_before_running(waza, small_suite, tmp_path):
    proc = waza("run", str(small_suite), "-o", str(tmp_path / "r.json"), "-m", "a", "-m", "m" * 300)
    no_traceback(proc)
    assert proc.returncode == 2 and b"name too long" in proc.stderr.replace(b"File", b"file")
    assert b"running" not in proc.stderr


def test_output_dir_names_stay_short_whatever_the_model(waza, small_suite, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    proc = waza("run", str(small_suite), "--output-dir", str(out), "-m", "a", "-m", "x" * 300)
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == 2 and all(len(n) < 200 for n in names)
    for name in names:
        valid_results((out / name).read_bytes())


def test_a_temporary_name_that_is_taken_is_tried_again_never_reused(tmp_path, monkeypatch):
    """The temporary sibling is made with O_EXCL: a name someone else holds (a file or a
    link planted there) is skipped, never opened; the new file is private until renamed."""
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(safe_write.os, "urandom", lambda n: next(draws))
    (tmp_path / ".r.json.000000000000.tmp").write_text("someone else's")
    os.umask(old := os.umask(0))
    try:
        fd, path = safe_write._temp_sibling(str(tmp_path), ".r.json.")
    finally:
        os.umask(old)
    os.close(fd)
    assert path == str(tmp_path / ".r.json.010101010101.tmp")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert (tmp_path / ".r.json.000000000000.tmp").read_text() == "someone else's"


def test_no_free_temporary_name_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(safe_write.os, "urandom", lambda n: b"\x00" * n)
    (tmp_path / ".r.json.000000000000.tmp").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(WazaError, match=r"cannot write .*r\.json: no free temporary name"):
        safe_write.write_file(tmp_path / "r.json", b"{}")
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "r.json").exists()
