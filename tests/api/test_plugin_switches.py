"""Switching plugins on and off: ``-p MODULE``, ``-p no:NAME``, ``WAZA_DISABLED_PLUGINS``
and ``WAZA_DISABLE_PLUGIN_AUTOLOAD``, as docs/plugins.md describes them."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import BASIC_EVAL
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.errors import PluginError
from waza_core.plugins import build_plugin_manager

TASK = "id: t\ninputs: {prompt: p}\n"
TEXT_EVAL = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [Mock]}}\n"


def assert_clean_exit_2(proc, *needles: str) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.parametrize("how", [("-p", "no:text"), ("-p", "no:waza_graders.text")])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_p_no_text_makes_a_text_suite_exit_2_naming_the_plugin(make_suite, how, command):
    suite = make_suite(TEXT_EVAL, {"tasks/t.yaml": TASK})
    assert run_waza(command, str(suite)).returncode == 0
    err = assert_clean_exit_2(run_waza(command, str(suite), *how), "unknown grader type 'text'",
                              "provided by the plugin 'waza_graders.text'", f"disabled by -p {how[1]}",
                              "remove that to enable it")
    assert err.count("\n") <= 2


@pytest.mark.parametrize("value", ["text", "waza_graders.text", "waza_adapters.mock, text"])
def test_waza_disabled_plugins_names_text(make_suite, value):
    proc = run_waza("run", str(make_suite(TEXT_EVAL, {"tasks/t.yaml": TASK})),
                    env={"WAZA_DISABLED_PLUGINS": value})
    assert_clean_exit_2(proc, "'text'", "waza_graders.text", "WAZA_DISABLED_PLUGINS=")


def test_a_disabled_executor_is_named_too(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "-p", "no:mock")
    assert_clean_exit_2(proc, "unknown executor 'mock'", "provided by the plugin 'waza_adapters.mock'",
                        "disabled by -p no:mock")


def test_a_suite_that_does_not_need_the_disabled_plugin_still_runs(make_suite):
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})), "-p", "no:program")
    assert proc.returncode == 0, proc.stderr.decode()


def test_waza_plugins_lists_a_disabled_plugin():
    proc = run_waza("plugins", "-p", "no:text")
    assert proc.returncode == 0
    line = next(ln for ln in proc.stdout.decode().splitlines() if ln.startswith("waza_graders.text"))
    assert line.endswith("DISABLED by -p no:text")


def test_disabling_a_plugin_that_does_not_exist_is_an_error():
    err = assert_clean_exit_2(run_waza("plugins", "-p", "no:txt"), "cannot disable 'txt'", "did you mean 'text'")
    assert "no such plugin" in err
    assert_clean_exit_2(run_waza("plugins", env={"WAZA_DISABLED_PLUGINS": "nothing_like_it"}),
                        "cannot disable 'nothing_like_it'")
    assert_clean_exit_2(run_waza("plugins", "-p", "no:"), "name the plugin to disable")


@pytest.mark.parametrize("env", [{}, {"WAZA_PLUGINS": "no_such_module"}])
def test_a_missing_plugin_module_is_an_error_not_a_warning(make_suite, env):
    args = ("-p", "no_such_module") if not env else ()
    suite = str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK}))
    for command in (("run", suite), ("validate", suite), ("plugins",), ("schema", "eval"), ("interop", "list"),
                    ("optimize", "capabilities")):
        assert_clean_exit_2(run_waza(*command, *args, env=env), "no module named 'no_such_module'")


def test_a_plugin_module_that_exists_but_fails_to_import_is_broken_not_fatal(make_suite):
    # the module is there; a library it needs is not: that is a broken plugin, listed as such
    proc = run_waza("run", str(make_suite(BASIC_EVAL, {"tasks/t.yaml": TASK})),
                    "-p", "tests.fixture_plugins.broken_import")
    assert proc.returncode == 0, proc.stderr.decode()


# -- installed plugins (entry points) ------------------------------------------------

@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A distribution with one entry point, on sys.path; its module notes that it was imported."""
    (tmp_path / "shout_plugin.py").write_text(
        "import os\nos.environ['SHOUT_IMPORTED'] = '1'\n"
        "from waza_core import Grader, hookimpl\n"
        "class Shout(Grader):\n    name = 'shout'\n"
        "    def grade(self, ctx):\n        return self.result(1.0, True, 'ok')\n"
        "@hookimpl\ndef waza_register_graders(register):\n    register(Shout)\n")
    dist = tmp_path / "waza_shout-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: waza-shout\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[waza]\nshout = shout_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SHOUT_IMPORTED", raising=False)
    monkeypatch.delitem(sys.modules, "shout_plugin", raising=False)
    return monkeypatch


