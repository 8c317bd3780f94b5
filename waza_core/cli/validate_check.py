"""What ``waza validate`` does, without typer: :mod:`waza_core.cli` runs it before typer
is imported when the command line is a plain one (:func:`parse_plain`), and the typer
command (:mod:`waza_core.cli.validate`) runs it for every other form, so both give the
same output and exit code. Why: importing typer and the command modules is ~60 ms of a
warm ``waza validate`` of a small suite (``python -X importtime``; the issue asks for
under 100 ms in all).
"""

from __future__ import annotations

from pathlib import Path

from waza_core.cli.plain_args import plain_words
from waza_core.paths import display_path


def check(eval_file: Path, strict: bool, plugin: list[str], quiet: bool, color: str) -> int:
    """Validate the suite; print as ``waza validate`` does; the exit code (0 or 2)."""
    # deferred: waza_core.cli.errors adds ~3.1 ms to importing this module
    from waza_core.cli.errors import exit_code_of

    failed: list[int] = []
    code = exit_code_of(lambda: failed.extend(_check(eval_file, strict, plugin, quiet, color)))
    return code if code is not None else (failed[0] if failed else 0)


def _check(eval_file: Path, strict: bool, plugin: list[str], quiet: bool, color: str) -> list[int]:
    # deferred: waza_core.errors adds ~0.4 ms to importing this module
    from waza_core.errors import ExitCode, SuiteError
    from waza_core.plugins import get_registry
    from waza_core.results.console import escape, print_warnings, setup_console
    from waza_core.run.recipe import check_before_running
    from waza_core.suite.load import load_suite

    con = setup_console(color, quiet)
    registry = get_registry(plugin)
    try:
        suite = load_suite(eval_file, registry, strict=strict)
    except SuiteError as exc:
        print_warnings(exc.warnings)
        for line in exc.problems:
            con.err.write(escape(line) + "\n")
        con.err.write(f"waza: {len(exc.problems)} problem(s) found\n")
        return [ExitCode.USAGE]
    print_warnings(suite.warnings)
    check_before_running(suite, registry)  # executor, graders, input files, skills, as `waza run`
    if not con.quiet:
        warned = f", {len(suite.warnings)} warning(s)" if suite.warnings else ""
        con.result(f"{escape(display_path(suite.file))}: valid ({len(suite.tasks)} task(s), "
                   f"{len(suite.graders)} global grader(s){warned})")
    return []


def parse_plain(args: list[str]) -> tuple[Path, bool, list[str], bool, str] | None:
    """The options of ``waza validate ARGS`` when ARGS is a plain form (one path and the
    options ``--strict``, ``-q``/``--quiet``, ``--color C``, ``-p``/``--plugin P``, each
    as its own word or, for a long one, ``--opt=value``); None for anything else (``--help``, an unknown
    or bundled option, ``--``, two paths), which typer then parses and reports."""
    parsed = plain_words(args, ("--strict", "-q", "--quiet"), ("--color", "-p", "--plugin"))
    if parsed is None:
        return None
    path, options = parsed
    strict = quiet = False
    plugins: list[str] = []
    color = "auto"
    for name, value in options:
        if name == "--strict":
            strict = True
        elif name in ("-q", "--quiet"):
            quiet = True
        elif name == "--color":
            color = value
        else:
            plugins.append(value)
    return Path(path), strict, plugins, quiet, color
