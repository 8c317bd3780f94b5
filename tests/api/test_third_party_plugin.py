"""Real third-party plugins: installed into a fresh virtual environment with pip, found
through the ``waza`` entry-point group, listed by ``waza plugins``, used by a suite.

``waza-wordcount`` is a one-grader distribution; ``waza-shout`` has one plugin of each
kind and is the code docs/plugins.md shows (tests/api/test_plugin_docs.py checks that the
doc and the files are the same), so these tests check that a plugin written only from
the docs installs and works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, built_once

PLUGIN = REPO / "examples" / "plugins" / "waza-wordcount"
SHOUT = REPO / "examples" / "plugins" / "waza-shout"
OPTIMIZER = REPO / "examples" / "optimizer"

#: the tests of this file go to one xdist worker, so the other does not wait for the build
pytestmark = pytest.mark.xdist_group("third-party-venv")


def _install(root: Path) -> None:
    """A fresh venv whose own site-packages gets waza and the two plugins, installed by pip from
    wheels built here; their dependencies are this interpreter's (a path file).

    What these tests check is that pip-installed distributions are found through their entry
    points. Installing numpy, scipy and the rest again was about half the fixture's CPU, and
    building each wheel in an isolated environment (a new hatchling each time) most of the
    other half; scripts/release_check.sh installs what a user gets, dependencies and isolated
    build included. The venv has no pip of its own (ensurepip costs about 4 s of CPU): this
    interpreter's pip installs into it (``pip --python``), without compiling to bytecode."""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False).create(root)
    wheels = root / "wheels"
    _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO), str(PLUGIN), str(SHOUT))
    _pip("--python", str(root / "bin" / "python"), "install", "--quiet", "--no-deps", "--no-compile",
         *map(str, sorted(wheels.glob("*.whl"))))
    # after the venv's own site-packages on sys.path: a plain folder, so the editable waza of this
    # interpreter (its own .pth file there) is not put on the path, and the installed copy runs
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ours = subprocess.run([str(root / "bin" / "python"), "-c", where], capture_output=True, text=True,
                          check=True).stdout.strip()
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(ours) / "_waza_test_dependencies.pth").write_text("".join(f"{d}\n" for d in deps), encoding="utf-8")


def _pip(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="session")
def fresh_env(tmp_path_factory):
    """One virtual environment per test run, shared by the xdist workers."""
    return built_once(tmp_path_factory, "third-party-venv", _install)


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("WAZA_DISABLE_PLUGIN_AUTOLOAD", "WAZA_PLUGINS", "WAZA_DISABLED_PLUGINS", "PYTHONPATH")}
    env.update(extra)
    return env


