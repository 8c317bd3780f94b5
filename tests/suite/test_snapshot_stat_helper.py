"""A warm load from the suite's snapshot whose ``stat`` checks a forked helper makes
(waza_core/suite/snapshot.py, ``prefetch.ForkedCheck``) gives what a load checking them itself
gives: a file changed since is found, a helper that fails, is killed or is interrupted only
costs the snapshot, and none is left behind.

A helper is forked only by a process with one thread, so every load runs in a new Python
process (``DRIVER``), as ``waza`` does; pytest-xdist's workers have more threads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waza_core.suite import prefetch
from waza_core.suite import snapshot

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                                reason="a stat helper needs Linux and a second CPU")

N = 40
EVAL = "name: s\nskill: s\nconfig: {executor: mock}\ntasks: [\"tasks/*.yaml\"]\n"
TASK = ("id: t{i:03d}\ninputs: {{prompt: \"item {i}\"}}\n"
        "graders:\n  - {{type: text, name: g, config: {{contains: [x]}}}}\n")

#: loads a suite in a process of its own, with snapshots and stat helpers for small suites;
#: prints every helper (its pid, whether it started, its answer), how many task documents the
#: suite cache was asked for (none: the load came from the snapshot), the tasks, and the
#: helpers not reaped
RECORD_TASKS = 16
DRIVER = f"RECORD_TASKS = {RECORD_TASKS}\n" + r"""
import json, os, signal, sys
from pathlib import Path
from waza_core.plugins import build_plugin_manager
from waza_core.suite import cache as cache_mod, load as loader, prefetch, snapshot

snapshot.MIN_TASKS = 4
snapshot.CHUNK = RECORD_TASKS  # several records: the helper follows the files across them
prefetch.MIN_STAT_FILES = 8
checks, lookups = [], []
real_start, real_answer = prefetch.ForkedCheck.start, prefetch.ForkedCheck.answer
def start(self):
    started = real_start(self)
    checks.append({"pid": self.pid, "started": started})
    return started
def answer(self):
    checks[-1]["answer"] = said = real_answer(self)
    return said
prefetch.ForkedCheck.start, prefetch.ForkedCheck.answer = start, answer
real_get = cache_mod.SuiteCache.get
def get(self, file, kind, key):
    if kind == "task":
        lookups.append(file)
    return real_get(self, file, kind, key)
cache_mod.SuiteCache.get = get
exec(sys.argv[2])  # what a test changes
out = {}
try:
    suite = loader.load_suite(Path(sys.argv[1]), build_plugin_manager()[1])
    out["suite"] = repr(suite)
    out["prompts"] = {t.id: t.prompt for t in suite.tasks}
except KeyboardInterrupt:
    out["interrupted"] = True
left = []
for check in checks:
    try:
        if check["pid"] is not None:
            os.waitpid(check["pid"], os.WNOHANG)
            left.append(check["pid"])
    except ChildProcessError:
        pass
print(json.dumps({"checks": checks, "lookups": len(lookups), "left": left,
                  "sigchld_ignored": signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN, **out}))
"""


def make_suite(root: Path) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text(EVAL)
    for i in range(N):
        (root / "tasks" / f"t{i:03d}.yaml").write_text(TASK.format(i=i))
    return root / "eval.yaml"


def load(eval_file: Path, cache: Path, patch: str = "", helpers: str = "1", timeout: float = 60) -> dict:
    env = {**os.environ, "WAZA_CACHE_DIR": str(cache), prefetch.ENV: helpers, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("WAZA_NO_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(eval_file), patch], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def warm(tmp_path) -> tuple[Path, Path]:
    """A suite whose first load wrote its cache and its snapshot."""
    eval_file, cache = make_suite(tmp_path / "s"), tmp_path / "cache"
    first = load(eval_file, cache)
    assert first["lookups"] == N and first["checks"] == []  # nothing cached yet: no snapshot to read
    assert _records(cache) == 1 + -(-N // RECORD_TASKS)  # the names' digest, then the tasks' records
    return eval_file, cache


def _records(cache: Path) -> int:
    """How many records the suite's snapshot holds (snapshot.py's format: a header line, then
    each record's length in 8 bytes and its bytes)."""
    (specs,) = (cache / "suites").glob("*" + snapshot.SUFFIX)
    data = specs.read_bytes()
    pos, count = data.index(b"\n") + 1, 0
    while pos < len(data):
        pos += 8 + int.from_bytes(data[pos:pos + 8], "little")
        count += 1
    assert pos == len(data)
    return count


