"""The first load of a big suite with helper processes gives what a load without them gives.

Helpers start only in a process with one thread, so every load here runs in a new Python
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

from tests.conftest import run_waza
from waza_core.suite import prefetch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                                reason="helpers need Linux and a second CPU")

N = 620  # above prefetch.MIN_FILES: one helper takes the tail of the list

EVAL = """name: big
skill: s
config: {executor: mock}
tasks: ["tasks/*.yaml"]
"""
TASK = ("id: t{i:04d}\ninputs: {{prompt: \"item {i}\"}}\n"
        "graders:\n  - {{type: text, name: g, config: {{contains: [\"item {i}\"]}}}}\n")

#: files that are not plain cache lines, at indexes in both the loader's and the helper's share
ODD = {
    5: "id: t0005\ninputs: {prompt: x}\ngraders:\n  - {type: nope, name: g}\n",  # schema error
    300: "id: t0300\ninputs: {prompt: x}\ngraders:\n  - {type: nope, name: g}\n",
    310: "id: t0310\ninputs: {prompt: [unclosed\n",  # YAML error
    320: "id: t0320\nsurprise: 1\ninputs: {prompt: x}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n",
    330: "id: t0330\ninputs: {prompt: x, context: {when: 2024-01-01}}\n"  # a date: not cached
         "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n",
    340: "id: t0340\ninputs: {prompt_file: p.md}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n",
    350: "id: t0001\ninputs: {prompt: x}\ngraders:\n  - {type: text, name: g, config: {contains: [x]}}\n",  # dup id
    360: "id: t0360\ninputs: {prompt: x, follow_up_prompts: [y]}\ncheckpoints:\n  - after_turn: 1\n"
         "    graders:\n      - {type: text, name: c, config: {contains: [x]}}\n"
         "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n",
}

#: loads a suite in a process of its own; prints how many helpers started, how many files the
#: loader parsed itself, the kind of each task's kept document, and the suite or its problems
DRIVER = r"""
import collections, json, os, signal, sys
from pathlib import Path
from waza_core.errors import SuiteError
from waza_core.plugins import build_plugin_manager
from waza_core.suite import load as loader, prefetch

started, parsed, notes, me = [], [], [], os.getpid()  # notes: what a test's patch records
real_start = prefetch.Helpers.start
def start(self, *args, **kwargs):
    real_start(self, *args, **kwargs)
    started.append([h.lo for h in self.shares])
prefetch.Helpers.start = start
real_read = loader.read_yaml
def read_yaml(*args, **kwargs):
    if os.getpid() == me:  # the loader's own parses, not a helper's
        parsed.append(1)
    return real_read(*args, **kwargs)
loader.read_yaml = read_yaml
exec(sys.argv[2])  # what a test changes in the helpers
try:
    suite = load_suite_result = loader.load_suite(Path(sys.argv[1]), build_plugin_manager()[1])
    out = {"suite": repr(suite), "warnings": list(suite.warnings),
           "raw": dict(collections.Counter(type(t._raw).__name__ for t in suite.tasks))}
except SuiteError as exc:
    out = {"problems": exc.problems, "warnings": exc.warnings}
print(json.dumps({"started": started, "parsed": len(parsed), "notes": notes,
                  "sigchld_ignored": signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN,
                  **out}))