def waza(env_root, *args, cwd=None, input=None, **env):
    return subprocess.run([str(env_root / "bin" / "waza"), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=180, env=_env(**env), input=input)


def test_the_installed_copies_run_not_the_checkout(fresh_env):
    code = "import waza_core, waza_wordcount; print(waza_core.__file__); print(waza_wordcount.__file__)"
    proc = subprocess.run([str(fresh_env / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          env=_env(), cwd=fresh_env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for where in map(Path, proc.stdout.split()):
        assert fresh_env in where.resolve().parents and REPO not in where.resolve().parents, where


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
    proc = waza(fresh_env, "plugins", "--json", WAZA_DISABLE_PLUGIN_AUTOLOAD="1")
    names = [p["name"] for p in json.loads(proc.stdout)["plugins"]]
    assert "wordcount" not in names and "shout-grader" not in names and "waza_graders.text" in names


# -- waza-shout: one plugin of each kind, as docs/plugins.md shows them --------------------

def test_every_kind_is_registered_from_its_entry_point(fresh_env):
    plugins = {p["name"]: p for p in json.loads(waza(fresh_env, "plugins", "--json").stdout)["plugins"]}
    assert {name: plugins[name]["registers"] for name in plugins if name.startswith("shout-")} == {
        "shout-grader": {"grader": ["shout"]},
        "shout-executor": {"executor": ["loud"]},
        "shout-adapter": {"optimizer_adapter": ["append-lines"]},
        "shout-dialect": {"interop_dialect": ["shout-yaml-v1"]},
        "shout-reporter": {"reporter": ["tsv"]},
    }
    assert all(plugins[n]["distribution"] == "waza-shout" and not plugins[n]["error"]
               for n in plugins if n.startswith("shout-"))


def test_the_grader_and_executor_run_a_suite(fresh_env, tmp_path):
    out = tmp_path / "out.json"
    proc = waza(fresh_env, "run", str(SHOUT / "example"), "-o", str(out))
    assert proc.returncode == 1, proc.stderr  # the blank task is an executor error, as documented
    tasks = {t["test_id"]: t for t in json.loads(out.read_text())["tasks"]}
    assert tasks["hi"]["status"] == "passed"
    assert tasks["hi"]["runs"][0]["final_output"] == "ECHO: SAY HI"
    assert tasks["blank"]["runs"][0]["error_msg"] == "empty prompt"


def test_a_disabled_plugin_is_named(fresh_env):
    proc = waza(fresh_env, "validate", str(SHOUT / "example"), "-p", "no:shout-executor")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown key 'loud'" in proc.stderr
    assert "the plugin 'shout-executor' may read it but is disabled by -p no:shout-executor" in proc.stderr


def test_the_executor_config_is_checked_at_load(fresh_env, tmp_path):
    import shutil

    suite = tmp_path / "s"
    shutil.copytree(SHOUT / "example", suite)
    (suite / "eval.yaml").write_text((suite / "eval.yaml").read_text().replace("prefix:", "prefx:"))
    proc = waza(fresh_env, "validate", str(suite))
    assert proc.returncode == 2 and "unknown key 'prefx' (did you mean 'prefix'?)" in proc.stderr


def test_the_adapter_runs_an_optimization(fresh_env, tmp_path):
    lines = ["- Run the linter", "- Update the documentation", "- Bump the version number", "- Tag the release"]
    args = [a for line in lines for a in ("--adapter-option", f"line={line}")]
    proc = waza(fresh_env, "optimize", "run", str(OPTIMIZER / "eval.yaml"), "--target", "context-overlay",
                "--seed", str(OPTIMIZER / "seed"), "--optimization-tag", "optimization",
                "--qualification-tag", "qualification", "--adapter", "append-lines",
                "--output-dir", str(tmp_path / "out"), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["outcome"] == "accepted" and report["stop_reason"] == "adapter_done"
    proc = waza(fresh_env, "optimize", "run", str(OPTIMIZER / "eval.yaml"), "--target", "context-overlay",
                "--seed", str(OPTIMIZER / "seed"), "--optimization-tag", "optimization",
                "--qualification-tag", "qualification", "--adapter", "append-lines",
                "--output-dir", str(tmp_path / "out2"), "--adapter-option", "lines=x", cwd=tmp_path)
    assert proc.returncode == 1
    assert "its options: file, line" in json.loads((tmp_path / "out2" / "report.json").read_text())["failure"][
        "message"]


def test_the_dialect_imports_and_exports(fresh_env):
    assert "shout-yaml-v1  Toy format" in waza(fresh_env, "interop", "list").stdout
    suite = "tests:\n  - id: t1\n    asserts:\n      - shout: hello\n"
    proc = waza(fresh_env, "interop", "import", "--adapter", "shout-yaml-v1", "--test", "t1", "--assertion", "1",
                input=suite)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith('contains_cs:\n    - "HELLO"\n') and "imported one assertion only" in proc.stderr
    back = waza(fresh_env, "interop", "export", "--adapter", "shout-yaml-v1", input=proc.stdout)
    assert back.returncode == 0 and back.stdout.endswith('shout: "HELLO"\n')


def test_the_reporter_writes_a_report(fresh_env, tmp_path):
    out = tmp_path / "out.json"
    waza(fresh_env, "run", str(SHOUT / "example"), "-o", str(out))
    code = ("import json, sys; from waza_core import testing; "
            "sys.stdout.buffer.write(testing.render_report('tsv', json.load(open(sys.argv[1])), autoload=True))")
    proc = subprocess.run([str(fresh_env / "bin" / "python"), "-c", code, str(out)], capture_output=True,
                          timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"task\tstatus\tscore\nblank\terror\t0.000\nhi\tpassed\t1.000\n"


def test_the_reporter_through_waza_report(fresh_env, tmp_path):
    if waza(fresh_env, "report", "--help").returncode != 0:
        pytest.skip("this waza has no `waza report` command yet")
    out = tmp_path / "out.json"
    waza(fresh_env, "run", str(SHOUT / "example"), "-o", str(out))
    proc = waza(fresh_env, "report", str(out), "--reporter", f"tsv:{tmp_path / 'r.tsv'}",
                "--reporter-option", "tsv.header=false")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.tsv").read_text() == "blank\terror\t0.000\nhi\tpassed\t1.000\n"
