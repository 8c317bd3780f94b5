"""The cli and copilot-sdk executors honour a run's environment, path_prepend, workdir and
MCP servers (the ExecutionRequest fields the mocks fill)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from waza_adapters.cli_agent import CliExecutor
from waza_adapters.copilot_sdk import CopilotSdkExecutor, mcp_server_configs, shell_environment_hook
from waza_core.run.execution import ExecutionRequest

AGENT = """
import json, os, sys
cfg = json.load(open(sys.argv[1]))
print(json.dumps({"cwd": os.getcwd(), "path0": os.environ["PATH"].split(os.pathsep)[0],
                  "stage": os.environ.get("STAGE"), "set": os.environ.get("FROM_SET_ENV"),
                  "waza_task": os.environ.get("WAZA_TASK_ID"), "mcp_env": os.environ.get("WAZA_MCP_CONFIG"),
                  "mcp": cfg}))
"""


@pytest.fixture
def cli_suite(make_suite, registry):
    from waza_core.suite.load import load_suite

    path = make_suite(f"""
        name: env
        skill: demo
        config:
          executor: cli
          cli:
            command: ["{sys.executable}", "{{suite_dir}}/agent.py", "{{mcp_config}}"]
            set_env: {{FROM_SET_ENV: "set", STAGE: "from-set-env"}}
        tasks: ["tasks/*.yaml"]
        allow_ungraded: true
        """, tasks={"tasks/t.yaml": "id: t\ninputs: {prompt: hi}\n"}, files={"agent.py": AGENT})
    return load_suite(path, registry)


def request(suite, ws, **fields):
    return ExecutionRequest(task=suite.tasks[0], prompt="hi", workspace_dir=str(ws), timeout_seconds=30, model="",
                            skill_directories=(), **fields)


def test_cli_agent_gets_environment_path_workdir_and_mcp_config(cli_suite, tmp_path):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    shims = tmp_path / "shims"
    shims.mkdir()
    server = {"command": "/usr/bin/mock-server", "args": ["--x"], "env": {}}
    ex = CliExecutor(cli_suite, dict(cli_suite.config.extra["cli"]))
    ex.start()
    ev = ex.execute(request(cli_suite, ws, environment={"STAGE": "task", "WAZA_TASK_ID": "forged"},
                            path_prepend=(str(shims),), workdir="sub", mcp_servers={"inventory": server}))
    assert ev.error is None, ev.error
    seen = json.loads(ev.output)
    assert seen["cwd"] == str(ws / "sub")
    assert seen["path0"] == str(shims)
    assert seen["stage"] == "task"  # the task's environment wins over set_env ...
    assert seen["set"] == "set"
    assert seen["waza_task"] == "t"  # ... and waza's own variables win over both
    assert seen["mcp_env"] and seen["mcp"] == {"mcpServers": {"inventory": {
        "type": "stdio", "command": "/usr/bin/mock-server", "args": ["--x"]}}}


def test_cli_agent_without_mcp_servers_gets_an_empty_config(cli_suite, tmp_path):
    ex = CliExecutor(cli_suite, dict(cli_suite.config.extra["cli"]))
    ex.start()
    seen = json.loads(ex.execute(request(cli_suite, tmp_path)).output)
    assert seen["mcp"] == {"mcpServers": {}} and seen["mcp_env"] is None
    assert seen["cwd"] == str(tmp_path)


def run_hooked(tool: str, command: str, env_extra: dict, path_prepend: tuple) -> str:
    hook = shell_environment_hook(env_extra, path_prepend)
    out = hook({"toolName": tool, "toolArgs": {"command": command, "description": "d"}}, {})
    assert out["modifiedArgs"]["description"] == "d"
    return subprocess.run(["bash", "-c", out["modifiedArgs"]["command"]], capture_output=True, text=True,
                          timeout=30).stdout


def test_copilot_shell_hook_exports_the_runs_environment_and_path(tmp_path):
    shims = tmp_path / "shim's dir"
    shims.mkdir()
    tool = shims / "az"
    tool.write_text("#!/bin/sh\necho mocked-az\n")
    tool.chmod(0o755)
    out = run_hooked("bash", 'echo "$WAZA_COMMAND_MOCK_SESSION|$ODD"; az', {
        "WAZA_COMMAND_MOCK_SESSION": "task-1", "ODD": "it's $(not run)"}, (str(shims),))
    assert out == "task-1|it's $(not run)\nmocked-az\n"


def test_copilot_shell_hook_leaves_other_tools_alone_and_refuses_a_commandless_shell():
    hook = shell_environment_hook({"A": "1"}, ())
    assert hook({"toolName": "view", "toolArgs": {"path": "x"}}, {}) is None
    with pytest.raises(ValueError, match="no string command"):
        hook({"toolName": "bash", "toolArgs": {"cmd": 1}}, {})
    assert shell_environment_hook({}, ()) is None


def test_copilot_session_options_carry_mcp_servers_hook_and_workdir(make_suite, registry, tmp_path):
    from waza_core.suite.load import load_suite

    suite = load_suite(make_suite("""
        name: c
        skill: demo
        config: {executor: copilot-sdk, copilot: {mcp_servers: {files: {type: local, command: f, tools: ["*"]}}}}
        tasks: ["tasks/*.yaml"]
        allow_ungraded: true
        """, tasks={"tasks/t.yaml": "id: t\ninputs: {prompt: hi}\n"}), registry)
    ex = CopilotSdkExecutor(suite, dict(suite.config.extra["copilot"]), backend=object())
    server = {"command": sys.executable, "args": ["-I", "entry.py"], "env": {}}
    opts = ex.session_options(request(suite, tmp_path, environment={"A": "1"}, path_prepend=("/shims",),
                                      mcp_servers={"inventory": server}, workdir="app"))
    assert opts["working_directory"] == os.path.join(str(tmp_path), "app")
    assert opts["mcp_servers"] == {"files": {"type": "local", "command": "f", "tools": ["*"]},
                                   **mcp_server_configs({"inventory": server})}
    assert opts["mcp_servers"]["inventory"] == {"type": "local", "command": sys.executable,
                                                "args": ["-I", "entry.py"], "tools": ["*"]}
    assert callable(opts["hooks"]["on_pre_tool_use"])
    import inspect

    from copilot import CopilotClient

    assert set(opts) <= set(inspect.signature(CopilotClient.create_session).parameters)
