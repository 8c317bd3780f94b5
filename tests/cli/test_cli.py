"""The ``waza`` command: exit codes, messages without tracebacks, signals, plugins (in this
process, see tests/inprocess.py; Ctrl-C and the start-up imports in a real one)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import BASIC_EVAL, REPO
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.suite.schema import plain_validator

TASK = "id: t1\ninputs: {prompt: hello}\n"
PLUGINS = {"PYTHONPATH": str(REPO)}


def assert_clean_error(proc, *fragments):
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, err
    assert proc.stdout == b""


def test_quickstart_runs_and_validates(tmp_path):
    out = tmp_path / "out.json"
    proc = run_waza("run", str(REPO / "examples/quickstart/eval.yaml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads(out.read_bytes())
    assert not list(plain_validator("results").iter_errors(doc))
    assert doc["summary"]["succeeded"] == doc["summary"]["total_tests"] == 2
    assert "RESULTS  quickstart" in proc.stdout.decode()
    assert "with executor 'mock', model 'mock-model'" in proc.stderr.decode()
    assert "✓ [1/2]" in proc.stderr.decode()


def test_failing_task_exits_1_with_feedback(make_suite, tmp_path):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: needs_x, config: {contains: [xyzzy]}}\n"
    proc = run_waza("run", str(make_suite(ev, {"tasks/t.yaml": TASK})))
    assert proc.returncode == 1
    assert "needs_x: Missing expected substring: xyzzy" in proc.stdout.decode()


def test_config_error_exit_2_lists_problems_without_traceback(make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK + "enabled: maybe\n"})
    proc = run_waza("run", str(path))
    assert_clean_error(proc, "enabled: expected boolean, got string")


def test_results_in_missing_folder_fails_before_running(make_suite, tmp_path):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})
    target = tmp_path / "nope" / "out.json"
    proc = run_waza("run", str(path), "-o", str(target))
    assert_clean_error(proc, "folder", "does not exist")
    assert not target.parent.exists()


def test_unknown_executor_flag(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "--executor", "nope")
    assert_clean_error(proc, "unknown executor 'nope'")


def test_missing_eval_file(tmp_path):
    proc = run_waza("run", str(tmp_path / "missing.yaml"))
    assert_clean_error(proc, "missing.yaml: file not found")


def test_validate_ok_and_bad(make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})
    ok = run_waza("validate", str(path))
    assert ok.returncode == 0 and b"valid (1 task(s)" in ok.stdout
    (path.parent / "tasks" / "t.yaml").write_text(TASK + "enabled: maybe\n")
    bad = run_waza("validate", str(path))
    assert bad.returncode == 2 and b"1 problem(s) found" in bad.stderr and b"Traceback" not in bad.stderr


def test_output_dir(make_suite, tmp_path):
    outdir = tmp_path / "results"
    outdir.mkdir()
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "--output-dir", str(outdir))
    assert proc.returncode == 0
    (written,) = list(outdir.iterdir())
    doc = json.loads(written.read_bytes())
    stamp = doc["timestamp"].replace(":", "").replace("-", "")
    assert written.name == f"basic-{stamp}-{doc['eval_id'].rsplit('-', 1)[-1]}.json"
    assert [p.name for p in outdir.iterdir() if p.name.startswith(".")] == []


def test_unwritable_output_dir_fails_before_running(make_suite, tmp_path, monkeypatch):
    # in process: modes cannot make a folder unwritable for root, so os.access says so
    from typer.testing import CliRunner

    from waza_core.cli.app import build_app

    outdir = tmp_path / "results"
    outdir.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **k: (str(p) != str(outdir) or not m & os.W_OK)
                        and real_access(p, m, **k))
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})
    res = CliRunner().invoke(build_app(), ["run", str(path), "--output-dir", str(outdir)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.exception
    assert f"--output-dir {outdir}: folder is not writable" in res.stderr
    assert "RESULTS" not in res.stdout and list(outdir.iterdir()) == []


def test_output_and_output_dir_conflict(make_suite, tmp_path):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "-o", "x.json",
                    "--output-dir", str(tmp_path))
    assert_clean_error(proc, "not both")


def test_quiet_prints_nothing(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "--quiet")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""


def test_log_format_json_is_accepted_and_bad_value_rejected(make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})
    assert run_waza("run", str(path), "--log-format", "json").returncode == 0
    assert_clean_error(run_waza("run", str(path), "--log-format", "xml"), "--log-format")


def test_ctrl_c_writes_what_finished_marked_incomplete(make_suite, tmp_path):
    ev = BASIC_EVAL + "graders:\n  - {type: sleep, name: slow, config: {seconds: 1.5}}\n"
    tasks = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: p}}\n" for i in range(5)}
    out = tmp_path / "out.json"
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "waza_core", "run", str(make_suite(ev, tasks)), "-o", str(out),
                             "-p", "tests.fixture_plugins.test_graders"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    buf = b""
    while b"[1/5]" not in buf and time.monotonic() < deadline:  # wait until one task finished
        buf += os.read(proc.stderr.fileno(), 4096)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr
    doc = json.loads(out.read_bytes())
    assert doc["incomplete"] is True
    assert 1 <= len(doc["tasks"]) < 5
    assert not list(plain_validator("results").iter_errors(doc))
    assert b"INCOMPLETE" in stdout


def test_plugins_lists_builtins_and_broken_modules():
    proc = run_waza("plugins", "--json", "-p", "tests.fixture_plugins.broken_import", env=PLUGINS)
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    by_name = {p["name"]: p for p in doc["plugins"]}
    assert by_name["waza_graders.text"]["registers"] == {"grader": ["text"]}
    assert by_name["waza_adapters.mock"]["registers"] == {"executor": ["mock"]}
    broken = by_name["tests.fixture_plugins.broken_import"]
    assert "a_module_that_does_not_exist" in broken["error"]
    text = run_waza("plugins", "-p", "tests.fixture_plugins.broken_import", env=PLUGINS).stdout.decode()
    assert "BROKEN: ModuleNotFoundError" in text


def test_broken_plugin_does_not_break_a_run_that_does_not_need_it(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})),
                    env={**PLUGINS, "WAZA_PLUGINS": "tests.fixture_plugins.broken_import"})
    assert proc.returncode == 0, proc.stderr.decode()


def test_unknown_type_names_the_broken_plugin(make_suite):
    ev = BASIC_EVAL + "graders:\n  - {type: wordy, name: g}\n"
    proc = run_waza("validate", str(make_suite(ev, {"tasks/t.yaml": TASK})),
                    "-p", "tests.fixture_plugins.broken_import", env=PLUGINS)
    assert proc.returncode == 2 and b"unknown grader type 'wordy'" in proc.stderr


def test_duplicate_name_names_both_plugins(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})),
                    "-p", "tests.fixture_plugins.dup_text", env=PLUGINS)
    assert_clean_error(proc, "grader 'text' is registered by two plugins: 'waza_graders.text' and "
                             "'tests.fixture_plugins.dup_text'")
    listing = run_waza("plugins", "-p", "tests.fixture_plugins.dup_text", env=PLUGINS)
    assert listing.returncode == 2 and b"CONFLICT" in listing.stdout


def test_schema_command(tmp_path):
    proc = run_waza("schema", "eval")
    doc = json.loads(proc.stdout)
    assert "text" in doc["$defs"]["grader"]["properties"]["type"]["enum"]
    assert any(c["if"]["properties"]["type"]["const"] == "text" for c in doc["$defs"]["grader"]["allOf"])
    assert json.loads(run_waza("schema", "results").stdout)["$id"] == "urn:waza:schema:results"
    assert json.loads(run_waza("schema", "task").stdout)["$id"] == "urn:waza:schema:task"
    assert_clean_error(run_waza("schema", "nope"), "unknown schema 'nope'")


HEAVY = ("jsonschema", "ruamel", "structlog", "pluggy", "attrs", "rich", "waza_graders", "waza_adapters")


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["run", "--help"]])
def test_version_and_help_import_no_heavy_library(args):
    code = ("import sys, runpy; sys.argv = ['waza', *%r]\n"
            "try:\n    from waza_core.cli import main; main()\nexcept SystemExit: pass\n"
            "print('MODULES', sorted(m for m in sys.modules))") % (args,)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    modules = proc.stdout.split("MODULES", 1)[1]
    loaded = [h for h in HEAVY if f"'{h}'" in modules or f"'{h}." in modules]
    assert loaded == [], loaded


def test_version():
    proc = run_waza("--version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("waza ")


def test_usage_error_exit_2():
    proc = run_waza("run")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_validate_checks_inputs_like_run(make_suite):
    task = "id: t\ninputs:\n  prompt: p\n  files: [{path: missing.txt}]\n"
    proc = run_waza("validate", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": task})))
    assert_clean_error(proc, "cannot read input file", "missing.txt")


def test_validate_rejects_a_suite_whose_tasks_are_all_disabled(make_suite):
    proc = run_waza("validate",
                    str(make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\nenabled: false\ninputs: {prompt: p}\n"})))
    assert_clean_error(proc, "no task to run")


def test_broken_plugin_is_logged_as_json_with_log_format_json(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "--log-format", "json",
                    "-p", "tests.fixture_plugins.broken_import", env=PLUGINS)
    assert proc.returncode == 0
    line = next(ln for ln in proc.stderr.decode().splitlines() if ln.startswith("{"))
    event = json.loads(line)
    assert event["event"] == "plugin failed to load" and event["level"] == "warning"
    assert event["plugin"] == "tests.fixture_plugins.broken_import"


def test_output_dir_never_overwrites_a_run_of_the_same_second(make_suite, tmp_path):
    outdir = tmp_path / "r"
    outdir.mkdir()
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})
    for _ in range(3):
        assert run_waza("run", str(path), "--output-dir", str(outdir), "-q").returncode == 0
    assert len(list(outdir.iterdir())) == 3


def test_workers_flag_implies_parallel(make_suite, tmp_path):
    tasks = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs: {{prompt: p}}\n" for i in range(3)}
    path = make_suite(BASIC_EVAL, tasks)
    for flag, parallel in (("2", True), ("1", False)):
        out = tmp_path / f"w{flag}.json"
        assert run_waza("run", str(path), "--workers", flag, "-q", "-o", str(out)).returncode == 0
        assert json.loads(out.read_text())["config"]["parallel"] is parallel
