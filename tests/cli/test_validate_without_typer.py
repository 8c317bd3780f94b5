"""``waza validate`` of a plain command line runs before typer is imported
(waza_core/cli/validate_check.py): the same output and exit code as typer's path, which
every other form of the command line still takes."""

from __future__ import annotations

import pytest

from tests.conftest import BASIC_EVAL, run_waza
from waza_core.cli.validate_check import parse_plain


@pytest.mark.parametrize("args,plain", [
    (["s"], ("s", False, [], False, "auto")),
    (["--strict", "s", "-q"], ("s", True, [], True, "auto")),
    (["s", "--color", "never", "-p", "a", "--plugin=b", "--color=always"], ("s", False, ["a", "b"], False, "always")),
    (["--quiet", "s", "--color=bad"], ("s", False, [], True, "bad")),  # the console refuses it, as under typer
])
def test_plain_forms(args, plain):
    path, *rest = plain
    got = parse_plain(args)
    assert got is not None and str(got[0]) == path and list(got[1:]) == rest


@pytest.mark.parametrize("args", [[], ["a", "b"], ["--", "s"], ["-qs", "s"], ["s", "--nope"], ["s", "-p"],
                                  ["s", "--color"], ["s", "--help"], ["--strictx", "s"], ["-x"],
                                  ["s", "-p=a"]])  # click reads -p=a as the value "=a"
def test_other_forms_are_left_to_typer(args):
    assert parse_plain(args) is None


@pytest.mark.parametrize("suite_text,extra", [
    (BASIC_EVAL, []),
    (BASIC_EVAL, ["-q"]),
    (BASIC_EVAL + "unknown_key: 1\n", ["--strict"]),
    (BASIC_EVAL.replace("executor: mock", "executor: nope"), []),
    ("name: [\n", []),
    (BASIC_EVAL, ["--color", "bad"]),
    (BASIC_EVAL, ["-p", "no_such_plugin_module_xyz"]),
])
def test_the_same_output_and_exit_code_as_typer(make_suite, suite_text, extra):
    path = make_suite(suite_text, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"})
    fast = run_waza("validate", str(path), *extra, cwd=path.parent)
    typer_path = run_waza("validate", *extra, "--", str(path), cwd=path.parent)  # `--`: typer parses it
    assert (fast.returncode, fast.stdout, fast.stderr) == (typer_path.returncode, typer_path.stdout,
                                                           typer_path.stderr)
    assert b"Traceback" not in fast.stderr