@pytest.mark.parametrize("value", ["", "0", "false", "No", "off"])
def test_autoload_stays_on_for_false_values(installed, value):
    installed.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", value)
    assert build_plugin_manager()[1].get("grader", "shout") is not None


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_autoload_is_off_for_true_values(installed, value):
    import os

    installed.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", value)
    registry = build_plugin_manager()[1]
    assert registry.get("grader", "shout") is None
    assert "shout" not in [p.name for p in registry.plugins]
    assert "SHOUT_IMPORTED" not in os.environ


def test_autoload_refuses_a_value_it_cannot_read(installed):
    installed.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "maybe")
    with pytest.raises(PluginError, match="WAZA_DISABLE_PLUGIN_AUTOLOAD='maybe'"):
        build_plugin_manager()


@pytest.mark.parametrize("name", ["shout", "shout_plugin"])
def test_a_disabled_installed_plugin_is_not_imported(installed, name):
    import os

    installed.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "0")
    registry = build_plugin_manager([f"no:{name}"])[1]
    info = next(p for p in registry.plugins if p.name == "shout")
    assert info.disabled_by == f"-p no:{name}" and info.registers == {}
    assert "SHOUT_IMPORTED" not in os.environ
    assert registry.get("grader", "shout") is None
    assert "the plugin 'shout' may provide it but is disabled by -p no:" in registry.unknown("grader", "shout")


def test_short_names_are_for_builtins_only(tmp_path, monkeypatch):
    # ``-p no:text`` means waza_graders.text; the last part of a third-party module
    # ("grader" of shoutpkg.grader) is not a name, only the entry point and the module are
    pkg = tmp_path / "shoutpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "grader.py").write_text("")
    dist = tmp_path / "shoutpkg-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shoutpkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[waza]\nshouter = shoutpkg.grader\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "0")
    with pytest.raises(PluginError, match="cannot disable 'grader'"):
        build_plugin_manager(["no:grader"])
    for name in ("shouter", "shoutpkg.grader"):
        registry = build_plugin_manager([f"no:{name}"])[1]
        assert next(p for p in registry.plugins if p.name == "shouter").disabled_by == f"-p no:{name}"


def test_the_config_key_of_a_disabled_executor_names_the_plugin(make_suite):
    ev = ("name: s\nskill: x\nconfig:\n  executor: cli\n  cli: {command: [echo, '{prompt}']}\n"
          "tasks: ['tasks/*.yaml']\nallow_ungraded: true\n")
    suite = str(make_suite(ev, {"tasks/t.yaml": TASK}))
    assert run_waza("validate", suite).returncode == 0
    assert_clean_exit_2(run_waza("validate", suite, "-p", "no:cli_agent"), "unknown key 'cli'",
                        "config.cli belongs to an executor of the plugin 'waza_adapters.cli_agent', "
                        "disabled by -p no:cli_agent")


def test_entry_points_are_read_when_a_distribution_may_declare_one(tmp_path, monkeypatch):
    """importlib.metadata is skipped only when surely no distribution declares a waza
    entry point; a dist-info with a [waza] section, or an archive on sys.path, asks it."""
    import importlib.metadata

    from waza_core import plugins

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert plugins._may_declare("waza") is False
    dist = tmp_path / "demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[console_scripts]\ndemo = x:y\n")
    assert plugins._may_declare("waza") is False
    (dist / "entry_points.txt").write_text("[console_scripts]\ndemo = x:y\n\n[waza]\ndemo = demo_plugin_mod\n")
    assert plugins._may_declare("waza") is True
    assert [ep.name for ep in importlib.metadata.entry_points(group="waza")] == ["demo"]  # what is then read
    (dist / "entry_points.txt").unlink()
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(archive)])
    assert plugins._may_declare("waza") is True
