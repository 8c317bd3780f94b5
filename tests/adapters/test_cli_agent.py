"""The ``cli`` executor, driven with a real fake agent in real subprocesses."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.proc_helpers import alive
from waza_adapters.cli_agent import CliExecutor, compile_path, lookup, normalize_usage
from waza_core.errors import SuiteError, WazaError
from waza_core.run.execution import ExecutionRequest

from .conftest import agent_cmd

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the cli executor tests use POSIX process groups")


def request_for(suite, workspace: Path, prompt: str | None = None, timeout: int = 30, model: str = "m1",
                task_index: int = 0) -> ExecutionRequest:
    task = suite.tasks[task_index]
    workspace.mkdir(parents=True, exist_ok=True)
    return ExecutionRequest(task=task, prompt=prompt if prompt is not None else task.prompt,
                            workspace_dir=str(workspace), timeout_seconds=timeout, model=model,
                            skill_directories=("/skills/a",))


def started(suite) -> CliExecutor:
    ex = CliExecutor(suite, dict(suite.config.extra.get("cli", {})))
    ex.start()
    return ex


JSON_AGENT = {"command": agent_cmd("--prompt-file", "{prompt_file}", "--model", "{model}"),
              "output": "json", "output_path": "result", "usage_path": "usage",
              "session_id_path": "session_id"}


# -- the evidence of a run ------------------------------------------------------------------


def test_json_agent_writes_files_and_reports_answer_usage_and_session(exec_suite, tmp_path):
    suite = exec_suite({"cli": JSON_AGENT})
    ws = tmp_path / "ws"
    ev = started(suite).execute(request_for(suite, ws, "write out/hello.txt: hi there\nsay done"))
    assert ev.error is None, ev.error
    assert (ws / "out" / "hello.txt").read_text() == "hi there"
    assert ev.output == "wrote out/hello.txt\ndone"
    assert ev.usage == {"input_tokens": 6, "output_tokens": 3, "cache_read_tokens": 2, "turns": 1}
    assert ev.session_id and ev.session_id.startswith("fake-")
    assert ev.transcript == [
        {"type": "user.message", "content": "write out/hello.txt: hi there\nsay done"},
        {"type": "assistant.message", "content": "wrote out/hello.txt\ndone"},
    ]
    # recorded and empty vs. not recorded: a CLI agent shows no tool calls, skills or user input
    assert ev.tool_calls == []
    assert ev.tool_events is None and ev.skill_invocations is None and ev.user_input_requests is None
    assert ev.host_lifecycle is None and ev.command_invocations is None
    assert ev.duration_ms > 0


def test_text_output_and_no_usage_path_means_usage_unavailable(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "{prompt}")}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "say one\nsay two"))
    assert ev.error is None
    assert ev.output == "one\ntwo"
    assert ev.usage is None and ev.session_id is None


def test_jsonl_takes_the_last_event_with_the_path_and_skips_log_lines(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "jsonl", "--prompt", "{prompt}"),
                                "output": "jsonl", "output_path": "result", "usage_path": "usage",
                                "session_id_path": "session_id"}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "say streamed"))
    assert ev.error is None, ev.error
    assert ev.output == "streamed"
    assert ev.usage["input_tokens"] == 2 and ev.session_id.startswith("fake-")


def test_a_line_nested_past_the_json_parser_is_skipped_like_a_log_line(exec_suite, tmp_path):
    script = "print('[' * 100000); print('{{\"result\": \"ok\"}}')"  # {{ }}: literal braces
    suite = exec_suite({"cli": {"command": [sys.executable, "-c", script], "output": "jsonl",
                                "output_path": "result"}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "hi"))
    assert (ev.error, ev.output) == (None, "ok")


def test_nested_path_with_negative_index_and_content_blocks(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--prompt", "{prompt}"), "output": "json",
                                "output_path": ".messages[-1].content"}})
    assert started(suite).execute(request_for(suite, tmp_path / "ws", "say deep")).output == "deep"
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "jsonl", "--prompt", "{prompt}"),
                                "output": "jsonl", "output_path": "message.content"}})
    assert started(suite).execute(request_for(suite, tmp_path / "ws2", "say blocks")).output == "blocks"


def test_prompt_on_stdin(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--stdin", "--format", "text"), "stdin": "prompt"}})
    assert started(suite).execute(request_for(suite, tmp_path / "ws", "say from stdin")).output == "from stdin"


def test_environment_is_minimal_plus_what_is_passed_through(exec_suite, tmp_path, monkeypatch):
    monkeypatch.setenv("WAZA_TEST_SECRET", "s3cret")
    monkeypatch.setenv("AGENT_KEY_A", "a")
    monkeypatch.setenv("AGENT_KEY_B", "b")
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "{prompt}"),
                                "env": ["AGENT_KEY_*"], "set_env": {"CI": "1"}}})
    prompt = "\n".join(f"env {n}" for n in ("WAZA_TEST_SECRET", "AGENT_KEY_A", "AGENT_KEY_B", "CI", "HOME",
                                            "WAZA_WORKSPACE_DIR", "WAZA_TASK_ID", "WAZA_SKILL_DIRECTORIES"))
    ws = tmp_path / "ws"
    out = started(suite).execute(request_for(suite, ws, prompt)).output.splitlines()
    assert out[:4] == ["WAZA_TEST_SECRET=<unset>", "AGENT_KEY_A=a", "AGENT_KEY_B=b", "CI=1"]
    assert out[4] == f"HOME={os.environ['HOME']}"
    assert out[5:] == [f"WAZA_WORKSPACE_DIR={ws}", "WAZA_TASK_ID=t1", "WAZA_SKILL_DIRECTORIES=/skills/a"]


def test_runs_in_the_workspace_and_prompt_file_stays_outside_it(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt-file", "{prompt_file}"),
                                "set_env": {}}})
    ws = tmp_path / "ws"
    ev = started(suite).execute(request_for(suite, ws, "write marker.txt: x\nenv WAZA_PROMPT_FILE"))
    prompt_file = ev.output.splitlines()[1].split("=", 1)[1]
    assert (ws / "marker.txt").exists()
    assert not prompt_file.startswith(str(ws))
    assert not Path(prompt_file).exists(), "the private prompt folder is removed after the run"
    assert sorted(p.name for p in ws.iterdir()) == ["marker.txt"]


def test_follow_up_turns_resume_the_agent_session(exec_suite, tmp_path):
    suite = exec_suite(
        {"cli": {**JSON_AGENT, "follow_up_command": agent_cmd("--prompt", "{prompt}", "--resume", "{session_id}")}},
        tasks=[{"id": "t1", "name": "multi", "inputs": {"prompt": "say first",
                                                        "follow_up_prompts": ["say second", "say third"]}}])
    ev = started(suite).execute(request_for(suite, tmp_path / "ws"))
    assert ev.error is None, ev.error
    lines = ev.output.splitlines()
    sid = ev.session_id
    assert lines == ["first", f"resumed {sid}", "second", f"resumed {sid}", "third"]
    assert [e["type"] for e in ev.transcript] == ["user.message", "assistant.message"] * 3
    assert ev.usage["turns"] == 3
    assert ev.usage["input_tokens"] == 6  # summed over the three turns


# -- failures become run errors, with the reason ----------------------------------------------


def test_timeout_kills_the_agent_and_its_children(exec_suite, tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    suite = exec_suite({"cli": JSON_AGENT})
    start = time.monotonic()
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", f"spawn-sleeper {pid_file}\nsleep 60",
                                            timeout=1))
    assert time.monotonic() - start < 10
    assert "timed out after 1s" in ev.error
    assert ev.transcript[-1]["type"] == "session.error"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the agent's child outlived the timeout"


def test_huge_text_output_is_bounded_and_marked(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "{prompt}"),
                                "max_output_bytes": 4096}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "flood 64"))
    assert ev.error is None
    assert len(ev.output) == 4096
    assert ev.transcript[-1] == {"type": "assistant.message", "content": "x" * 4096, "truncated": True}


def test_huge_json_output_is_a_clear_error(exec_suite, tmp_path):
    suite = exec_suite({"cli": {**JSON_AGENT, "max_output_bytes": 4096}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "flood 20"))
    assert "more than 4096 bytes" in ev.error and "max_output_bytes" in ev.error


def test_nonzero_exit_is_an_error_with_the_stderr_tail(exec_suite, tmp_path):
    suite = exec_suite({"cli": JSON_AGENT})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "stderr rate limited\nexit 3"))
    assert ev.error.startswith("agent ") and "exited with code 3" in ev.error
    assert "stderr: rate limited" in ev.error


def test_success_exit_codes_option(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "{prompt}"),
                                "success_exit_codes": [0, 3]}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "say partial\nexit 3"))
    assert ev.error is None


def test_invalid_json_and_missing_field_are_errors(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "{prompt}"),
                                "output": "json", "output_path": "result"}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "say not json"))
    assert "did not print valid JSON" in ev.error and "not json" in ev.error
    suite = exec_suite({"cli": {"command": agent_cmd("--prompt", "{prompt}"), "output": "json",
                                "output_path": "answer.text"}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws2", "say x"))
    assert "without config.cli.output_path 'answer.text'" in ev.error


def test_model_placeholder_without_model_is_an_error(exec_suite, tmp_path):
    suite = exec_suite({"cli": JSON_AGENT})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "say x", model=""))
    assert "{model}" in ev.error and "--model" in ev.error


def test_shutdown_kills_running_agents(exec_suite, tmp_path):
    suite = exec_suite({"cli": JSON_AGENT})
    ex = started(suite)
    results = []
    worker = threading.Thread(target=lambda: results.append(
        ex.execute(request_for(suite, tmp_path / "ws", "sleep 60", timeout=120))))
    worker.start()
    time.sleep(0.5)
    start = time.monotonic()
    ex.shutdown()
    worker.join(10)
    assert time.monotonic() - start < 3
    assert "cancelled" in results[0].error


# -- configuration mistakes are caught before any run -------------------------------------------


def test_missing_binary_is_a_clear_error_at_start(exec_suite):
    suite = exec_suite({"cli": {"command": ["waza-no-such-agent", "{prompt}"]}})
    ex = CliExecutor(suite, suite.config.extra["cli"])
    with pytest.raises(WazaError, match="'waza-no-such-agent' is not on PATH"):
        ex.start()


def test_relative_program_is_found_beside_eval_yaml(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": ["./fake_agent.py", "--format", "text", "--prompt", "{prompt}"]}})
    ex = CliExecutor(suite, suite.config.extra["cli"])
    (suite.dir / "fake_agent.py").chmod(0o644)
    with pytest.raises(WazaError, match="not executable"):
        ex.start()
    (suite.dir / "fake_agent.py").chmod(0o755)
    ex.start()
    ws = tmp_path / "elsewhere"
    assert ex.execute(request_for(suite, ws, "say relative")).output == "relative"
    suite = exec_suite({"cli": {"command": ["./nope.py"]}})
    with pytest.raises(WazaError, match="agent program not found"):
        CliExecutor(suite, suite.config.extra["cli"]).start()


@pytest.mark.parametrize("cli, message", [
    ({"comand": ["x"]}, "unknown key 'comand'"),
    ({"command": []}, "command"),
    ({"command": ["x"], "output": "json"}, "output_path"),
    ({"command": ["x"], "output": "xml"}, "output"),
    ({"command": ["x"], "output": "json", "output_path": "a..b"}, "output_path"),
    ({"command": ["x"], "usage_path": "usage"}, "output"),
])
def test_config_schema_rejects_mistakes_at_load(exec_suite, cli, message):
    with pytest.raises(SuiteError) as info:
        exec_suite({"cli": cli})
    assert message in str(info.value)


@pytest.mark.parametrize("cli, message", [
    ({"command": ["x", "{promt}"]}, "unknown placeholder {promt}"),
    ({"command": ["x", "{prompt!r}"]}, "unknown placeholder"),
    ({"command": ["x", "{session_id}"]}, "unknown placeholder {session_id}"),
    ({"command": ["{workspace}/agent"]}, "may only use the {suite_dir} placeholder"),
    ({"command": ["x", "{"]}, "bad template"),
    ({"command": ["x"], "follow_up_command": ["x", "{session_id}"]}, "session_id_path"),
])
def test_bad_templates_are_config_errors(exec_suite, cli, message):
    suite = exec_suite({"cli": cli})
    with pytest.raises(WazaError) as info:
        CliExecutor(suite, suite.config.extra["cli"])
    assert message in str(info.value)


def test_selecting_cli_without_its_config_is_a_clear_error(exec_suite):
    suite = exec_suite({})
    with pytest.raises(WazaError, match=r"config.cli.command is required"):
        CliExecutor(suite, {})


def test_literal_braces(exec_suite, tmp_path):
    suite = exec_suite({"cli": {"command": agent_cmd("--format", "text", "--prompt", "say {{x}} {prompt}")}})
    ev = started(suite).execute(request_for(suite, tmp_path / "ws", "ignored"))
    assert ev.output == "{x} ignored"


def test_paid_and_registered(exec_registry):
    assert CliExecutor.paid is True
    assert exec_registry.get("executor", "cli") is CliExecutor


# -- helpers ------------------------------------------------------------------------------------


def test_path_lookup():
    doc = {"messages": [{"content": "a"}, {"content": "b"}], "result": None}
    assert lookup(doc, compile_path(".messages[-1].content")) == "b"
    assert lookup(doc, compile_path("messages[0].content")) == "a"
    assert lookup([{"t": 1}], compile_path("[0].t")) == 1
    assert lookup(doc, compile_path("messages[5].content")) is not None  # _MISSING sentinel
    with pytest.raises(WazaError):
        compile_path("messages[x]")


def test_usage_normalization():
    assert normalize_usage({"prompt_tokens": 5, "completion_tokens": 2}) == {"input_tokens": 5, "output_tokens": 2}
    assert normalize_usage({"input_tokens": 1, "cache_creation_input_tokens": 4, "cached_input_tokens": 3}) == {
        "input_tokens": 1, "cache_write_tokens": 4, "cache_read_tokens": 3}
    assert normalize_usage({"unrelated": 1}) is None
    assert normalize_usage("12 tokens") is None


# -- end to end through the runner and `waza run` ------------------------------------------------


PROBE = '''
from waza_core.grading.base import Grader
from waza_core.hookspecs import hookimpl
import os

class FileProbe(Grader):
    """Passes when config.path exists in the run's workspace with config.content."""
    name = "file_probe"
    config_schema = {"type": "object", "required": ["path", "content"],
                     "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}

    def grade(self, ctx):
        path = os.path.join(ctx.workspace_dir, self.spec.config["path"])
        ok = os.path.isfile(path) and open(path).read() == self.spec.config["content"]
        return self.result(1.0 if ok else 0.0, ok, "found" if ok else f"missing or different: {path}")

@hookimpl
def waza_register_graders(register):
    register(FileProbe)
'''


def test_end_to_end_graders_see_the_agents_changes(exec_suite, tmp_path, monkeypatch):
    from waza_core.plugins import build_plugin_manager
    from waza_core.results.codec import results_to_json
    from waza_core.run.engine import Engine, RunOptions, exit_code

    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "waza_test_file_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(plugin_dir))
    registry = build_plugin_manager(["waza_test_file_probe"])[1]
    tasks = [
        {"id": "writes", "name": "writes a file",
         "inputs": {"prompt": "write notes/answer.txt: 42\nsay the answer is 42"},
         "graders": [{"type": "file_probe", "name": "answer_file",
                      "config": {"path": "notes/answer.txt", "content": "42"}},
                     {"type": "text", "name": "says_42", "config": {"contains": ["answer is 42"]}}]},
        {"id": "forgets", "name": "forgets the file", "inputs": {"prompt": "say nothing written"},
         "graders": [{"type": "file_probe", "name": "answer_file",
                      "config": {"path": "notes/answer.txt", "content": "42"}}]},
    ]
    suite = exec_suite({"executor": "mock", "cli": JSON_AGENT}, tasks=tasks, registry_=registry)
    doc = Engine(suite, registry, RunOptions(executor="cli")).run()
    outcome = results_to_json(doc)
    by_id = {t["test_id"]: t for t in outcome["tasks"]}
    assert outcome["config"]["engine_type"] == "cli"
    assert by_id["writes"]["status"] == "passed", by_id["writes"]
    assert by_id["forgets"]["status"] == "failed"
    run = by_id["writes"]["runs"][0]
    assert run["usage"]["input_tokens"] == 8 and run["session_id"].startswith("fake-")
    assert run["tool_events"] is None and run["session_digest"]["tool_call_count"] == 0
    assert exit_code(doc) == 1
    from waza_core.suite import schema

    errors = list(schema.plain_validator("results").iter_errors(json.loads(json.dumps(outcome))))
    assert not errors, [e.message for e in errors[:5]]


def test_waza_run_with_executor_option(exec_suite, tmp_path):
    import subprocess

    suite = exec_suite({"executor": "mock", "cli": JSON_AGENT},
                       tasks=[{"id": "t1", "name": "hello", "inputs": {"prompt": "say hello from the agent"},
                               "graders": [{"type": "text", "name": "hello", "config": {"contains": ["hello"]}}]}])
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", str(suite.file), "--executor", "cli",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "executor 'cli'" in proc.stderr and "model 'm1'" in proc.stderr
    results = json.loads(out.read_text())
    assert results["tasks"][0]["runs"][0]["final_output"] == "hello from the agent"


def test_waza_run_missing_agent_is_exit_2_without_traceback(exec_suite):
    import subprocess

    suite = exec_suite({"cli": {"command": ["waza-no-such-agent", "{prompt}"]}})
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", str(suite.file)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "waza-no-such-agent" in proc.stderr and "Traceback" not in proc.stderr


def test_example_suite_passes_with_program_graders_reading_the_workspace(tmp_path):
    import subprocess

    example = Path(__file__).resolve().parents[2] / "examples" / "cli-agent"
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "waza_core", "run", "eval.yaml", "-o", str(out)], cwd=example,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    tasks = {t["test_id"]: t for t in json.loads(out.read_text())["tasks"]}
    greeting = tasks["create-greeting"]["runs"][0]
    assert greeting["validations"]["greeting_file"]["passed"]  # a program grader found the agent's file
    follow = tasks["notes-follow-up"]["runs"][0]
    assert follow["final_output"] == "Created notes/todo.md.\n5" and follow["usage"]["turns"] == 2


@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
def test_ctrl_c_kills_running_agents_and_their_children(exec_suite, tmp_path, parallel):
    import signal
    import subprocess

    pids = [tmp_path / f"sleeper{i}.pid" for i in range(2)]
    tasks = [{"id": f"slow{i}", "name": f"slow {i}", "inputs": {"prompt": f"spawn-sleeper {pid}\nsleep 60"}}
             for i, pid in enumerate(pids)]
    suite = exec_suite({"cli": JSON_AGENT, "timeout_seconds": 120}, tasks=tasks)
    args = [sys.executable, "-m", "waza_core", "run", str(suite.file)] + (["--parallel", "--workers", "2"]
                                                                          if parallel else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    started = pids if parallel else pids[:1]
    deadline = time.monotonic() + 30
    while not all(p.exists() and p.read_text() for p in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(p.exists() for p in started), proc.communicate(timeout=5)
    time.sleep(0.2)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    for p in started:
        pid = int(p.read_text())
        end = time.monotonic() + 3
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.05)
        assert not alive(pid), f"an agent's child survived Ctrl-C ({p.name})"


def test_optimize_needs_consent_for_the_cli_executor(tmp_path):
    import shutil
    import subprocess

    example = Path(__file__).resolve().parents[2] / "examples" / "optimizer"
    suite = tmp_path / "optimizer"
    shutil.copytree(example, suite)
    shutil.copy(Path(__file__).parent / "fake_agent.py", suite / "fake_agent.py")
    text = (suite / "eval.yaml").read_text()
    cli = json.dumps({"command": agent_cmd("--format", "text", "--prompt", "{prompt}")})
    (suite / "eval.yaml").write_text(text.replace("executor: mock", f"executor: cli\n  cli: {cli}"))
    out = tmp_path / "out"
    base = [sys.executable, "-m", "waza_core", "optimize", "run", str(suite / "eval.yaml"),
            "--target", "context-overlay", "--seed", str(suite / "seed"),
            "--optimization-tag", "optimization", "--qualification-tag", "qualification",
            "--adapter", "fake", "--fake-script", str(suite / "fake-script.json"), "--output-dir", str(out)]
    env = {**os.environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(base, capture_output=True, text=True, timeout=120, env=env)
    report = json.loads((out / "report.json").read_text())
    assert proc.returncode == 1, proc.stderr
    assert report["consent"]["required"] is True and "executor" in report["consent"]["reasons"]
    assert "consent_required" in json.dumps(report)
