"""A real third-party plugin: installed into a fresh virtual environment with pip,
found through the ``waza`` entry-point group, listed by ``waza plugins``, used by a suite."""

from __future__ import annotations

import json
import subprocess
import sys
import venv

import pytest

from tests.conftest import REPO

PLUGIN = REPO / "examples" / "plugins" / "waza-wordcount"


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(root)
    py = root / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           str(REPO), str(PLUGIN)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root


def waza(env_root, *args, cwd=None):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("WAZA_DISABLE_PLUGIN_AUTOLOAD", "WAZA_PLUGINS")}
    return subprocess.run([str(env_root / "bin" / "waza"), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env=env)


def test_waza_plugins_lists_the_installed_plugin(fresh_env):
    proc = waza(fresh_env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    plugins = {p["name"]: p for p in json.loads(proc.stdout)["plugins"]}
    wc = plugins["wordcount"]
    assert wc["source"] == "entry-point"
    assert wc["distribution"] == "waza-wordcount" and wc["version"] == "0.1.0"
    assert wc["registers"] == {"grader": ["word_count"]}
    assert "waza-wordcount 0.1.0" in waza(fresh_env, "plugins").stdout


def test_a_suite_using_the_plugin_runs(fresh_env, tmp_path):
    out = tmp_path / "out.json"
    proc = waza(fresh_env, "run", str(PLUGIN / "example" / "eval.yaml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    run = json.loads(out.read_text())["tasks"][0]["runs"][0]
    assert run["validations"]["concise"]["type"] == "word_count"
    assert run["validations"]["concise"]["feedback"].endswith("words (wanted 3..200)")


def test_plugin_config_is_checked_at_load(fresh_env, tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.yaml").write_text("id: t\ninputs: {prompt: p}\n")
    (tmp_path / "eval.yaml").write_text(
        "name: x\nskill: y\ntasks: ['tasks/*.yaml']\n"
        "graders:\n  - {type: word_count, name: w, config: {min: 9, max: 2}}\n")
    proc = waza(fresh_env, "validate", str(tmp_path / "eval.yaml"))
    assert proc.returncode == 2 and "min (9) is greater than max (2)" in proc.stderr


def test_autoload_can_be_disabled(fresh_env):
    import os

    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([str(fresh_env / "bin" / "waza"), "plugins", "--json"], capture_output=True, text=True,
                          env=env)
    names = [p["name"] for p in json.loads(proc.stdout)["plugins"]]
    assert "wordcount" not in names and "waza_graders.text" in names
    assert sys.executable  # the test venv is separate from the one running pytest
