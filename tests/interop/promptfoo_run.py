"""Running the real promptfoo (the pinned oracle) and waza on the same config, offline.

How promptfoo is kept offline and quiet (:data:`PF_ENV`, :data:`PF_FLAGS`,
:func:`offline_prefix`, :func:`promptfoo_env`, :func:`promptfoo_argv`) is shared with
``bench/bench_promptfoo.py``.

promptfoo runs with ``--providers echo`` (its built-in provider that answers with the
prompt), ``--no-write`` (no results database), no cache, no sharing, telemetry and update
checks off, its config folder in a temporary directory, and inside an empty network
namespace (``unshare -n``) where the system allows it. waza imports the config with
``waza interop import-suite`` and runs it with ``--executor echo``. Verdicts are compared
test by test: promptfoo's (promptIdx, testIdx) is waza's task ``t<j>`` (one prompt) or
``p<i>-t<j>``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.interop.helpers import REPO  # noqa: F401 (used by the tests through this module)

ORACLE = Path(__file__).resolve().parent / "promptfoo_oracle"
FIXTURES = Path(__file__).resolve().parent / "promptfoo_fixtures"
ENTRY = ORACLE / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
PF_ENV = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_CACHE_ENABLED": "false",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
    "PROMPTFOO_DISABLE_RUNTIME_WARNINGS": "1",
    "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
    "PROMPTFOO_SELF_HOSTED": "1",
}
#: no cache, no table, no progress bar, no sharing
PF_FLAGS = ["--no-cache", "--no-table", "--no-progress-bar", "--no-share"]


def install() -> str:
    """The node binary, after the pinned promptfoo is installed (fails, never skips)."""
    node = shutil.which("node")
    assert node, "node is not on PATH: the promptfoo oracle tests need Node.js >= 20 and npm"
    proc = subprocess.run(["bash", str(ORACLE / "install.sh")], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"promptfoo_oracle/install.sh failed:\n{proc.stderr[-3000:]}"
    assert ENTRY.is_file(), ENTRY
    return node


def offline_prefix() -> list[str]:
    """``unshare -n`` (an empty network namespace) where it works, else nothing."""
    exe = shutil.which("unshare")
    if exe and subprocess.run([exe, "-n", "true"], capture_output=True).returncode == 0:
        return [exe, "-n"]
    return []


def promptfoo_env(base: dict[str, str], scratch: Path) -> dict[str, str]:
    """``base`` with promptfoo's off switches and its config and cache folders in ``scratch``."""
    return {**base, **PF_ENV, "PROMPTFOO_CONFIG_DIR": str(scratch / "pf-config"),
            "PROMPTFOO_CACHE_PATH": str(scratch / "pf-cache")}


def promptfoo_argv(node: str, entry: Path, config: Path) -> list[str]:
    """``promptfoo eval -c CONFIG`` offline (where the system allows) with :data:`PF_FLAGS`."""
    return offline_prefix() + [node, str(entry), "eval", "-c", str(config), *PF_FLAGS]


def promptfoo_verdicts(node: str, config: Path, home: Path) -> dict[tuple[int, int], bool]:
    """{(promptIdx, testIdx): success} from ``promptfoo eval`` with the echo provider."""
    out = home / "promptfoo-out.json"
    env = promptfoo_env({"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"},
                        home)
    argv = promptfoo_argv(node, ENTRY, config) + ["--providers", "echo", "--no-write", "-j", "1", "-o", str(out)]
    proc = subprocess.run(argv, cwd=config.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 100), f"promptfoo eval failed ({proc.returncode}):\n{proc.stdout[-3000:]}" \
                                        f"\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text(encoding="utf-8"))
    results = data["results"]["results"]
    errors = [r for r in results if r.get("error") and not r.get("gradingResult")]
    assert not errors, f"promptfoo reported errors: {[r['error'] for r in errors][:3]}"
    return {(r["promptIdx"], r["testIdx"]): bool(r["success"]) for r in results}


def waza(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``waza ARGS`` in this process (tests/inprocess.py), its output decoded: these tests
    compare verdicts, not the process boundary, and a new interpreter per call was about
    0.2-0.5 s of CPU each, five calls per fixture."""
    # imported here: bench/bench_promptfoo.py imports this module for promptfoo's argv alone
    from tests.inprocess import run_waza_in_process

    # WAZA_CODE_WARM: the imported assertions are ``code`` graders, and one evaluator process
    # per run and grader (node, ~95 ms to start) was most of these tests' time; the verdicts
    # are the same either way (tests/graders/test_code.py checks the cold path)
    proc = run_waza_in_process(*args, cwd=cwd, env={"WAZA_DISABLE_PLUGIN_AUTOLOAD": "1", "WAZA_CODE_WARM": "1"})
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def waza_verdicts(suite: Path, home: Path) -> dict[str, bool]:
    """{task id: passed} from ``waza run SUITE --executor echo``."""
    out = home / "waza-out.json"
    proc = waza("run", str(suite), "--executor", "echo", "-q", "-o", str(out), "--cache-dir",
                str(home / "waza-cache"), cwd=home)
    assert proc.returncode in (0, 1), f"waza run failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text(encoding="utf-8"))
    return {t["test_id"]: t["status"] == "passed" for t in data["tasks"]}


def task_id(prompt_idx: int, test_idx: int, prompts: int) -> str:
    return f"t{test_idx + 1}" if prompts == 1 else f"p{prompt_idx + 1}-t{test_idx + 1}"


def compare(pf: dict[tuple[int, int], bool], wz: dict[str, bool]) -> list[str]:
    """The differences, one line each (empty when every test has the same verdict)."""
    prompts = len({p for p, _ in pf})
    expected = {task_id(p, t, prompts): ok for (p, t), ok in pf.items()}
    diffs = [f"{k}: promptfoo {'pass' if v else 'fail'}, waza {wz.get(k)}" for k, v in sorted(expected.items())
             if wz.get(k) is not v]
    diffs += [f"{k}: only in waza" for k in sorted(set(wz) - set(expected))]
    return diffs
