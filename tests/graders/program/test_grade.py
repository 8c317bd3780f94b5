"""``waza grade``: offline grading of saved runs, through the command line called in this process
(tests/inprocess.py); the interrupt test starts a real process (the signal is what it checks)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import write
from tests.graders.program.conftest import PY
from tests.inprocess import run_waza_in_process
from waza_core.suite.schema import plain_validator

EVAL = f"""
name: offline
skill: demo
config:
  executor: mock
  trials_per_task: 2
graders:
  - type: program
    name: reads_stdin
    config:
      command: {PY}
      args: ["-S", "graders/stdin_mentions_prompt.py"]
  - type: program
    name: reads_context
    config:
      command: {PY}
      args: ["-S", "graders/context_matches_stdin.py"]
  - type: text
    name: says_mock
    config:
      contains: ["mock response"]
tasks: ["tasks/*.yaml"]
"""

GRADERS = {
    "graders/stdin_mentions_prompt.py": """
        import sys
        out = sys.stdin.read()
        if "please fail" in out:
            print("asked to fail", file=sys.stderr)
            sys.exit(1)
        print("stdin ok")
    """,
    "graders/context_matches_stdin.py": """
        import json, os, sys
        out = sys.stdin.read()
        ctx = json.load(open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8"))
        assert ctx["version"] == 1 and ctx["output"] == out, "context does not match stdin"
        assert isinstance(ctx["duration_ms"], int)
        print("context ok")
    """,
    "graders/dump_context.py": """
        import os, shutil
        shutil.copy(os.environ["WAZA_GRADING_CONTEXT"],
                    os.path.join(os.environ["WAZA_WORKSPACE_DIR"], "context-seen.json"))
    """,
    "graders/needs_flag.py": """
        import os, sys, time
        if not os.path.exists(os.path.join(os.environ["WAZA_WORKSPACE_DIR"], "flag")):
            time.sleep(30)
        print("flag seen")
    """,
}

TASKS = {
    "tasks/good.yaml": "id: good\ninputs: {prompt: explain the code}\n",
    "tasks/bad.yaml": "id: bad\ninputs: {prompt: please fail}\n",
}


@pytest.fixture
def suite(tmp_path) -> Path:
    root = tmp_path / "suite"
    write(root / "eval.yaml", EVAL)
    for name, text in {**TASKS, **GRADERS}.items():
        write(root / name, text)
    return root


def waza_in(root: Path, *args: str, **kw):
    return run_waza_in_process(*args, cwd=root, **kw)


def verdicts(doc: dict) -> dict:
    return {(t["test_id"], r["run_number"], name): (v["passed"], v["score"])
            for t in doc["tasks"] for r in t["runs"] for name, v in r["validations"].items()}


def assert_valid(doc: dict) -> None:
    errors = list(plain_validator("results").iter_errors(doc))
    assert not errors, errors[0].message


def test_skip_graders_then_grade_gives_the_live_verdicts(suite):
    live = waza_in(suite, "run", "eval.yaml", "-o", "live.json", "-q")
    assert live.returncode == 1, live.stderr.decode()  # 'bad' fails on purpose
    skipped = waza_in(suite, "run", "eval.yaml", "--skip-graders", "-o", "skipped.json", "-q")
    assert skipped.returncode == 0, skipped.stderr.decode()
    skipped_doc = json.loads((suite / "skipped.json").read_text())
    assert {r["status"] for t in skipped_doc["tasks"] for r in t["runs"]} == {"n/a"}
    assert skipped_doc["summary"]["skipped"] == 2

    proc = waza_in(suite, "grade", "eval.yaml", "--results", "skipped.json", "-o", "graded.json",
                   "--workspace", ".")
    assert proc.returncode == 0, proc.stderr.decode()  # grades do not change the exit code
    live_doc = json.loads((suite / "live.json").read_text())
    graded = json.loads((suite / "graded.json").read_text())
    assert_valid(graded)
    assert verdicts(graded) == verdicts(live_doc)
    assert len(verdicts(graded)) == 12
    assert [t["status"] for t in graded["tasks"]] == [t["status"] for t in live_doc["tasks"]]
    assert graded["summary"]["succeeded"] == 1 and graded["summary"]["failed"] == 1
    assert graded["summary"]["skipped"] == 0
    assert graded["tasks"][0]["stats"]["total_runs"] == 2

    summary = json.loads(proc.stdout)
    assert summary == {
        "overall_score": pytest.approx((1.0 + 2 / 3) / 2),
        "passed": False,
        "tasks": {
            "bad": {"overall_score": pytest.approx(2 / 3), "passed": False, "status": "failed",
                    "grader_averages": {"reads_stdin": 0.0, "reads_context": 1.0, "says_mock": 1.0}},
            "good": {"overall_score": 1.0, "passed": True, "status": "passed",
                     "grader_averages": {"reads_stdin": 1.0, "reads_context": 1.0, "says_mock": 1.0}},
        },
    }
    bad_run = graded["tasks"][0]["runs"][0]
    assert bad_run["validations"]["reads_stdin"]["feedback"] == "Program exited with error: exit status 1; " \
                                                                "stderr: asked to fail"


def test_regrading_a_graded_file_gives_the_same_verdicts(suite):
    assert waza_in(suite, "run", "eval.yaml", "-o", "live.json", "-q").returncode == 1
    proc = waza_in(suite, "grade", "eval.yaml", "--results", "live.json", "-o", "again.json", "--workspace", ".")
    assert proc.returncode == 0, proc.stderr.decode()
    live = json.loads((suite / "live.json").read_text())
    again = json.loads((suite / "again.json").read_text())
    assert verdicts(again) == verdicts(live)
    for key in ("final_output", "session_digest", "duration_ms", "session_id"):
        assert again["tasks"][0]["runs"][0][key] == live["tasks"][0]["runs"][0][key]
    assert again["eval_id"] == live["eval_id"] and again["config"]["regraded"] is True


def test_old_results_without_the_new_fields_give_nulls(suite, tmp_path):
    write(suite / "dump.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: dump
    config:
      command: {PY}
      args: ["-S", "graders/dump_context.py"]
tasks: ["tasks/good.yaml"]
""")
    assert waza_in(suite, "run", "dump.yaml", "--skip-graders", "-o", "new.json", "-q").returncode == 0
    doc = json.loads((suite / "new.json").read_text())
    for run in doc["tasks"][0]["runs"]:
        for key in ("tool_events", "host_lifecycle", "command_invocations", "user_input_requests",
                    "transcript", "outcome"):
            del run[key]
        run["session_digest"].pop("tool_calls")
    (suite / "old.json").write_text(json.dumps(doc))
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = waza_in(suite, "grade", "dump.yaml", "--results", "old.json", "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr.decode()
    ctx = json.loads((ws / "context-seen.json").read_text())
    assert ctx["tool_events"] is None and ctx["host_lifecycle"] is None
    assert ctx["command_invocations"] is None and ctx["user_input_requests"] is None
    assert ctx["transcript"] == [] and ctx["tool_calls"] == [] and ctx["outcome"] == {}
    assert ctx["output"].startswith("Mock response for: explain the code")


def test_recorded_empty_lists_stay_lists_offline(suite, tmp_path):
    write(suite / "dump.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: dump
    config: {{command: {PY}, args: ["-S", "graders/dump_context.py"]}}
tasks: ["tasks/good.yaml"]
""")
    assert waza_in(suite, "run", "dump.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    doc = json.loads((suite / "r.json").read_text())
    for run in doc["tasks"][0]["runs"]:
        run["command_invocations"] = []
        run["tool_events"] = [{"turn": 1, "sequence": 1, "tool_name": "bash", "success": True}]
    (suite / "r.json").write_text(json.dumps(doc))
    ws = tmp_path / "ws"
    ws.mkdir()
    assert waza_in(suite, "grade", "dump.yaml", "--results", "r.json", "--workspace", str(ws)).returncode == 0
    ctx = json.loads((ws / "context-seen.json").read_text())
    assert ctx["command_invocations"] == [] and ctx["tool_events"][0]["tool_name"] == "bash"
    assert ctx["user_input_requests"] is None


def test_agent_error_runs_stay_errors_and_grader_error_runs_are_regraded(suite, tmp_path):
    write(suite / "flag.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: needs_flag
    config: {{command: {PY}, args: ["-S", "graders/needs_flag.py"], timeout: 1}}
tasks: ["tasks/*.yaml"]
""")
    live = waza_in(suite, "run", "flag.yaml", "-o", "live.json", "-q")
    assert live.returncode == 1
    doc = json.loads((suite / "live.json").read_text())
    run = doc["tasks"][0]["runs"][0]
    assert run["status"] == "error" and run["validations"]["needs_flag"]["error"]["kind"] == "timeout"
    # the agent itself failed on the other task's first run: no output to judge
    agent_failed = doc["tasks"][1]["runs"][0]
    agent_failed.update(status="error", validations={}, error_msg="executor 'mock' failed: boom", final_output="")
    (suite / "live.json").write_text(json.dumps(doc))

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "flag").write_text("")
    proc = waza_in(suite, "grade", "flag.yaml", "--results", "live.json", "--workspace", str(ws), "-o", "g.json")
    assert proc.returncode == 0, proc.stderr.decode()
    graded = json.loads((suite / "g.json").read_text())
    assert_valid(graded)
    by_id = {t["test_id"]: t for t in graded["tasks"]}
    first = by_id[doc["tasks"][0]["test_id"]]
    assert [r["status"] for r in first["runs"]] == ["passed", "passed"]
    assert "error_msg" not in first["runs"][0]
    second = by_id[doc["tasks"][1]["test_id"]]
    assert second["runs"][0]["status"] == "error"
    assert second["runs"][0]["error_msg"] == "executor 'mock' failed: boom"
    assert second["runs"][0]["validations"] == {}
    assert second["runs"][1]["status"] == "passed" and second["status"] == "error"
    assert graded["summary"]["errors"] == 1 and graded["summary"]["succeeded"] == 1
    summary = json.loads(proc.stdout)
    assert summary["tasks"][second["test_id"]]["status"] == "error"


