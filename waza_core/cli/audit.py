"""``waza audit SUITE``: run every task once against a do-nothing agent.

The ``null`` executor (:mod:`waza_adapters.null`) answers with nothing: empty output, no
tool call, no skill use, the workspace exactly as prepared. A task that passes against it
passed without any agent work (a vacuous task), and so did every grader that passed (a
vacuous grader). Exit 1 when a task is vacuous, 0 otherwise, 2 on bad input. The work is
:mod:`waza_core.run.audit`, shared with ``waza run --audit``.

No paid call is ever made: the do-nothing agent is offline, prompt graders judged by the
run's executor are "not judged" under it and reported as not audited, and a suite whose
prompt grader names a paid judge executor (``config.judge.executor``) is refused (exit 2)
before anything runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)


@user_errors
def audit(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Run every task once against a do-nothing agent; report what passes anyway.

    Exit 1 when a task passes with no agent, 0 otherwise, 2 on bad input.
    """
    # deferred: waza_core.errors adds ~0.4 ms to importing this module
    from waza_core.errors import ExitCode, WazaError
    from waza_core.run import audit as audit_mod

    if fmt not in ("text", "json"):
        raise WazaError(f"--format {fmt!r}: expected text or json")
    suite, registry = _load(eval_file, plugin)
    try:
        report = audit_mod.audit_suite(suite, registry, plugin)
    except audit_mod.AuditRunFailed as exc:
        sys.stderr.write(exc.stderr)
        raise typer.Exit(ExitCode.USAGE if exc.returncode == 2 else exc.returncode or 1) from None
    if fmt == "json":
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(audit_mod.render_text(report))
    raise typer.Exit(1 if report["vacuous_tasks"] else 0)


def _load(eval_file: Path, plugins: list[str]):
    """(suite, registry), or exit 2 with the suite's problems."""
    # deferred: waza_core.errors adds ~0.4 ms to importing this module
    from waza_core.errors import ExitCode, SuiteError
    from waza_core.plugins import get_registry
    from waza_core.suite.load import load_suite

    registry = get_registry(plugins)
    try:
        suite = load_suite(eval_file, registry)
    except SuiteError as exc:
        for line in exc.problems:
            sys.stderr.write(line + "\n")
        sys.stderr.write(f"waza: {len(exc.problems)} problem(s) found\n")
        raise typer.Exit(ExitCode.USAGE) from None
    return suite, registry