"""


def make_big_suite(root: Path, odd: dict[int, str] | None = None, n: int = N) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text(EVAL)
    (root / "tasks" / "p.md").write_text("from a file")
    for i in range(n):
        text = (odd or {}).get(i, TASK.format(i=i))
        (root / "tasks" / f"t{i:04d}.yaml").write_text(text)
    return root / "eval.yaml"


def load_in_process(eval_file: Path, cache: Path | None, helpers: int, patch: str = "") -> dict:
    """``cache`` None: ``WAZA_NO_CACHE=1``."""
    env = {**os.environ, prefetch.ENV: str(helpers), "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("WAZA_NO_CACHE", None)
    if cache is None:
        env["WAZA_NO_CACHE"] = "1"
    else:
        env["WAZA_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(eval_file), patch], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def cache_bytes(cache: Path) -> bytes:
    (f,) = list((cache / "suites").glob("*.json"))  # the cache file (not the snapshot)
    return f.read_bytes()


@pytest.fixture(scope="module")
def good_suite(tmp_path_factory) -> Path:
    return make_big_suite(tmp_path_factory.mktemp("good"))


def test_a_first_load_with_a_helper_gives_the_same_suite_and_cache(good_suite, tmp_path):
    alone = load_in_process(good_suite, tmp_path / "c0", helpers=0)
    helped = load_in_process(good_suite, tmp_path / "c1", helpers=1)
    assert alone["started"] == [] and len(helped["started"]) == 1
    (lo,) = helped["started"][0]
    assert 0 < lo < N // 2  # the helper has the larger share: the loader also builds its tasks
    assert helped["suite"] == alone["suite"] and helped["raw"] == alone["raw"] == {"bytes": N}
    assert cache_bytes(tmp_path / "c1") == cache_bytes(tmp_path / "c0")
    assert alone["parsed"] == N + 1 and helped["parsed"] == lo + 1  # the eval, then its share only
    again = load_in_process(good_suite, tmp_path / "c1", helpers=1)  # warm: no helper
    assert again["started"] == [] and again["suite"] == alone["suite"] and again["parsed"] == 0


def test_without_a_cache_helpers_give_the_same_tasks_and_documents(good_suite):
    alone = load_in_process(good_suite, None, helpers=0)
    helped = load_in_process(good_suite, None, helpers=1)
    assert len(helped["started"]) == 1 and helped["parsed"] < N // 2
    assert helped["suite"] == alone["suite"] and helped["raw"] == alone["raw"] == {"dict": N}


def test_three_helpers_give_the_same_suite_and_cache(tmp_path):
    suite = make_big_suite(tmp_path / "s", ODD, n=3 * prefetch.MIN_FILES + 100)
    patch = "os.sched_getaffinity = lambda pid: set(range(4))\n"  # three other CPUs on any machine
    alone = load_in_process(suite, tmp_path / "c0", helpers=0, patch=patch)
    helped = load_in_process(suite, tmp_path / "c1", helpers=3, patch=patch)
    assert len(helped["started"]) == 1 and len(helped["started"][0]) == 3
    assert helped == {**alone, "started": helped["started"], "parsed": helped["parsed"]}
    assert helped["parsed"] < alone["parsed"] // 3
    fixed = {k: v for k, v in ODD.items() if k in (320, 330, 340, 360)}
    suite = make_big_suite(tmp_path / "s2", fixed, n=3 * prefetch.MIN_FILES + 100)
    alone = load_in_process(suite, tmp_path / "c2", helpers=0, patch=patch)
    helped = load_in_process(suite, tmp_path / "c3", helpers=3, patch=patch)
    assert len(helped["started"][0]) == 3 and helped["suite"] == alone["suite"]
    assert cache_bytes(tmp_path / "c3") == cache_bytes(tmp_path / "c2")


def test_a_load_with_sigchld_ignored_gives_the_same_suite_and_gives_it_back(good_suite, tmp_path):
    """Inherited "ignore SIGCHLD" makes the kernel reap children itself; the loader keeps
    the default while its helpers run (so it reaps them) and gives the setting back."""
    patch = ("signal.signal(signal.SIGCHLD, signal.SIG_IGN)\nreal = prefetch._helper\n"
             "prefetch._helper = lambda f, p, n, lo, hi, *rest: real(f, p, n, lo, (lo + hi) // 2, *rest)\n"
             "real_line = prefetch._Helper.line\n"
             "def line(self, i):\n"
             "    notes.append(signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN)\n"
             "    return real_line(self, i)\n"
             "prefetch._Helper.line = line\n")
    alone = load_in_process(good_suite, tmp_path / "c0", helpers=0)
    helped = load_in_process(good_suite, tmp_path / "c1", helpers=1, patch=patch)
    assert len(helped["started"]) == 1 and helped["sigchld_ignored"] is True  # given back
    assert helped["notes"] and not any(helped["notes"])  # the default while the helper ran
    assert helped["suite"] == alone["suite"]


def test_a_helper_whose_loader_died_exits(good_suite, tmp_path):
    """A loader killed by SIGKILL runs no clean-up; its helper sees it is gone at its next
    batch of lines and exits instead of parsing on for nobody."""
    patch = ("import time\nreal_check = loader._check_for_helper\n"
             "def slow_check(registry):\n    check = real_check(registry)\n"
             "    def each(*a):\n        time.sleep(0.02)\n        check(*a)\n    return each\n"
             "loader._check_for_helper = slow_check\ndriver_start = prefetch.Helpers.start\n"
             "def killed(self, *a, **k):\n    driver_start(self, *a, **k)\n"
             "    print(' '.join(str(h.pid) for h in self.shares), file=sys.stderr, flush=True)\n"
             "    os.kill(os.getpid(), signal.SIGKILL)\n"
             "prefetch.Helpers.start = killed\n")
    env = {**os.environ, "WAZA_NO_CACHE": "1", prefetch.ENV: "1", "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(good_suite), patch], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=60)
        (pid,) = [int(p) for p in err.decode().splitlines()[0].split()]
        # its share is some 390 files of 20 ms (~8 s); the check comes every BATCH files (~1.3 s)
        deadline = time.monotonic() + 5
        while _alive(pid):
            assert time.monotonic() < deadline, "the helper parsed on after its loader died"
            time.sleep(0.05)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_load_with_stdout_and_stderr_closed(good_suite, tmp_path):
    env = {**os.environ, "WAZA_NO_CACHE": "1", prefetch.ENV: "1", "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    for closed in (">&-", "2>&-"):
        proc = subprocess.run(["sh", "-c", f'exec "$@" {closed}', "sh", sys.executable, "-m", "waza_core",
                               "validate", str(good_suite)], env=env, capture_output=True, timeout=120)
        assert proc.returncode == 0, (closed, proc.stderr)


def test_problems_warnings_and_uncacheable_files_come_out_the_same(tmp_path):
    suite = make_big_suite(tmp_path / "s", ODD)
    alone = load_in_process(suite, tmp_path / "c0", helpers=0)
    helped = load_in_process(suite, tmp_path / "c1", helpers=1)
    assert len(helped["started"]) == 1 and helped["started"][0][0] < 300
    assert helped == {**alone, "started": helped["started"], "parsed": helped["parsed"]}
    problems = "\n".join(alone["problems"])
    for bad in ("t0005.yaml", "t0300.yaml", "t0310.yaml", "t0001"):
        assert bad in problems
    assert any("t0320.yaml" in w and "surprise" in w for w in alone["warnings"])

    fixed = {k: v for k, v in ODD.items() if k in (320, 330, 340, 360)}  # loads, with a warning
    suite = make_big_suite(tmp_path / "s2", fixed)
    alone = load_in_process(suite, tmp_path / "c2", helpers=0)
    helped = load_in_process(suite, tmp_path / "c3", helpers=1)
    assert "suite" in alone and helped == {**alone, "started": helped["started"], "parsed": helped["parsed"]}
    assert helped["parsed"] < alone["parsed"] // 2
    assert "from a file" in alone["suite"] and "2024" in alone["suite"]
    assert cache_bytes(tmp_path / "c3") == cache_bytes(tmp_path / "c2")


@pytest.mark.parametrize("patch", [
    # killed before it wrote anything
    "import os, signal\nprefetch._helper = lambda *a: os.kill(os.getpid(), signal.SIGKILL)",
    # ended early (exit 0) after half of its share: the loader loads the rest itself
    "real = prefetch._helper\n"
    "prefetch._helper = lambda f, p, n, lo, hi, *rest: real(f, p, n, lo, (lo + hi) // 2, *rest)",
    # fails (exit 1) half way, with a line cut short in its file
    "import os\nreal = prefetch._write_all\ncount = []\n"
    "def cut(fd, data):\n"
    "    count.append(1)\n"
    "    if len(count) == 3:\n"
    "        os.write(fd, data[: len(data) // 2]); os._exit(1)\n"
    "    real(fd, data)\n"
    "prefetch._write_all = cut",
], ids=["killed", "ended-early", "cut-short"])
def test_a_helper_that_fails_only_makes_the_load_slower(good_suite, tmp_path, patch):
    alone = load_in_process(good_suite, tmp_path / "c0", helpers=0)
    helped = load_in_process(good_suite, tmp_path / "c1", helpers=1, patch=patch)
    assert len(helped["started"]) == 1
    assert helped["suite"] == alone["suite"]
    assert cache_bytes(tmp_path / "c1") == cache_bytes(tmp_path / "c0")


def test_a_file_changed_after_the_helper_read_it_is_read_again(tmp_path):
    suite = make_big_suite(tmp_path / "s")
    target = suite.parent / "tasks" / f"t{N - 1:04d}.yaml"
    # the loader waits for the helper to end, then the file changes (size and text)
    patch = (
        "import time\nfrom pathlib import Path\nreal_line = prefetch.Helpers.line\nchanged = []\n"
        "def line(self):\n"
        "    helper = self.shares[0]\n"
        "    if not changed and self._index >= helper.lo:\n"
        "        changed.append(1)\n"
        "        while not helper._reap():\n"
        "            time.sleep(0.01)\n"
        f"        Path({str(target)!r}).write_text('id: changed\\ninputs: {{prompt: new}}\\n"
        "graders:\\n  - {type: text, name: g, config: {contains: [new]}}\\n')\n"
        "    return real_line(self)\n"
        "prefetch.Helpers.line = line\n")
    helped = load_in_process(suite, tmp_path / "c1", helpers=1, patch=patch)
    assert len(helped["started"]) == 1
    assert "'changed'" in helped["suite"] and "t0619'" not in helped["suite"]
    alone = load_in_process(suite, tmp_path / "c0", helpers=0)
    assert helped["suite"] == alone["suite"]


def test_a_cache_whose_files_all_changed_their_stat_gets_helpers_after_the_probe(tmp_path):
    """A cache restored onto a new checkout, or every file touched: the first files all
    miss, so helpers start for the files after them; the suite and the rewritten cache are
    what a load without helpers gives. A load whose first files hit starts none."""
    import shutil

    suite = make_big_suite(tmp_path / "s")
    load_in_process(suite, tmp_path / "c0", helpers=0)
    shutil.copytree(tmp_path / "c0", tmp_path / "c1")
    tasks = sorted((suite.parent / "tasks").glob("*.yaml"))
    later = time.time() + 10
    for task in tasks:
        os.utime(task, (later, later))
    alone = load_in_process(suite, tmp_path / "c0", helpers=0)
    helped = load_in_process(suite, tmp_path / "c1", helpers=1)
    assert alone["started"] == [] and len(helped["started"]) == 1
    assert helped["started"][0][0] > prefetch.PROBE_FILES
    assert helped["suite"] == alone["suite"]
    assert cache_bytes(tmp_path / "c1") == cache_bytes(tmp_path / "c0")

    shutil.copytree(tmp_path / "c0", tmp_path / "c2")
    for task in tasks[prefetch.PROBE_FILES // 2:]:  # the first files still hit
        os.utime(task, (later + 10, later + 10))
    assert load_in_process(suite, tmp_path / "c2", helpers=1)["started"] == []


def test_first_files_never_cached_start_no_helpers(tmp_path):
    """Files with a warning are never cached, so they miss on every load: that is no sign
    that the rest changed, and a warm load must stay warm (no helpers, no rewrite)."""
    warn = ("id: t{i:04d}\nsurprise: 1\ninputs: {{prompt: x}}\n"
            "graders:\n  - {{type: text, name: g, config: {{contains: [x]}}}}\n")
    suite = make_big_suite(tmp_path / "s", {i: warn.format(i=i) for i in range(prefetch.PROBE_FILES + 6)})
    first = load_in_process(suite, tmp_path / "c", helpers=1)
    assert len(first["started"]) == 1  # a first load
    before = next((tmp_path / "c" / "suites").glob("*.json")).stat().st_mtime_ns
    again = load_in_process(suite, tmp_path / "c", helpers=1)
    assert again["started"] == [] and again["parsed"] == prefetch.PROBE_FILES + 6
    assert next((tmp_path / "c" / "suites").glob("*.json")).stat().st_mtime_ns == before  # not rewritten
    assert again["suite"] == first["suite"]


def test_no_helper_for_a_small_or_warm_suite_or_when_turned_off(good_suite, tmp_path, make_suite):
    small = make_suite(EVAL, {f"tasks/t{i}.yaml": TASK.format(i=i) for i in range(prefetch.MIN_FILES - 1)})
    assert load_in_process(small, tmp_path / "c0", helpers=3)["started"] == []
    assert load_in_process(good_suite, tmp_path / "c1", helpers=0)["started"] == []
    assert prefetch.helpers_wanted(10_000, 0) == 0


def test_a_bad_helper_count_is_a_usage_error(good_suite, tmp_path):
    for bad in ("two", "-1", "1.5", "٣"):
        proc = run_waza("validate", str(good_suite), env={prefetch.ENV: bad, "WAZA_CACHE_DIR": str(tmp_path)})
        err = proc.stderr.decode()
        assert proc.returncode == 2, err
        assert f"{prefetch.ENV} must be a whole number" in err and "Traceback" not in err


def test_shares_leave_the_loader_the_head_of_the_list():
    for helpers in (1, 2, 3):
        starts = prefetch.shares(20_000, helpers)
        assert len(starts) == helpers and 0 < starts[0]
        sizes = [b - a for a, b in zip(starts, [*starts[1:], 20_000], strict=True)]
        assert max(sizes) - min(sizes) <= 1 and starts[0] < sizes[0]


def test_an_interrupt_during_the_load_leaves_no_helper(good_suite, tmp_path):
    # the helpers would sleep a minute; Ctrl-C reaches the loader right after they start
    # (Python's own SIGINT handler even when this test runs under a shell that ignores SIGINT)
    patch = ("import os, signal, sys, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
             "real = prefetch._helper\n"
             "def slow(*a):\n    time.sleep(60)\n    real(*a)\n"
             "prefetch._helper = slow\ndriver_start = prefetch.Helpers.start\n"
             "def interrupted(self, *a, **k):\n    driver_start(self, *a, **k)\n"
             "    print(' '.join(str(h.pid) for h in self.shares), file=sys.stderr, flush=True)\n"
             "    os.kill(os.getpid(), signal.SIGINT)\n"
             "prefetch.Helpers.start = interrupted\ndriver_stop = prefetch.Helpers.stop\n"
             "def stopped(self):\n    pids = [h.pid for h in self.shares]\n    driver_stop(self)\n"
             "    for pid in pids:\n"
             "        try:\n            os.waitpid(pid, os.WNOHANG)\n"
             "        except ChildProcessError:\n            print('reaped', pid, file=sys.stderr, flush=True)\n"
             "prefetch.Helpers.stop = stopped\n")
    env = {**os.environ, "WAZA_CACHE_DIR": str(tmp_path / "c"), prefetch.ENV: "1",
           "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(good_suite), patch], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the test's own group
        except ProcessLookupError:
            pass
    assert "KeyboardInterrupt" in err.decode() and proc.returncode != 0
    lines = err.decode().splitlines()
    pids = [int(p) for p in lines[0].split()]
    assert len(pids) == 1
    for pid in pids:  # killed and reaped by the loader before it let the interrupt go
        assert f"reaped {pid}" in lines[1:]


def test_the_example_folder_behaves_as_its_readme_says(tmp_path):
    maker = Path(__file__).parents[2] / "examples" / "large-suite" / "make_suite.py"
    made = subprocess.run([sys.executable, str(maker), "600", str(tmp_path / "big")], capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0 and made.stdout.strip() == f"{tmp_path / 'big' / 'eval.yaml'}: 600 task(s)"
    suite = str(tmp_path / "big" / "eval.yaml")
    runs = [({"WAZA_CACHE_DIR": str(tmp_path / "cache")}, "1"), ({"WAZA_CACHE_DIR": str(tmp_path / "cache")}, "2"),
            ({"WAZA_NO_CACHE": "1", prefetch.ENV: "0"}, "3")]
    verdicts = []
    for env, n in runs:
        proc = run_waza("run", suite, "-q", "-o", str(tmp_path / f"big-{n}.json"), env=env)
        assert proc.returncode == 0, proc.stderr.decode()
        results = json.loads((tmp_path / f"big-{n}.json").read_text())
        verdicts.append([(t["test_id"], t["status"]) for t in results["tasks"]])
    assert len(verdicts[0]) == 600 and {s for _, s in verdicts[0]} == {"passed"}
    assert verdicts[0] == verdicts[1] == verdicts[2]
    for argv in (["600", str(tmp_path / "big")], ["0", str(tmp_path / "new")], ["x", str(tmp_path / "new")]):
        refused = subprocess.run([sys.executable, str(maker), *argv], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stderr
    bad = run_waza("validate", suite, env={prefetch.ENV: "two"})
    assert bad.returncode == 2
    assert ("WAZA_LOAD_HELPERS must be a whole number, 0 or more (0: no helper processes), got 'two'"
            in bad.stderr.decode())


@pytest.mark.parametrize("recorded", [False, True], ids=["as the fork began", "as it ended"])
def test_an_interrupt_as_a_helper_is_forked_leaves_no_file_open(tmp_path, monkeypatch, recorded):
    # a stop signal raised by _fork: before the helper was recorded its file is closed at once,
    # after, its record owns the file and stop() closes it with the helper ended
    fd = os.open(tmp_path / "lines", os.O_RDWR | os.O_CREAT)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    def fork(run, started):
        if recorded:
            started(child.pid)
        raise KeyboardInterrupt
    monkeypatch.setattr(prefetch, "_scratch_file", lambda: fd)
    monkeypatch.setattr(prefetch, "_fork", fork)
    helpers = prefetch.Helpers()
    with pytest.raises(KeyboardInterrupt):
        helpers.start(lambda name, lines: None, [f"t{i}" for i in range(N)], 1)
    assert len(helpers.shares) == int(recorded)
    helpers.stop()
    with pytest.raises(OSError):  # closed, once
        os.fstat(fd)
    child.kill()
    child.wait()
