"""docs/cli.md shows the real ``--help`` of every command (scripts/gen_cli_docs.py writes it)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "gen_cli_docs.py"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def helps(gen):
    return gen.command_helps()


def test_docs_cli_md_is_up_to_date(gen, helps):
    text = gen.DOC.read_text("utf-8")
    problems = gen.stale_paths(text, helps)
    assert not problems, "docs/cli.md is stale: " + "; ".join(problems) + f".\nFix: {gen.FIX_HINT}"
    assert gen.render(text, helps) == text, f"docs/cli.md is stale. Fix: {gen.FIX_HINT}"


def test_every_command_is_covered(helps):
    for path in [(), ("run",), ("validate",), ("plugins",), ("optimize", "run"), ("interop", "import")]:
        assert path in helps


@pytest.mark.parametrize("path", [("run",), ("optimize", "run"), ()])
def test_the_generated_text_is_what_the_command_prints_at_80_columns(helps, path):
    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run([sys.executable, "-m", "waza_core", *path, "--help"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.replace("python -m waza_core", "waza") == helps[path]


def test_a_new_flag_makes_the_check_fail_with_the_fix(gen, helps, tmp_path):
    changed = dict(helps)
    changed[("run",)] = helps[("run",)].replace("  --help ", "  --shiny            A new flag.\n  --help ")
    text = gen.DOC.read_text("utf-8")
    assert gen.stale_paths(text, changed) == ["the help of `waza run` in docs/cli.md is out of date"]
    assert "--shiny" in gen.render(text, changed)
    doc = tmp_path / "cli.md"
    doc.write_text(text.replace("  --fail-fast ", "  --fial-fast "))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "WAZA_CLI_DOC": str(doc)})
    assert proc.returncode == 1
    assert "run `python scripts/gen_cli_docs.py`" in proc.stderr and "--fial-fast" in proc.stderr


def test_a_new_command_gets_a_section(gen, helps):
    changed = {**helps, ("optimize", "resume"): "Usage: waza optimize resume [OPTIONS]\n"}
    text = gen.render(gen.DOC.read_text("utf-8"), changed)
    block = text.index("### waza optimize resume\n\n```console\n$ waza optimize resume --help\nUsage:")
    assert text.index("## waza optimize\n") < block < text.index("## Exit codes")
    changed[("report",)] = "Usage: waza report\n"
    text = gen.render(text, changed)
    assert text.index("## waza report\n") < text.index("## Exit codes")


def test_the_fast_top_level_help_is_what_typer_prints(gen, helps):
    """`waza --help` is printed from waza_core/cli/top_help.py without importing typer: the
    same text, or the script must be run again."""
    from waza_core.cli import top_help

    assert top_help.TEXT == helps[()], f"waza_core/cli/top_help.py is stale. Fix: {gen.FIX_HINT}"
    assert gen.TOP_HELP.read_text("utf-8") == gen.top_help_module(helps)
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    fast = subprocess.run([sys.executable, "-X", "importtime", "-m", "waza_core", "--help"], capture_output=True,
                          env=env, cwd=REPO)
    assert fast.returncode == 0 and fast.stdout.decode() == helps[()]
    assert b"| typer" not in fast.stderr  # served without importing typer
    narrow = subprocess.run([sys.executable, "-m", "waza_core", "--help"], capture_output=True,
                            env=dict(env, COLUMNS="60"), cwd=REPO)
    assert narrow.returncode == 0 and b"Usage: waza" in narrow.stdout  # typer formats it for 60 columns


def test_every_command_help_is_served_without_typer(gen, helps):
    """`waza COMMAND --help` is printed from waza_core/cli/top_help.py too (start-up under
    100 ms): the same text as typer's, for every command and group."""
    from waza_core.cli import top_help

    assert {tuple(k.split()) for k in top_help.HELPS} == {p for p in helps if p}
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    for path in [("run",), ("validate",), ("optimize",), ("optimize", "run"), ("interop", "import")]:
        assert top_help.HELPS[" ".join(path)] == helps[path]
        fast = subprocess.run([sys.executable, "-X", "importtime", "-m", "waza_core", *path, "--help"],
                              capture_output=True, env=env, cwd=REPO)
        assert fast.returncode == 0 and fast.stdout.decode() == helps[path]
        assert b"| typer" not in fast.stderr
    other = subprocess.run([sys.executable, "-m", "waza_core", "nosuchcommand", "--help"], capture_output=True,
                           env=env, cwd=REPO)
    assert other.returncode == 2  # not a command: typer says so
