"""End to end through `waza run` / `waza grade`: the examples, and the hostile cases."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def copy_example(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(EXAMPLES / name, dest)
    return dest


def results_of(path: Path) -> dict:
    return json.loads(path.read_text())


def runs_by_task(results: dict) -> dict:
    return {t["test_id"]: t["runs"] for t in results["tasks"]}


def test_command_mocks_example_passes_records_and_regrades_offline(waza, tmp_path):
    suite = copy_example("command-mocks", tmp_path)
    done = waza("run", "eval.yaml", "-o", "results.json", cwd=suite)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    results = results_of(suite / "results.json")
    runs = runs_by_task(results)
    account = runs["account"][0]
    assert account["status"] == "passed"
    assert account["command_invocations"] == [
        {"command": "az", "args": ["account", "show"], "exit_code": 0, "response_index": 0}]
    assert account["validations"]["account_lookup"]["feedback"].strip() == "1 mocked command call(s) checked"
    unmatched = runs["unmatched"][0]
    assert unmatched["status"] == "passed", unmatched
    assert unmatched["command_invocations"][1] == {
        "command": "az", "args": ["group", "delete", "--name", "rg-web", "--yes"], "exit_code": 127,
        "response_index": -1}
    assert "exit 127" in unmatched["final_output"]
    # offline: the same evidence reaches the graders from the results file alone
    graded = waza("grade", "eval.yaml", "--results", "results.json", "--workspace", ".", "-o", "regraded.json",
                  cwd=suite)
    assert graded.returncode == 0, graded.stderr.decode()
    from waza_core.suite.schema import plain_validator

    assert list(plain_validator("results").iter_errors(results)) == []
    regraded = runs_by_task(results_of(suite / "regraded.json"))
    assert regraded["account"][0]["command_invocations"] == account["command_invocations"]
    assert regraded["account"][0]["validations"]["account_lookup"]["passed"] is True
    assert regraded["unmatched"][0]["validations"]["unmatched_recorded"]["passed"] is True


def test_the_seed_grader_fails_a_run_that_never_called_the_mock(waza, tmp_path):
    suite = copy_example("command-mocks", tmp_path)
    (suite / "tasks" / "unmatched.yaml").unlink()
    (suite / "tasks" / "account.yaml").write_text(textwrap.dedent("""
        id: account
        name: no call
        inputs:
          prompt: Just say hello.
        """))
    done = waza("run", "eval.yaml", "-o", "results.json", cwd=suite)
    assert done.returncode == 1
    run = runs_by_task(results_of(suite / "results.json"))["account"][0]
    assert run["command_invocations"] == []  # mocks installed, nothing called
    check = run["validations"]["account_lookup"]
    assert check["passed"] is False and "expected 'az account show'" in check["feedback"]


def test_expect_calls_mismatch_makes_the_run_an_error(waza, tmp_path):
    suite = copy_example("command-mocks", tmp_path)
    text = (suite / "eval.yaml").read_text().replace("  - name: az\n", "  - name: az\n    expect_calls: 5\n")
    (suite / "eval.yaml").write_text(text)
    (suite / "tasks" / "unmatched.yaml").unlink()
    done = waza("run", "eval.yaml", "-o", "results.json", cwd=suite)
    assert done.returncode == 1
    run = runs_by_task(results_of(suite / "results.json"))["account"][0]
    assert run["status"] == "error"
    assert run["error_msg"] == 'command mock "az" expected 5 call(s), got 1'
    assert len(run["command_invocations"]) == 1


def test_under_the_mock_executor_mocks_are_not_installed(waza, tmp_path):
    suite = copy_example("command-mocks", tmp_path)
    done = waza("run", "eval.yaml", "--executor", "mock", "--skip-graders", "-o", "results.json", cwd=suite)
    assert done.returncode == 0, done.stderr.decode()
    assert "are not installed" in done.stderr.decode()
    for runs in runs_by_task(results_of(suite / "results.json")).values():
        assert runs[0]["command_invocations"] is None


def test_mcp_mocks_example(waza, tmp_path):
    suite = copy_example("mcp-mocks", tmp_path)
    done = waza("run", "eval.yaml", "-o", "results.json", cwd=suite, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    runs = runs_by_task(results_of(suite / "results.json"))
    calls = runs["alice"][0]["mcp_invocations"]
    assert [(c["tool"], c["arguments"], c["response_index"], c["is_error"]) for c in calls] == [
        ("list_items", {"owner": "alice"}, 0, False), ("get_stock", {"item": "laptop"}, 0, False)]
    assert runs["bob"][0]["mcp_invocations"][0]["is_error"] is True
    assert runs["alice"][0]["command_invocations"] is None
    assert runs["alice"][0]["validations"]["used_inventory"]["passed"] is True  # read from WAZA_GRADING_CONTEXT
    from waza_core.suite.schema import plain_validator

    assert list(plain_validator("results").iter_errors(results_of(suite / "results.json"))) == []


def git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


AGENT = """
import os, subprocess, sys
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
print(open("app.py").read().strip(), os.environ.get("STAGE"), os.path.basename(os.getcwd()))
if len(sys.argv) > 1 and sys.argv[1] == "hang":
    # outside the workspace and without the session variable: the shim finds no session
    # and passes the call through to the real (hanging) program
    env = {k: v for k, v in os.environ.items() if k != "WAZA_COMMAND_MOCK_SESSION"}
    subprocess.run(["slowpoke"], cwd="/", env=env)