def test_a_load_whose_stats_a_helper_checks_gives_what_a_load_checking_them_itself_gives(warm):
    eval_file, cache = warm
    apart = load(eval_file, cache)
    (check,) = apart["checks"]
    assert check["started"] and check["answer"] is True and apart["lookups"] == 0  # from the snapshot
    itself = load(eval_file, cache, helpers="0")
    assert itself["checks"] == [] and itself["lookups"] == 0
    assert apart["suite"] == itself["suite"] and apart["left"] == []


def _change_keeping_size_and_mtime(eval_file: Path, i: int) -> None:
    changed = eval_file.parent / "tasks" / f"t{i:03d}.yaml"
    before = changed.stat()
    # the same size and modification time: only its ctime (and content) tell
    changed.write_text(changed.read_text().replace(f"item {i}", f"ITEM {i}"))
    os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert changed.stat().st_size == before.st_size and changed.stat().st_mtime_ns == before.st_mtime_ns


def test_a_file_changed_since_the_snapshot_is_found_by_the_helper(warm):
    eval_file, cache = warm
    assert (N - 2) // RECORD_TASKS == 2  # in the third and last record
    _change_keeping_size_and_mtime(eval_file, N - 2)
    after = load(eval_file, cache)
    (check,) = after["checks"]
    assert check["started"] and check["answer"] is False
    assert after["lookups"] == N  # the load went through the cache, file by file
    assert after["prompts"][f"t{N - 2:03d}"] == f"ITEM {N - 2}"
    assert after["prompts"][f"t{N - 3:03d}"] == f"item {N - 3}"


@pytest.mark.parametrize("patch", [
    "def _same_stats(*a):\n    raise RuntimeError('a bug')\nsnapshot._same_stats = _same_stats\n",
    "def _same_stats(*a):\n    os.kill(os.getpid(), signal.SIGKILL)\nsnapshot._same_stats = _same_stats\n",
    "def _same_stats(*a):\n    return False\nsnapshot._same_stats = _same_stats\n",
], ids=["raises", "killed", "says no"])
def test_a_helper_that_fails_is_killed_or_says_no_only_costs_the_snapshot(warm, patch):
    eval_file, cache = warm
    after = load(eval_file, cache, patch)
    (check,) = after["checks"]
    assert check["started"] and check["answer"] is False and after["lookups"] == N
    assert after["suite"] == load(eval_file, cache, helpers="0")["suite"] and after["left"] == []


def test_an_interrupt_while_the_specs_are_built_leaves_no_helper(warm):
    # the helper would take a minute; Ctrl-C lands as the loader builds the first specs
    patch = ("import time\ndef _same_stats(*a):\n    time.sleep(60)\n    return True\n"
             "snapshot._same_stats = _same_stats\n"
             "def _build(*a, **k):\n    raise KeyboardInterrupt\nsnapshot._build = _build\n")
    eval_file, cache = warm
    t0 = time.monotonic()
    after = load(eval_file, cache, patch, timeout=50)
    assert after["interrupted"] and time.monotonic() - t0 < 30
    (check,) = after["checks"]
    assert check["started"] and "answer" not in check
    assert after["left"] == []  # killed and reaped before the interrupt went on


