"""``waza run``: run an eval suite and write a results file.

This module only maps flags onto the narrow values of
:class:`waza_core.run.command.RunCommand` (one per stage that reads them); the work is
:func:`waza_core.run.command.run_command`, given the suite path beside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, color_option, quiet_option, user_errors, verbose_option
from waza_core.cli.report import REPORTER_HELP, REPORTER_OPTION_HELP
from waza_core.limits import MAX_TRIALS, MAX_WORKERS


def register(app: typer.Typer) -> None:
    app.command("run")(run)


@user_errors
def run(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Write the results JSON here (- for stdout; the rest goes to stderr)."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir",
                                              help="Write <eval name>-<UTC time>-<id>.json into this folder."),
    context_dir: Optional[Path] = typer.Option(None, "--context-dir",
                                               help="Fixtures folder (default: <suite>/fixtures)."),
    task: List[str] = typer.Option([], "--task", help="Only tasks whose id or name matches this glob (repeatable)."),
    tags: List[str] = typer.Option([], "--tags", help="Only tasks with a tag matching this glob (repeatable)."),
    trials: Optional[int] = typer.Option(None, "--trials", min=1, max=MAX_TRIALS,
                                         help="Override config.trials_per_task."),
    executor: Optional[str] = typer.Option(None, "--executor", help="Override config.executor."),
    model: List[str] = typer.Option([], "-m", "--model",
                                    help="Override config.model; repeat for a run per model (results_<model>.json)."),
    baseline: bool = typer.Option(False, "--baseline",
                                  help="A/B run: the suite with and without its skills (exit 1 unless skills help)."),
    baseline_from: Optional[Path] = typer.Option(None, "--baseline-from", metavar="FILE",
                                                 help="A/B run against this stored results file instead of "
                                                      "running the without-skills pass again."),
    parallel: bool = typer.Option(False, "--parallel", help="Run tasks concurrently."),
    workers: Optional[int] = typer.Option(None, "--workers", min=0, max=MAX_WORKERS,
                                          help="Concurrent runs (0 = one per core); "
                                               "any value but 1 implies --parallel."),
    fail_fast: bool = typer.Option(False, "--fail-fast", help="Stop after the first task that does not pass."),
    keep_workspaces: bool = typer.Option(False, "--keep-workspaces", help="Do not delete run workspaces."),
    update_snapshots: bool = typer.Option(False, "--update-snapshots", help="diff graders rewrite their snapshots."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model",
                                              help="Judge model of prompt graders (over config.judge_model)."),
    skip_graders: bool = typer.Option(False, "--skip-graders",
                                      help="Run the agent only; record runs as n/a for `waza grade` later."),
    audit: bool = typer.Option(False, "--audit",
                               help="First run every task once against a do-nothing agent (as `waza audit`, "
                                    "no paid call); record the vacuous tasks and graders; exit 1 when a task "
                                    "passes with no agent (docs/triage.md)."),
    quiet: bool = quiet_option(),
    verbose: bool = verbose_option("Also print the failing graders' feedback as each task finishes."),
    color: str = color_option(),
    log_format: str = typer.Option("console", "--log-format", help="console or json (stderr logs)."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
    reporters: List[str] = typer.Option([], "--reporter", help=REPORTER_HELP),
    reporter_options: List[str] = typer.Option([], "--reporter-option", help=REPORTER_OPTION_HELP),
    cache: bool = typer.Option(False, "--cache", help="Reuse runs whose inputs are unchanged (docs/ci.md)."),
    cache_dir: Path = typer.Option(Path(".waza-cache"), "--cache-dir", help="The result cache folder."),
    backend: Optional[str] = typer.Option(None, "--backend", help="Where runs run: local (default) or ray."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster to use (else RAY_ADDRESS)."),
    journal: Optional[Path] = typer.Option(None, "--journal", help="Append each finished run to this file."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Run only what this journal lacks; append."),
    max_spend: Optional[float] = typer.Option(None, "--max-spend", metavar="USD", min=0,
                                              help="Never start a run that could take the spend past this "
                                                   "(else .waza.yaml defaults.maxSpend); the rest are skipped, "
                                                   "exit 1."),
    max_run_cost: Optional[float] = typer.Option(None, "--max-run-cost", metavar="USD", min=0,
                                                 help="Worst-case cost of one run for --max-spend (else the "
                                                      "dearest run so far)."),
    prices: Optional[str] = typer.Option(None, "--prices", metavar="FILE",
                                         help="Price table over the built-in one for runs that report tokens "
                                              "but no cost (else .waza.yaml defaults.prices); 'none': off."),
) -> None:
    """Run an eval suite. Exit 0 when every task passed, 1 when one failed or errored, 2 on bad input."""
    # deferred: waza_core.cli adds ~0.5 ms to importing this module
    from waza_core.cli import run_plain

    params = {name: value for name, value in locals().items() if name in run_plain.DEFAULTS}
    raise typer.Exit(run_plain.start(eval_file, params))
