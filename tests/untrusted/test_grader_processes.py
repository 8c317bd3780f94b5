"""Processes started by a ``code`` grader's assertion (Python or JavaScript), even ones that
leave the evaluator's session (``setsid``), are reaped with the run: nothing waza started
outlives it (docs/safety.md)."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from tests.conftest import BASIC_EVAL, run_waza

TASK = "id: t1\ninputs:\n  prompt: hello\n"

# The Python evaluator has no builtins, but the `re` module it exposes reaches `os`.
PY_ESCAPE = ("re.enum.sys.modules['builtins'].__import__('os')"
             ".system('setsid sleep 300 > {log} 2>&1 & echo $! > {pid}') == 0")
# The JavaScript evaluator's vm context holds arrays made outside it: their Function is the host's.
JS_ESCAPE = ("(p => p.mainModule.require('fs').writeFileSync('{pid}', String(p.mainModule.require('child_process')"
             ".spawn('sleep', ['300'], {{detached: true, stdio: 'ignore'}}).pid)) === undefined)"
             "(transcript.constructor.constructor('return process')())")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_a_daemon_started_by_an_assertion_does_not_outlive_waza(make_suite, tmp_path, language):
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    pid_file = tmp_path / "daemon.pid"
    if language == "python":
        assertion = PY_ESCAPE.format(log=tmp_path / "daemon.log", pid=pid_file)
    else:
        assertion = JS_ESCAPE.format(pid=pid_file)
    suite = make_suite(BASIC_EVAL + f"graders:\n  - type: code\n    name: escape\n    config:\n"
                       f"      language: {language}\n      assertions:\n        - {assertion!r}\n",
                       {"tasks/t1.yaml": TASK})
    proc = run_waza("run", str(suite), "-o", str(tmp_path / "r.json"))
    assert proc.returncode in (0, 1), proc.stderr.decode()
    assert pid_file.exists(), "the assertion did not start its daemon (the test no longer escapes)"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:  # never leave one behind, even when the test fails
        os.kill(pid, 9)
    assert not alive, f"the process {pid} the {language} assertion started outlived waza"
