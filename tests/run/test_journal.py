"""``waza run --journal`` / ``--resume`` with the local backend: real processes, real
SIGKILL, real files (FIFOs and locks made in tmp_path)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import run_waza
from tests.run.helpers import cli, gradings, journal_tasks, slow_suite
from waza_core.suite.schema import plain_validator


def _complete_results(out, tasks):
    doc = json.loads(out.read_bytes())
    assert doc["incomplete"] is False
    assert sorted(t["test_id"] for t in doc["tasks"]) == [f"t{i:02d}" for i in range(1, tasks + 1)]
    assert all(len(t["runs"]) == 1 and t["status"] == "passed" for t in doc["tasks"])
    assert not list(plain_validator("results").iter_errors(doc))
    return doc


def test_sigkilled_run_resumes_without_running_finished_runs_again(tmp_path):
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", 30, log, sleep=0.3)
    journal, out = tmp_path / "runs.jsonl", tmp_path / "out.json"
    # the killed driver cannot remove its workspaces and grading folders: they go to the test's own temp
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", TMPDIR=str(tmp_path / "tmp"))
    proc = subprocess.Popen([sys.executable, "-m", "waza_core", "run", str(suite), "--workers", "3",
                             "--journal", str(journal), "-o", str(out), "-q"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not journal.exists() or journal.read_bytes().count(b"\n") < 11):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(1.0)  # graders the killed driver left behind finish their sleep and log
    done_before = journal_tasks(journal)
    assert 10 <= len(done_before) < 30, "the kill came too late to test anything"
    assert not out.exists()
    graded_before = gradings(log)

    proc = run_waza("run", str(suite), "--workers", "3", "--resume", str(journal), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    doc = _complete_results(out, 30)
    graded_after = gradings(log)
    for task in done_before:  # a journaled run is taken from the journal, never run again
        assert graded_after[task] == graded_before[task] == 1, task
    assert set(graded_after) == {f"t{i:02d}" for i in range(1, 31)}
    # the journal now holds every run once, and the results are the journal's runs
    assert sorted(journal_tasks(journal)) == sorted(t["test_id"] for t in doc["tasks"])
    first = json.loads(journal.read_bytes().split(b"\n")[1])
    entry = next(t for t in doc["tasks"] if t["test_id"] == first["task_id"])
    assert entry["runs"][0] == first["run"]


@pytest.fixture
def finished_journal(tmp_path):
    """A small suite run to the end with a journal: (suite, journal, log)."""
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", 3, log, sleep=0)
    journal = tmp_path / "runs.jsonl"
    proc = cli("run", str(suite), "--journal", str(journal), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    return suite, journal, log


def test_journal_format_first_line_names_the_suite(finished_journal):
    _suite, journal, _log = finished_journal
    lines = journal.read_bytes().split(b"\n")
    assert lines[-1] == b""  # every line is complete
    head = json.loads(lines[0])
    assert head["waza_journal"] == 1 and len(head["suite"]) == 64 and head["eval_name"] == "slow-suite"
    assert head["settings"]["executor"] == "mock" and head["settings"]["model"] == "mock-model"
    runs = [json.loads(line) for line in lines[1:-1]]
    assert sorted((r["task_id"], r["trial"]) for r in runs) == [("t01", 1), ("t02", 1), ("t03", 1)]
    assert all(r["run"]["status"] == "passed" and r["run"]["worker"] == "local" for r in runs)


def test_torn_last_line_is_ignored_and_cut_off(finished_journal, tmp_path):
    suite, journal, log = finished_journal
    data = journal.read_bytes()
    lines = data.split(b"\n")
    # the crash tore the last run's line: that run is run again, nothing else
    torn = b"\n".join(lines[:-2]) + b"\n" + lines[-2][: len(lines[-2]) // 2]
    journal.write_bytes(torn)
    lost = json.loads(lines[-2])["task_id"]
    before = gradings(log)
    out = tmp_path / "out.json"
    proc = cli("run", str(suite), "--resume", str(journal), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    _complete_results(out, 3)
    after = gradings(log)
    assert after - before == {lost: 1}
    text = journal.read_bytes()
    assert text.endswith(b"\n") and len(text.split(b"\n")) == 5  # header, 3 runs, ""
    assert all(json.loads(line) for line in text.split(b"\n")[:-1])


def test_resume_of_a_finished_journal_runs_nothing(finished_journal, tmp_path):
    suite, journal, log = finished_journal
    before = gradings(log)
    out = tmp_path / "out.json"
    proc = cli("run", str(suite), "--resume", str(journal), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    _complete_results(out, 3)
    assert gradings(log) == before


def test_journal_of_another_suite_is_exit_2(finished_journal, tmp_path):
    _suite, journal, _log = finished_journal
    other = slow_suite(tmp_path / "other", 4, tmp_path / "other.log", sleep=0)
    proc = cli("run", str(other), "--resume", str(journal))
    assert proc.returncode == 2
    assert b"belongs to another suite" in proc.stderr and b"Traceback" not in proc.stderr


def test_edited_suite_is_another_suite(finished_journal):
    suite, journal, _log = finished_journal
    task = suite.parent / "tasks" / "t02.yaml"
    task.write_text(task.read_text().replace("p2", "changed"))
    proc = cli("run", str(suite), "--resume", str(journal))
    assert proc.returncode == 2 and b"edited since" in proc.stderr


def test_resume_with_another_model_is_exit_2(finished_journal):
    suite, journal, _log = finished_journal
    proc = cli("run", str(suite), "--resume", str(journal), "--model", "other-model")
    assert proc.returncode == 2
    assert b"model 'mock-model', this run has 'other-model'" in proc.stderr


def test_damaged_middle_line_names_the_line(finished_journal):
    suite, journal, _log = finished_journal
    lines = journal.read_bytes().split(b"\n")
    lines[2] = b"{not json"
    journal.write_bytes(b"\n".join(lines))
    proc = cli("run", str(suite), "--resume", str(journal))
    assert proc.returncode == 2
    assert f"{journal}:3: not a journal entry".encode() in proc.stderr


def test_not_a_journal(tmp_path):
    suite = slow_suite(tmp_path / "suite", 1, tmp_path / "log", sleep=0)
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello\n")
    proc = cli("run", str(suite), "--resume", str(bogus))
    assert proc.returncode == 2 and b"not a waza run journal" in proc.stderr


def test_journal_targets_checked_before_running(tmp_path):
    log = tmp_path / "log"
    suite = slow_suite(tmp_path / "suite", 1, log, sleep=0)
    existing = tmp_path / "old.jsonl"
    existing.write_text('{"waza_journal": 1}\n')
    cases = [
        (["--journal", str(existing)], b"--resume"),  # never appended to blindly, never replaced
        (["--journal", str(tmp_path)], b"a folder"),
        (["--journal", str(tmp_path / "missing" / "j.jsonl")], b"does not exist"),
        (["--resume", str(tmp_path / "nope.jsonl")], b"no such journal"),
        (["--resume", str(existing), "--journal", str(tmp_path / "other.jsonl")], b"--resume alone"),
    ]
    for args, fragment in cases:
        proc = cli("run", str(suite), *args)
        assert proc.returncode == 2, args
        assert fragment in proc.stderr, (args, proc.stderr)
    assert existing.read_text() == '{"waza_journal": 1}\n'
    assert not log.exists()  # nothing ran


def test_resume_of_a_fifo_is_refused(tmp_path):
    suite = slow_suite(tmp_path / "suite", 1, tmp_path / "log", sleep=0)
    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    proc = cli("run", str(suite), "--resume", str(fifo))
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_journal_into_a_fifo_is_written_directly(tmp_path):
    suite = slow_suite(tmp_path / "suite", 2, tmp_path / "log", sleep=0)
    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    proc = cli("run", str(suite), "--journal", str(fifo), "-q")
    reader.join(timeout=30)
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # not replaced
    lines = got[0].split(b"\n")
    assert json.loads(lines[0])["waza_journal"] == 1 and len(lines) == 4


def test_new_journal_keeps_an_empty_files_mode(tmp_path):
    suite = slow_suite(tmp_path / "suite", 1, tmp_path / "log", sleep=0)
    journal = tmp_path / "j.jsonl"
    journal.touch()
    os.chmod(journal, 0o600)
    proc = cli("run", str(suite), "--journal", str(journal), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_IMODE(os.stat(journal).st_mode) == 0o600
    assert journal.read_bytes().count(b"\n") == 2


def test_a_journal_in_use_is_exit_2(finished_journal):
    suite, journal, _log = finished_journal
    fd = os.open(journal, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a waza run still appending to it holds it
        proc = cli("run", str(suite), "--resume", str(journal))
    finally:
        os.close(fd)
    assert proc.returncode == 2 and b"another waza run is writing this journal" in proc.stderr


def test_the_example_suite_runs_with_a_journal(tmp_path):
    from tests.conftest import REPO

    journal = tmp_path / "runs.jsonl"
    proc = cli("run", str(REPO / "examples" / "distributed"), "--workers", "8", "--journal", str(journal), "-q")
    assert proc.returncode == 0, proc.stderr
    assert sorted(journal_tasks(journal)) == [f"explain-{i}" for i in range(1, 9)]


def test_suite_fingerprint_is_the_hash_of_the_whole_text(tmp_path, monkeypatch):
    """The fingerprint is fed one task at a time (a 100,000-task suite's documents never
    held at once) and equals the hash of the whole canonical text, so journals written
    before still resume."""
    import hashlib

    from waza_core.plugins import get_registry
    from waza_core.run.journal import suite_fingerprint
    from waza_core.suite.load import load_suite

    monkeypatch.setenv("WAZA_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "suite"
    suite = slow_suite(root, 0, tmp_path / "log")
    for name, body in [("b", "prompt: \"çà \\u00e9 \\U0001F600\""), ("a", "prompt: p, context: {n: 1.5, x: [1, 2]}"),
                       ("a-10", "prompt: q"), ("a_2", "prompt: r")]:
        (root / "tasks" / f"{name}.yaml").write_text(f"id: {name}\ninputs: {{{body}}}\n")
    for _ in range(2):  # parsed, then from the suite cache (documents kept as compact JSON)
        loaded = load_suite(suite, get_registry())
        whole = {"suite": loaded.raw, "tasks": {t.id: t.raw for t in loaded.tasks}}
        text = json.dumps(whole, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "surrogatepass")
        assert suite_fingerprint(loaded) == hashlib.sha256(text).hexdigest()


def test_resumed_runs_are_decoded_one_at_a_time(finished_journal, monkeypatch):
    """Every line is checked when the journal is opened, but the runs are decoded again as
    they are aggregated: a journal of 100,000 runs is never held in memory at once."""
    from waza_core.results import codec
    from waza_core.run import journal as journal_mod

    _suite, journal, _log = finished_journal
    calls = []
    real = codec.decode_run
    monkeypatch.setattr(codec, "decode_run", lambda *a: calls.append(a) or real(*a))
    head = json.loads(journal.read_bytes().split(b"\n")[0])
    prior, keep = journal_mod.read(journal, head["suite"], head["settings"])
    assert keep is None and len(prior) == 3 and len(calls) == 3  # checked, not kept
    runs = iter(prior)
    first = next(runs)
    assert len(calls) == 4 and first.run.status == "passed" and first.unit.trial == 1
    assert sorted([first.unit.task_id] + [r.unit.task_id for r in runs]) == ["t01", "t02", "t03"]


def test_a_multi_model_run_shares_one_journal_and_resumes_per_model(tmp_path):
    """``-m a -m b``: one journal, each line naming its model; a resume runs, per model,
    only the runs that model lacks, and writes each model's complete results file."""
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", 3, log, sleep=0)
    journal, out = tmp_path / "runs.jsonl", tmp_path / "out.json"
    proc = cli("run", str(suite), "-m", "a", "-m", "b", "--journal", str(journal), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    lines = journal.read_bytes().split(b"\n")
    assert json.loads(lines[0])["settings"]["model"] == ["a", "b"]
    runs = [json.loads(line) for line in lines[1:-1]]
    assert sorted((r["model"], r["task_id"]) for r in runs) == [(m, f"t0{i}") for m in "ab" for i in (1, 2, 3)]
    # a crash during model b's pass: its last two runs never reached the journal
    journal.write_bytes(b"\n".join(lines[:5]) + b"\n")
    lost = {json.loads(line)["task_id"] for line in lines[5:-1]}
    for model in "ab":
        (tmp_path / f"out_{model}.json").unlink()
    before = gradings(log)
    proc = cli("run", str(suite), "-m", "a", "-m", "b", "--resume", str(journal), "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    for model in "ab":
        doc = _complete_results(tmp_path / f"out_{model}.json", 3)
        assert doc["config"]["model_id"] == model
    assert gradings(log) - before == {task: 1 for task in lost}  # model a ran nothing again
    assert len(journal.read_bytes().split(b"\n")) == 8  # header, 6 runs, ""
    # the same journal with other models is refused
    proc = cli("run", str(suite), "-m", "a", "--resume", str(journal))
    assert proc.returncode == 2 and b"with model ['a', 'b'], this run has 'a'" in proc.stderr


def test_an_ab_run_journals_both_passes_and_resumes_the_baseline_pass(tmp_path):
    """``--baseline``: the second pass's lines say ``"pass": "baseline"``; a resume runs
    only what each pass lacks and writes the merged A/B results again."""
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", 3, log, sleep=0, skill_directories=["skills"])
    (suite.parent / "skills").mkdir()
    journal, out = tmp_path / "runs.jsonl", tmp_path / "out.json"
    first = cli("run", str(suite), "--baseline", "--journal", str(journal), "-o", str(out), "-q")
    assert first.returncode in (0, 1), first.stderr.decode()  # 1: the skills did not raise the success rate
    lines = journal.read_bytes().split(b"\n")
    assert json.loads(lines[0])["settings"]["baseline"] is True
    runs = [json.loads(line) for line in lines[1:-1]]
    assert [r.get("pass") for r in runs] == [None] * 3 + ["baseline"] * 3
    # a crash during the baseline pass: its last two runs never reached the journal
    journal.write_bytes(b"\n".join(lines[:5]) + b"\n")
    lost = {json.loads(line)["task_id"] for line in lines[5:-1]}
    out.unlink()
    before = gradings(log)
    proc = cli("run", str(suite), "--baseline", "--resume", str(journal), "-o", str(out), "-q")
    assert proc.returncode == first.returncode, proc.stderr.decode()
    assert gradings(log) - before == {task: 1 for task in lost}  # the first pass ran nothing again
    doc = json.loads(out.read_bytes())
    assert doc["is_baseline"] is True and len(doc["baseline_outcome"]["tasks"]) == 3 and len(doc["tasks"]) == 3
    assert all("skill_impact" in t for t in doc["tasks"])
    assert len(journal.read_bytes().split(b"\n")) == 8  # header, 6 runs, ""
    proc = cli("run", str(suite), "--resume", str(journal), "-q")  # the same journal, without --baseline
    assert proc.returncode == 2
    assert b"written by an A/B run (--baseline), this is a run without --baseline" in proc.stderr


def test_each_models_pass_is_flushed_to_disk_when_it_ends(tmp_path, monkeypatch):
    from waza_core.run import journal as journal_mod

    suite = slow_suite(tmp_path / "suite", 3, tmp_path / "log", sleep=0)
    journal = tmp_path / "runs.jsonl"
    lines_at_sync = []
    real = os.fdatasync
    monkeypatch.setattr(journal_mod, "SYNC_INTERVAL", 3600.0)  # no flush on the way: only at ends
    monkeypatch.setattr(journal_mod.os, "fdatasync",
                        lambda fd: lines_at_sync.append(journal.read_bytes().count(b"\n")) or real(fd))
    proc = cli("run", str(suite), "-m", "a", "-m", "b", "--journal", str(journal), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    assert lines_at_sync == [1, 4, 7]  # the header, model a's pass, model b's pass


def test_fingerprint_keys_are_written_as_json_writes_them():
    from waza_core.run.journal import _canonical_key

    for key in ["t1", "çé", True, None, 1.5, 3]:
        assert _canonical_key(key) == json.dumps(json.loads(json.dumps({key: 0})), ensure_ascii=False)[1:-4].encode()
