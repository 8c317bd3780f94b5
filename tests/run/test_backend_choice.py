"""Choosing the backend (--backend, .waza.yaml defaults.backend, config.backend), Ray
as an optional dependency, and what a worker is given of the driver's environment.
No cluster here: see test_ray_cluster.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.run.helpers import cli, slow_suite


@pytest.fixture
def no_ray(monkeypatch):
    """As if Ray were not installed: ``import ray`` fails."""
    monkeypatch.setitem(sys.modules, "ray", None)


@pytest.fixture
def suite(tmp_path):
    return slow_suite(tmp_path / "suite", 2, tmp_path / "graded.log", sleep=0)


def test_backend_ray_without_ray_is_exit_2_with_the_install_command(no_ray, suite, tmp_path):
    out = tmp_path / "out.json"
    proc = cli("run", str(suite), "--backend", "ray", "-o", str(out))
    assert proc.returncode == 2
    assert b'pip install "waza[ray]"' in proc.stderr
    assert not out.exists() and not (tmp_path / "graded.log").exists()  # refused before running


def test_config_backend_and_project_default_choose_the_backend(no_ray, suite, tmp_path, monkeypatch):
    text = suite.read_text()
    doc = json.loads(text)
    doc["config"]["backend"] = "ray"
    suite.write_text(json.dumps(doc))
    proc = cli("run", str(suite))
    assert proc.returncode == 2 and b'pip install "waza[ray]"' in proc.stderr  # config.backend: ray
    assert cli("run", str(suite), "--backend", "local", "-q").returncode == 0  # the flag wins

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    (project / ".waza.yaml").write_text("defaults:\n  backend: local\n")
    assert cli("run", str(suite), "-q").returncode == 0  # .waza.yaml defaults win over config
    (project / ".waza.yaml").write_text("defaults:\n  backend: cloud\n")
    proc = cli("run", str(suite))
    assert proc.returncode == 2 and b"defaults.backend must be one of local, ray" in proc.stderr


def test_config_backend_is_checked_by_the_schema(suite):
    doc = json.loads(suite.read_text())
    doc["config"]["backend"] = "cloud"
    suite.write_text(json.dumps(doc))
    proc = cli("validate", str(suite))
    assert proc.returncode == 2 and b"backend" in proc.stderr


def test_unknown_backend_and_a_ray_address_without_ray(suite):
    proc = cli("run", str(suite), "--backend", "cloud")
    assert proc.returncode == 2 and b"unknown backend 'cloud'; known: local, ray" in proc.stderr
    proc = cli("run", str(suite), "--ray-address", "127.0.0.1:6379")
    assert proc.returncode == 2 and b"--ray-address needs --backend ray" in proc.stderr


def test_no_module_imports_ray_at_load_time(suite):
    code = ("import sys\n"
            "import waza_core, waza_core.run.ray_backend, waza_core.run.ray_worker, waza_core.run.ray_bundle\n"
            "import waza_core.run.journal, waza_core.cli.app\n"
            "from waza_core.cli import main\n"
            f"try:\n    main(['run', {str(suite)!r}, '-q'])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert proc.returncode == 0, proc.stderr


def test_workers_get_only_what_the_allow_lists_name(monkeypatch, tmp_path):
    from waza_core.plugins import get_registry
    from waza_core.run.prepared import PreparedSuite, UnitSettings
    from waza_core.run.ray_backend import forwarded_environment
    from waza_core.suite.load import load_suite

    root = tmp_path / "suite"
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text(json.dumps({
        "name": "cli", "skill": "s", "tasks": ["tasks/*.yaml"], "allow_ungraded": True,
        "config": {"executor": "cli", "cli": {"command": ["true"], "env": ["DEMO_KEY", "DEMO_GROUP_*"]}}}))
    (root / "tasks" / "a.yaml").write_text("id: a\ninputs: {prompt: p}\n")
    for name, value in {"DEMO_KEY": "k", "DEMO_GROUP_A": "a", "DEMO_OTHER": "x", "GITHUB_TOKEN": "secret"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WAZA_PLUGINS", "tests.fixture_plugins.test_graders")
    registry = get_registry([])
    suite = load_suite(root / "eval.yaml", registry)
    prepared = PreparedSuite(suite, registry, UnitSettings(executor="cli"), list(suite.tasks))
    env = forwarded_environment(prepared)
    assert env == {"DEMO_KEY": "k", "DEMO_GROUP_A": "a", "WAZA_PLUGINS": "", "WAZA_DISABLED_PLUGINS": "",
                   "WAZA_DISABLE_PLUGIN_AUTOLOAD": env["WAZA_DISABLE_PLUGIN_AUTOLOAD"]}


def test_copilot_sdk_forwards_its_token_variable_only():
    from waza_adapters.copilot_sdk import CopilotSdkExecutor

    assert CopilotSdkExecutor(None, {"github_token_env": "MY_TOKEN"}).environment_allow_list() == ("MY_TOKEN",)
    assert CopilotSdkExecutor(None, {}).environment_allow_list() == ()


def test_optimize_takes_the_backend_flag(no_ray, tmp_path):
    from tests.optimize.conftest import Suite, files

    r = Suite(tmp_path).run([files("alpha beta gamma")], backend="ray")
    assert r.category == "invalid_config"
    assert 'pip install "waza[ray]"' in r.message


def test_the_workers_load_the_drivers_plugins(monkeypatch):
    from waza_core.run.command import requested_plugins

    monkeypatch.setenv("WAZA_PLUGINS", "env_plugin")
    monkeypatch.setenv("WAZA_DISABLED_PLUGINS", "text")
    assert requested_plugins(["my_plugin", "no:code"]) == ["my_plugin", "env_plugin", "no:code", "no:text"]