def test_offline_timeout_and_start_failure_are_reported_as_errors(suite, tmp_path):
    write(suite / "broken.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: slow
    config: {{command: {PY}, args: ["-S", "graders/needs_flag.py"], timeout: 0.5}}
  - type: program
    name: missing
    config: {{command: no-such-grader-on-path}}  # a missing ./script is a load error now
tasks: ["tasks/good.yaml"]
""")
    assert waza_in(suite, "run", "broken.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    proc = waza_in(suite, "grade", "broken.yaml", "--results", "r.json", "-o", "g.json",
                   "--workspace", str(tmp_path))
    assert proc.returncode == 0, proc.stderr.decode()
    run = json.loads((suite / "g.json").read_text())["tasks"][0]["runs"][0]
    assert run["status"] == "error"
    assert run["validations"]["slow"]["error"]["kind"] == "timeout"
    assert run["validations"]["missing"]["error"]["kind"] == "start_failed"
    assert "no-such-grader" in run["error_msg"]


def test_task_filter_keeps_other_tasks_unchanged_after_the_graded_one(suite):
    assert waza_in(suite, "run", "eval.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    before = json.loads((suite / "r.json").read_text())
    proc = waza_in(suite, "grade", "eval.yaml", "--results", "r.json", "--task", "good", "-o", "g.json",
                   "--workspace", ".")
    assert proc.returncode == 0, proc.stderr.decode()
    assert list(json.loads(proc.stdout)["tasks"]) == ["good"]
    after = json.loads((suite / "g.json").read_text())
    assert [t["test_id"] for t in after["tasks"]] == ["good", "bad"]
    assert after["tasks"][1] == next(t for t in before["tasks"] if t["test_id"] == "bad")
    assert after["summary"]["succeeded"] == 1 and after["summary"]["skipped"] == 1
    assert_valid(after)


@pytest.mark.parametrize("args,fragments", [
    (["--results", "nope.json"], ["cannot read results file nope.json"]),
    (["--results", "eval.yaml"], ["results file eval.yaml is not valid JSON"]),
    (["--results", "r.json", "--task", "ghost"], ["task 'ghost' not found in eval.yaml"]),
    (["--results", "r.json", "--workspace", "no-such-dir"], ["--workspace no-such-dir: no such folder"]),
    (["--results", "r.json", "-o", "missing-dir/out.json"], ["missing-dir", "does not exist"]),
    (["--results", "empty.json"], ["nothing was graded"]),
    (["--results", "empty.json", "--task", "good"], ["task 'good' is not in the results file"]),
])
def test_user_mistakes_are_one_line_errors(suite, args, fragments):
    assert waza_in(suite, "run", "eval.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    (suite / "empty.json").write_text(json.dumps({"tasks": []}))
    proc = waza_in(suite, "grade", "eval.yaml", *args)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "Traceback" not in err and proc.stdout == b""
    for f in fragments:
        assert f in err, err


def test_grade_uses_the_waza_yaml_program_timeout_of_the_working_directory(suite, tmp_path):
    write(suite / "flag.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: needs_flag
    config: {{command: {PY}, args: ["-S", "graders/needs_flag.py"]}}
tasks: ["tasks/good.yaml"]
""")
    (suite / ".waza.yaml").write_text("graders:\n  programTimeout: 1\n")
    assert waza_in(suite, "run", "flag.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    proc = waza_in(suite, "grade", "flag.yaml", "--results", "r.json", "-o", "g.json", "--workspace", str(tmp_path))
    assert proc.returncode == 0
    run = json.loads((suite / "g.json").read_text())["tasks"][0]["runs"][0]
    assert run["validations"]["needs_flag"]["error"]["kind"] == "timeout"
    assert "timed out after 1 s" in run["error_msg"]


def test_broken_waza_yaml_is_a_clean_error_naming_it(suite):
    assert waza_in(suite, "run", "eval.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    (suite / ".waza.yaml").write_text("graders:\n  programTimeout: [oops\n")
    proc = waza_in(suite, "run", "eval.yaml", "-q")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert ".waza.yaml:" in err and "invalid YAML" in err
    (suite / ".waza.yaml").write_text("graders:\n  programTimeout: soon\n")
    proc = waza_in(suite, "grade", "eval.yaml", "--results", "r.json")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert "graders.programTimeout must be a number" in err and str(suite / ".waza.yaml") in err


def test_grader_config_mistakes_are_load_errors_with_a_position(suite):
    write(suite / "bad.yaml", EVAL.split("graders:")[0] + """
graders:
  - type: program
    name: no_command
    config: {args: ["x"]}
  - type: program
    name: bad_args
    config: {command: python3, args: [1, 2], timeout: -1, shell: true}
tasks: ["tasks/good.yaml"]
""")
    proc = waza_in(suite, "validate", "bad.yaml")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err
    assert "missing required key 'command'" in err
    assert "expected string, got integer" in err
    assert "unknown key 'shell'" in err
    assert "bad.yaml:" in err
    assert "timeout" in err


def test_grade_help_lists_the_options():
    out = run_waza_in_process("grade", "--help").stdout.decode()
    for opt in ("--results", "--task", "--workspace", "--output", "--plugin"):
        assert opt in out


def test_progress_lines_with_verbose(suite):
    assert waza_in(suite, "run", "eval.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    proc = waza_in(suite, "grade", "eval.yaml", "--results", "r.json", "-v", "--workspace", ".")
    assert "waza: bad run 1: failed" in proc.stderr.decode()
    assert "waza: good run 2: passed" in proc.stderr.decode()
    assert os.path.exists(suite / "r.json")


def test_interrupt_exits_130_writes_nothing_and_leaves_no_context_dir(suite, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    write(suite / "graders/slow.py", """
        import os, time
        open(os.path.join(os.environ["WAZA_WORKSPACE_DIR"], "started"), "w").write(os.environ["WAZA_GRADING_CONTEXT"])
        time.sleep(60)
    """)
    write(suite / "slow.yaml", EVAL.split("graders:")[0] + f"""
graders:
  - type: program
    name: slow
    config: {{command: {PY}, args: ["-S", "graders/slow.py"], timeout: 120}}
tasks: ["tasks/good.yaml"]
""")
    assert waza_in(suite, "run", "slow.yaml", "--skip-graders", "-o", "r.json", "-q").returncode == 0
    tmpdir = tmp_path / "private-tmp"
    tmpdir.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), WAZA_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.Popen([sys.executable, "-m", "waza_core", "grade", "slow.yaml", "--results", "r.json",
                             "--workspace", str(ws), "-o", "g.json"], cwd=suite, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (ws / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (ws / "started").exists(), proc.stderr.read().decode() if proc.poll() is not None else "not started"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    assert "Traceback" not in err.decode() and "interrupted" in err.decode()
    assert not (suite / "g.json").exists()
    assert list(tmpdir.iterdir()) == []
