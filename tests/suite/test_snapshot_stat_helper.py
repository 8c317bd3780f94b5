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
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waza_core.suite import prefetch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                                reason="a stat helper needs Linux and a second CPU")

N = 40
EVAL = "name: s\nskill: s\nconfig: {executor: mock}\ntasks: [\"tasks/*.yaml\"]\n"
TASK = "id: t{i:03d}\ninputs: {{prompt: \"item {i}\"}}\ngraders:\n  - {{type: text, name: g, config: {{contains: [x]}}}}\n"

#: loads a suite in a process of its own, with snapshots and stat helpers for small suites;
#: prints every helper (its pid, whether it started, its answer), how many task documents the
#: suite cache was asked for (none: the load came from the snapshot), the tasks, and the
#: helpers not reaped
DRIVER = r"""
import json, os, signal, sys
from pathlib import Path
from waza_core.plugins import build_plugin_manager
from waza_core.suite import cache as cache_mod, load as loader, prefetch, snapshot

snapshot.MIN_TASKS = 4
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
    return eval_file, cache


def test_a_load_whose_stats_a_helper_checks_gives_what_a_load_checking_them_itself_gives(warm):
    eval_file, cache = warm
    apart = load(eval_file, cache)
    (check,) = apart["checks"]
    assert check["started"] and check["answer"] is True and apart["lookups"] == 0  # from the snapshot
    itself = load(eval_file, cache, helpers="0")
    assert itself["checks"] == [] and itself["lookups"] == 0
    assert apart["suite"] == itself["suite"] and apart["left"] == []


def test_a_file_changed_since_the_snapshot_is_found_by_the_helper(warm):
    eval_file, cache = warm
    changed = eval_file.parent / "tasks" / f"t{N - 2:03d}.yaml"
    before = changed.stat()
    # the same size and modification time: only its ctime (and content) tell
    changed.write_text(changed.read_text().replace(f"item {N - 2}", f"ITEM {N - 2}"))
    os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert changed.stat().st_size == before.st_size and changed.stat().st_mtime_ns == before.st_mtime_ns
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


def test_the_helper_count_rules_are_the_load_helpers_rules():
    assert not prefetch.stat_check_wanted(prefetch.MIN_STAT_FILES - 1, 3)
    assert not prefetch.stat_check_wanted(10 ** 6, 0)
