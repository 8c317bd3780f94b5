"""Lifecycle hooks as in waza (Go): argv without a shell, exit codes, error_on_fail, a time limit."""

from __future__ import annotations

import json
import os
import sys
import time

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from tests.proc_helpers import alive

LOG = """\
import os, sys
with open(os.environ["HOOK_LOG"], "a") as fh:
    fh.write(" ".join(sys.argv[1:]) + "\\n")
code = int(os.environ.get("HOOK_EXIT_" + sys.argv[1], "0"))
sys.exit(code)
"""

HANG = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
time.sleep(600)
"""


def suite_with(make_suite, tmp_path, hooks: str, timeout: int = 30, tasks: int = 2, trials: int = 1):
    eval_yaml = (f"name: h\nskill: s\nconfig: {{executor: mock, timeout_seconds: {timeout}, "
                 f"trials_per_task: {trials}}}\n" + hooks + 'tasks: ["tasks/*.yaml"]\nallow_ungraded: true\n')
    task_files = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: p{i}}}\n" for i in range(1, tasks + 1)}
    return make_suite(eval_yaml, task_files, {"log.py": LOG, "hang.py": HANG})


def hook(point_args: str, extra: str = "") -> str:
    return f"    - {{command: '{sys.executable} log.py {point_args}', working_directory: .{extra}}}\n"


def run(waza, path, env=None, *args):
    out = path.parent / "results.json"
    res = waza("run", str(path), "-q", "-o", str(out), *args, cwd=path.parent, env=env)
    return res, (json.loads(out.read_text()) if out.exists() else None)


ALL = ("hooks:\n  before_run:\n" + hook("before_run") + "  after_run:\n" + hook("after_run")
       + "  before_task:\n" + hook("before_task") + "  after_task:\n" + hook("after_task"))


def test_order_of_the_four_points(waza, make_suite, tmp_path):
    path = suite_with(make_suite, tmp_path, ALL)
    log = tmp_path / "log.txt"
    res, doc = run(waza, path, {"HOOK_LOG": str(log)})
    assert res.returncode == 0, res.stderr
    assert log.read_text().splitlines() == ["before_run", "before_task", "after_task", "before_task",
                                            "after_task", "after_run"]


def test_no_shell_the_command_is_split_on_white_space(waza, make_suite, tmp_path):
    path = suite_with(make_suite, tmp_path, "hooks:\n  before_run:\n" + hook("a | b && $HOME ;x"))
    log = tmp_path / "log.txt"
    res, _ = run(waza, path, {"HOOK_LOG": str(log)})
    assert res.returncode == 0, res.stderr
    assert log.read_text() == "a | b && $HOME ;x\n"


def test_exit_codes_and_warnings(waza, make_suite, tmp_path):
    hooks = ("hooks:\n  before_run:\n" + hook("before_run", ", exit_codes: [3]")
             + "  after_task:\n" + hook("after_task"))
    path = suite_with(make_suite, tmp_path, hooks)
    log = tmp_path / "log.txt"
    res, doc = run(waza, path, {"HOOK_LOG": str(log), "HOOK_EXIT_before_run": "3", "HOOK_EXIT_after_task": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stderr.count(b"waza: warning: after_task hook error for") == 0  # plain failures only warn...
    assert res.stderr.count(b"hook after_task[0]: ") == 2 and b"exited with code 1" in res.stderr
    assert doc["summary"]["succeeded"] == 2


def test_exit_0_outside_exit_codes_is_a_failure(waza, make_suite, tmp_path):
    path = suite_with(make_suite, tmp_path,
                      "hooks:\n  before_run:\n" + hook("before_run", ", exit_codes: [3], error_on_fail: true"))
    res, doc = run(waza, path, {"HOOK_LOG": str(tmp_path / "log.txt")})
    assert res.returncode == 2 and doc is None
    assert b"before_run hook failed: hook before_run[0]:" in res.stderr
    assert b"exited with code 0 (expected [3])" in res.stderr


def test_before_run_error_stops_the_run_and_after_run_still_runs(waza, make_suite, tmp_path):
    hooks = ("hooks:\n  before_run:\n" + hook("before_run", ", error_on_fail: true")
             + "  after_run:\n" + hook("after_run") + "  before_task:\n" + hook("before_task"))
    path = suite_with(make_suite, tmp_path, hooks)
    log = tmp_path / "log.txt"
    res, doc = run(waza, path, {"HOOK_LOG": str(log), "HOOK_EXIT_before_run": "4"})
    assert res.returncode == 2 and doc is None
    assert b"waza: error: before_run hook failed: hook before_run[0]:" in res.stderr
    assert b"Traceback" not in res.stderr
    assert log.read_text().splitlines() == ["before_run", "after_run"]  # no task ran


def test_before_task_error_fails_that_task_without_runs(waza, make_suite, tmp_path):
    hooks = "hooks:\n  before_task:\n" + hook("before_task", ", error_on_fail: true")
    path = suite_with(make_suite, tmp_path, hooks, trials=2)
    res, doc = run(waza, path, {"HOOK_LOG": str(tmp_path / "log.txt"), "HOOK_EXIT_before_task": "1"})
    assert res.returncode == 1
    assert [(t["status"], t["runs"], t["stats"]) for t in doc["tasks"]] == [("failed", [], None)] * 2
    assert doc["summary"]["failed"] == 2 and doc["summary"]["errors"] == 0
    assert "before_task hook failed" in doc["tasks"][0]["error_msg"]


def test_before_task_runs_once_per_task_with_parallel_trials(waza, make_suite, tmp_path):
    path = suite_with(make_suite, tmp_path, "hooks:\n  before_task:\n" + hook("before_task"), trials=4)
    log = tmp_path / "log.txt"
    res, doc = run(waza, path, {"HOOK_LOG": str(log)}, "--workers", "4")
    assert res.returncode == 0, res.stderr
    assert log.read_text().splitlines() == ["before_task", "before_task"]
    assert all(len(t["runs"]) == 4 for t in doc["tasks"])


def test_working_directory(waza, make_suite, tmp_path):
    (tmp_path / "suite" / "sub").mkdir(parents=True)
    hooks = ("hooks:\n  before_run:\n    - {command: '" + sys.executable
             + " -c import\\u0020os', working_directory: sub}\n")
    path = suite_with(make_suite, tmp_path, hooks.replace("\\u0020", " "))
    res, _ = run(waza, path)
    # `-c import os` is split into three words: python runs `import`; a SyntaxError only warns
    assert res.returncode == 0 and b"hook before_run[0]" in res.stderr
    hooks = "hooks:\n  before_run:\n    - {command: './nope.sh', working_directory: sub, error_on_fail: true}\n"
    path = suite_with(make_suite, tmp_path, hooks)
    res, _ = run(waza, path)
    assert res.returncode == 2 and b"nope.sh" in res.stderr


def test_a_missing_program_warns_or_fails(waza, make_suite, tmp_path):
    hooks = "hooks:\n  before_run:\n    - {command: no-such-program-waza-test}\n"
    res, doc = run(waza, suite_with(make_suite, tmp_path, hooks))
    assert res.returncode == 0 and b"no-such-program-waza-test" in res.stderr


def test_a_hook_that_hangs_is_killed_with_its_process_group(waza, make_suite, tmp_path):
    pids = tmp_path / "pids.txt"
    hooks = f"hooks:\n  before_task:\n    - {{command: '{sys.executable} hang.py {pids}'}}\n"
    path = suite_with(make_suite, tmp_path, hooks, timeout=1, tasks=1)
    t0 = time.monotonic()
    res, doc = run(waza, path)
    elapsed = time.monotonic() - t0
    assert res.returncode == 0, res.stderr  # a plain failure: a warning, and the task still runs
    assert b"timed out after 1s (its process group was killed)" in res.stderr
    assert elapsed < 30
    leader, child = (int(p) for p in pids.read_text().split())
    deadline = time.monotonic() + 5
    while (alive(leader) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(leader) and not alive(child)
    assert doc["tasks"][0]["status"] == "passed"


def test_hooks_are_checked_when_the_suite_loads(waza, make_suite, tmp_path):
    bad = "hooks:\n  before_run:\n    - {command: '   '}\n  befor_task: []\n"
    path = suite_with(make_suite, tmp_path, bad)
    res = waza("validate", str(path))
    assert b"hooks.before_run[0]: empty command" in res.stderr
    assert b"unknown key 'befor_task' (did you mean 'before_task'?)" in res.stderr
    assert os.path.exists(path)