"""


def repo_suite(make_suite, tmp_path, commit="v1", prompt="go", extra_eval="", timeout=60):
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    (src / "app.py").write_text("version one\n")
    git(src, "add", ".")
    git(src, "commit", "-qm", "one")
    git(src, "tag", "v1")
    (src / "app.py").write_text("version two\n")
    git(src, "commit", "-qam", "two")
    return make_suite(f"""
        schemaVersion: "1.3"
        name: repos
        skill: demo
        config:
          executor: cli
          timeout_seconds: {timeout}
          cli:
            command: ["{sys.executable}", "{{suite_dir}}/agent.py", "{{prompt}}"]
        {extra_eval}
        tasks: ["tasks/*.yaml"]
        allow_ungraded: true
        """, tasks={"tasks/t.yaml": f"""
        id: t
        inputs:
          prompt: {prompt}
          workdir: checkout
          environment: {{STAGE: staging}}
          repos: [{{type: worktree, source: ../src, dest: checkout, commit: {commit}}}]
        """}, files={"agent.py": AGENT}), src


def test_a_task_runs_in_a_pinned_checkout_with_its_environment(make_suite, waza, tmp_path):
    path, src = repo_suite(make_suite, tmp_path)
    before = git(src, "for-each-ref")
    done = waza("run", str(path), "-o", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr.decode()
    run = runs_by_task(results_of(tmp_path / "r.json"))["t"][0]
    assert run["final_output"] == "version one staging checkout"
    assert git(src, "for-each-ref") == before
    assert not (src / ".git" / "worktrees").exists()


def test_a_ref_that_does_not_exist_stops_the_run_before_it_starts(make_suite, waza, tmp_path):
    path, _ = repo_suite(make_suite, tmp_path, commit="no-such-tag")
    done = waza("run", str(path))
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "inputs.repos[0].commit" in err and "'no-such-tag'" in err and "Traceback" not in err


def test_a_hanging_command_behind_a_shim_is_killed_with_the_agent(make_suite, waza, tmp_path):
    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "slowpoke").write_text("#!/bin/sh\nsleep 300\n")
    (slow / "slowpoke").chmod(0o755)
    path, _ = repo_suite(make_suite, tmp_path, prompt="hang", timeout=3)
    (path.parent / "tasks" / "t.yaml").write_text((path.parent / "tasks" / "t.yaml").read_text()
                                                  + "command_mocks: [{name: slowpoke, responses: [{args: [never]}]}]\n")
    env = {"PATH": f"{slow}{os.pathsep}{os.environ['PATH']}"}
    done = waza("run", str(path), "-o", str(tmp_path / "r.json"), env=env, timeout=120)
    assert done.returncode == 1
    run = runs_by_task(results_of(tmp_path / "r.json"))["t"][0]
    assert run["status"] == "error" and "timed out after 3s" in run["error_msg"]
    leftover = subprocess.run(["pgrep", "-f", str(slow / "slowpoke")], capture_output=True)
    assert leftover.returncode == 1  # no process left


def test_the_grading_context_gets_mcp_invocations_only_when_recorded():
    from waza_core.model import RunEvidence

    assert "mcp_invocations" not in RunEvidence().context_json()  # the seed's fields, unchanged
    calls = [{"server": "s", "tool": "t", "arguments": {}, "response_index": 0, "is_error": False}]
    assert RunEvidence(mcp_invocations=calls).context_json()["mcp_invocations"] == calls
    assert RunEvidence(mcp_invocations=[]).context_json()["mcp_invocations"] == []
