"""Dialects are plugins: built-in, from a -p module, and from the `waza` entry-point group."""

from __future__ import annotations

import subprocess

from tests.interop.helpers import ADAPTER, assert_rejected, child_env, cli, load_output, waza_argv


def test_the_builtin_dialect_is_its_own_plugin_module():
    import waza_interop
    from waza_core.plugins import build_plugin_manager

    assert "waza_interop.agentv_contains" in waza_interop.PLUGINS
    registry = build_plugin_manager()[1]
    assert registry.items["interop_dialect"][ADAPTER].plugin == "waza_interop.agentv_contains"


def test_a_plugin_module_adds_a_dialect():
    res = cli("interop", "list", "-p", "tests.interop.fake_dialect")
    assert res.code == 0, res.err
    ids = [line.split("  ")[0] for line in res.out.decode().splitlines()]
    assert ids == sorted([ADAPTER, "agentv", "promptfoo", "example-shout-v1"])
    res = cli("interop", "import", "-p", "tests.interop.fake_dialect", "--adapter", "example-shout-v1",
              "--test", "t", "--assertion", "1", stdin=b"shout: HEY\n")
    assert res.code == 0, res.err
    assert load_output(res.out) == {"name": "shout", "type": "text", "config": {"contains_cs": ["HEY"]}}
    assert res.err == "toy notice\n"
    assert_rejected(cli("interop", "export", "-p", "tests.interop.fake_dialect", "--adapter", "example-shout-v1",
                        stdin=b"x: 1\n"), "the toy dialect cannot export")


def test_an_entry_point_adds_a_dialect(tmp_path):
    dist = tmp_path / "waza_shout-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: waza-shout\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[waza]\nshout = tests.interop.fake_dialect\n")
    env = child_env(WAZA_DISABLE_PLUGIN_AUTOLOAD="")
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc = subprocess.run(waza_argv("interop", "list"), capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"example-shout-v1  Toy dialect" in proc.stdout
    proc = subprocess.run(waza_argv("interop", "import", "--adapter", "example-shout-v1", "--test", "t",
                                    "--assertion", "1"), input=b"shout: HI\n", capture_output=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b'- "HI"' in proc.stdout


def test_two_plugins_with_one_adapter_id_are_an_error(tmp_path):
    (tmp_path / "dup_dialect.py").write_text(
        "from waza_core.hookspecs import hookimpl\n"
        "from waza_interop.agentv_contains import AgentVContains\n"
        "class Copy(AgentVContains):\n    pass\n"
        "@hookimpl\ndef waza_register_interop_dialects(register):\n    register(Copy)\n")
    env = child_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc = subprocess.run(waza_argv("interop", "export", "-p", "dup_dialect", "--adapter", ADAPTER),
                          input=b"name: g\ntype: text\nconfig: {contains_cs: [x]}\n", capture_output=True,
                          env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"is registered by two plugins" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_a_crashing_dialect_is_a_one_line_error_without_output():
    p = ("-p", "tests.interop.crashing_dialect")
    assert_rejected(cli("interop", "import", *p, "--adapter", "example-crashes-v1", "--test", "t",
                        "--assertion", "1", stdin=b"a: 1\n"),
                    'dialect "example-crashes-v1" failed: ValueError: boom second line')
    assert_rejected(cli("interop", "export", *p, "--adapter", "example-crashes-v1", stdin=b"a: 1\n"),
                    "returned str, not a Conversion")
    assert_rejected(cli("interop", "export", *p, "--adapter", "example-cannot-start-v1", stdin=b"a: 1\n"),
                    'dialect "example-cannot-start-v1" failed: RuntimeError: no way')