def test_a_load_with_sigchld_ignored_gets_the_answer_and_gives_sigchld_back(warm):
    eval_file, cache = warm
    after = load(eval_file, cache, "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n")
    (check,) = after["checks"]
    assert check["answer"] is True and after["lookups"] == 0 and after["sigchld_ignored"]


@pytest.mark.parametrize("helpers, patch", [
    ("0", ""),
    ("1", "prefetch.MIN_STAT_FILES = 1000\n"),
    ("1", "import threading\nthreading.Thread(target=__import__('time').sleep, args=(5,), daemon=True).start()\n"),
], ids=["turned off", "a small suite", "a process with threads"])
def test_no_helper_when_turned_off_for_a_small_suite_or_with_threads(warm, helpers, patch):
    eval_file, cache = warm
    after = load(eval_file, cache, patch, helpers=helpers)
    assert after["checks"] == [] and after["lookups"] == 0  # the loader checked the stats itself


def test_a_helper_that_cannot_be_forked_leaves_the_check_to_the_loader(warm):
    # no process can be made: the loader checks every stat itself, so a changed file is still
    # found; SIGCHLD, ignored before, is given back
    eval_file, cache = warm
    patch = ("signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
             "def fork():\n    raise OSError(11, 'Resource temporarily unavailable')\nos.fork = fork\n")
    unchanged = load(eval_file, cache, patch)
    assert [c["started"] for c in unchanged["checks"]] == [False] and unchanged["lookups"] == 0
    assert unchanged["sigchld_ignored"]
    assert 20 // RECORD_TASKS == 1  # in the second record
    _change_keeping_size_and_mtime(eval_file, 20)
    changed = load(eval_file, cache, patch)
    assert [c["started"] for c in changed["checks"]] == [False] and changed["lookups"] == N
    assert changed["prompts"]["t020"] == "ITEM 20" and changed["sigchld_ignored"]


def test_the_helper_is_wanted_for_a_large_suite_with_a_spare_cpu(monkeypatch):
    monkeypatch.setattr(prefetch, "_one_thread", lambda: True)  # pytest-xdist's workers have threads
    assert prefetch.stat_check_wanted(prefetch.MIN_STAT_FILES, 3)
    assert not prefetch.stat_check_wanted(prefetch.MIN_STAT_FILES - 1, 3)
    assert not prefetch.stat_check_wanted(prefetch.MIN_STAT_FILES, 0)
    monkeypatch.setattr(prefetch, "_one_thread", lambda: False)
    assert not prefetch.stat_check_wanted(10 ** 6, 3)


def _interrupted_as_the_stops_are_held(monkeypatch):
    """``pthread_sigmask`` as CPython runs it when a SIGINT was pending: the mask changed, then
    the interrupt raised."""
    real = signal.pthread_sigmask

    def sigmask(how, mask):
        before = real(how, mask)
        if how == signal.SIG_BLOCK and set(mask) == prefetch._STOPS:
            raise KeyboardInterrupt
        return before
    monkeypatch.setattr(signal, "pthread_sigmask", sigmask)
    return real


def test_an_interrupt_as_the_stop_signals_are_held_leaves_the_mask_as_it_was(monkeypatch):
    real = _interrupted_as_the_stops_are_held(monkeypatch)
    before = real(signal.SIG_BLOCK, ())
    with pytest.raises(KeyboardInterrupt), prefetch._stops_held():
        pass
    assert real(signal.SIG_BLOCK, ()) == before


def test_an_interrupt_as_a_check_is_stopped_still_ends_its_helper(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    check = prefetch.ForkedCheck(lambda: True)
    check.pid = child.pid  # a helper still running
    real = _interrupted_as_the_stops_are_held(monkeypatch)
    before = real(signal.SIG_BLOCK, ())
    with pytest.raises(KeyboardInterrupt):
        check.stop()
    assert check.pid is None and real(signal.SIG_BLOCK, ()) == before
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(child.pid, os.WNOHANG)
