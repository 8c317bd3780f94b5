"""``waza gate --baseline B.json --current C.json``: the CI regression gate (waza's flags and exit codes).

Exit 0 pass, 1 regression (or a task-set policy set to fail), 2 golden failure, 3 a
configuration error: a bad flag, a positional argument, an unreadable or invalid file.
"""

from __future__ import annotations

import os
import re
import sys
from typing import List, Optional

import typer
import typer.core

_BOOL_FLAG = re.compile(r"^--golden-must-pass=(.*)$", re.IGNORECASE)
_TRUE, _FALSE = ("true", "t", "1", "yes"), ("false", "f", "0", "no")


class GateCommand(typer.core.TyperCommand):
    """Usage errors exit 3 (waza's config error), and ``--golden-must-pass=false`` works as in waza."""

    def parse_args(self, ctx, args):
        rewritten = []
        for arg in args:
            m = _BOOL_FLAG.match(arg)
            if m and m.group(1).strip().lower() in _TRUE + _FALSE:
                arg = "--golden-must-pass" if m.group(1).strip().lower() in _TRUE else "--no-golden-must-pass"
            rewritten.append(arg)
        try:
            return super().parse_args(ctx, rewritten)
        except Exception as exc:
            if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "show"):
                exc.exit_code = 3  # waza: invalid flags are a config error, exit 3
            raise


def register(app: typer.Typer) -> None:
    app.command("gate", cls=GateCommand)(gate)


def gate(
    positional: Optional[List[str]] = typer.Argument(None, hidden=True),
    baseline: str = typer.Option("", "--baseline", help="Baseline results JSON file (the known-good run)."),
    current: str = typer.Option("", "--current", help="Current results JSON file."),
    max_regression_pct: float = typer.Option(0.0, "--max-regression-pct",
                                             help="Largest allowed drop of the success rate, in percentage points."),
    golden_must_pass: bool = typer.Option(True, "--golden-must-pass/--no-golden-must-pass",
                                          help="A golden task (golden: true in either file) that did not pass "
                                               "fails the gate with exit 2. On by default, as waza documents."),
    on_new_tasks: str = typer.Option("allow", "--on-new-tasks", help="Tasks only in --current: allow, warn or fail."),
    on_removed_tasks: str = typer.Option("warn", "--on-removed-tasks",
                                         help="Tasks only in --baseline: allow, warn or fail."),
    output_format: str = typer.Option("human", "--format", "-f", help="human, json, markdown or github-actions."),
    significance: Optional[float] = typer.Option(
        None, "--significance", metavar="ALPHA",
        help="Beyond waza: let a paired test over tasks decide what is a regression (p < ALPHA, e.g. 0.05): "
             "a drop within noise is a warning, a significant one fails (docs/statistics.md)."),
    strict_match: bool = typer.Option(
        False, "--strict-match",
        help="Beyond waza: fail with exit 3 when the two files are different suites, skills or models, or share "
             "less than half their tasks (without it, a loud warning)."),
) -> None:
    """Gate current results against a baseline for CI.

    Exit 0 pass, 1 regression, 2 golden failure, 3 configuration error (or, with --strict-match,
    files of different suites or models).
    """
    # deferred: waza_core.errors adds ~0.5 ms to importing this module
    from waza_core.errors import WazaError
    from waza_core.results import gate as g
    from waza_core.results import gate_tasks
    from waza_core.results.load import read_results

    def config_error(message: str) -> typer.Exit:
        sys.stderr.write(f"waza: error: {message}\n")
        return typer.Exit(g.EXIT_CONFIG)

    if positional:
        raise config_error(f"unexpected positional arguments: {', '.join(positional)}")
    opts = g.GateOptions(baseline, current, max_regression_pct, golden_must_pass, on_new_tasks, on_removed_tasks,
                         output_format, significance, strict_match)
    try:
        g.check_options(opts)
    except ValueError as exc:
        raise config_error(str(exc)) from None
    docs = {}
    for side, path in (("baseline", opts.baseline_path), ("current", opts.current_path)):
        try:
            docs[side] = read_results(path, light=True)  # the gate reads no output or transcript
        except WazaError as exc:
            raise config_error(f"failed to load {side} {path}: {exc}") from None
    try:
        report = g.build_report(opts, docs["baseline"], docs["current"])
    except ValueError as exc:  # --significance without scipy
        raise config_error(str(exc)) from None
    if opts.format == "json":
        # deferred: waza_core.results.markdown_text adds ~5.5 ms to importing this module
        from waza_core.results.markdown_text import json_text

        typer.echo(json_text(report))
    elif opts.format == "markdown":
        sys.stdout.write(g.render_markdown(report))
    elif opts.format == "github-actions":
        sys.stdout.write(g.render_github_actions(report))
        summary_path = os.environ.get("GITHUB_STEP_SUMMARY", "")
        if summary_path:
            try:
                with open(summary_path, "a", encoding="utf-8") as fh:
                    fh.write(g.render_markdown(report) + "\n")
            except OSError as exc:
                raise config_error(f"writing GITHUB_STEP_SUMMARY {summary_path}: {exc.strerror or exc}") from None
        else:
            sys.stdout.write(g.render_markdown(report))
    else:
        sys.stdout.write(g.render_human(report))
    sys.stdout.flush()
    sys.stderr.write(gate_tasks.stderr_warning(report))
    if not report["passed"]:
        count = len(report.get("golden_failures", [])) if report["exit_code"] == g.EXIT_GOLDEN \
            else len(report.get("failures", []))
        what = "golden task(s) failed" if report["exit_code"] == g.EXIT_GOLDEN else "failure(s)"
        if report["verdict"] == "mismatch":
            count, what = len(report["mismatches"]), "mismatch(es) between the files (--strict-match)"
        sys.stderr.write(f"waza: gate failed: {count} {what}\n")
    raise typer.Exit(report["exit_code"])
