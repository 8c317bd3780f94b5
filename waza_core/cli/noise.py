"""``waza noise RESULTS...``: the noise floor of a suite, and power planning from a pilot."""

from __future__ import annotations

from typing import List, Optional

import typer

from waza_core.cli.common import fail, user_errors


def register(app: typer.Typer) -> None:
    app.command("noise")(noise)


def _correlation(value: str) -> float | None:
    """'auto' (estimate from the files) or a number."""

    if value.strip().lower() == "auto":
        return None
    try:
        return float(value)
    except ValueError:
        raise fail(f"--correlation must be 'auto' or a number from 0 to 1; got {value!r}") from None


@user_errors
def noise(
    files: List[str] = typer.Argument(..., help="Results files with trials: one file with several trials per "
                                                "task, or two or more runs of the same suite (an A/A pair)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Level of the gate's test the effect must pass."),
    power: float = typer.Option(0.8, "--power", help="How often the effect must be found (0..1)."),
    effect: Optional[float] = typer.Option(None, "--effect", help="Plan: trials (or tasks) needed to find a drop "
                                                                  "of this much in the mean pass rate, e.g. 0.10."),
    simulations: int = typer.Option(1000, "--simulations", help="Simulated pairs per power estimate."),
    seed: int = typer.Option(20261204, "--seed", help="Seed of every random draw."),
    correlation: str = typer.Option("auto", "--correlation", metavar="auto|RHO",
                                    help="Correlation of a run's trials of one task: estimated from two or more "
                                         "files (auto), or given (0 independent .. 1 one verdict per run)."),
    max_trials: int = typer.Option(20, "--max-trials", help="Plan: the most trials per task to consider."),
    max_tasks: int = typer.Option(2000, "--max-tasks", help="Plan: the most tasks to consider."),
    output_format: str = typer.Option("text", "--format", "-f", help="text or json."),
) -> None:
    """How noisy is this suite? Flip rates, between-run spread, the smallest change it can detect.

    With --effect: how many trials per task (or tasks) are needed to detect that drop.
    Exit 0, or 2 on bad input (an unreadable or invalid file, a bad option).
    """
    from waza_core.results import noise as n  # deferred: numpy is paid only when the command runs

    fmt = output_format.strip().lower()
    if fmt not in ("text", "json"):
        raise fail(f"unsupported format {output_format!r}: must be text or json")
    opts = n.NoiseOptions(alpha, power, effect, simulations, seed, _correlation(correlation), max_trials, max_tasks)
    try:
        n.check_options(opts)
    except ValueError as exc:
        raise fail(str(exc)) from None
    report = n.build_report(list(files), opts)
    if fmt == "json":
        # deferred: waza_core.results.markdown_text adds ~1.5 ms to importing this module
        from waza_core.results.markdown_text import json_text

        typer.echo(json_text(report))
    else:
        typer.echo(n.render_text(report), nl=False)
