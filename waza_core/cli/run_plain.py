"""``waza run`` of a plain command line, without typer: :mod:`waza_core.cli` runs it before
typer is imported, and the typer command (:mod:`waza_core.cli.run`) builds its
:class:`~waza_core.run.command.RunCommand` with the same :func:`start`, so both run the
same thing. Why: importing typer and building its command is ~40 ms of a ~250 ms warm
``waza run`` of examples/quickstart (cProfile; bench/bench_startup.py), and the 2,000-task
comparison with promptfoo (bench/bench_promptfoo.py) pays it on every run.

A plain command line is one suite path and only options that typer does not check
(no number ranges): anything else returns None from :func:`parse_plain`, for typer to
parse and report as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from waza_core.cli.errors import exit_code_of
from waza_core.cli.plain_args import plain_words

#: every option of ``waza run`` with its default, as the typer command declares it
#: (tests/cli/test_run_plain.py keeps the two equal)
DEFAULTS: dict[str, Any] = {
    "output": None, "output_dir": None, "context_dir": None, "task": [], "tags": [], "trials": None,
    "executor": None, "model": [], "baseline": False, "baseline_from": None, "parallel": False, "workers": None,
    "fail_fast": False, "keep_workspaces": False, "update_snapshots": False, "judge_model": None,
    "skip_graders": False, "audit": False, "quiet": False, "verbose": False, "color": "auto",
    "log_format": "console", "plugin": [], "reporters": [], "reporter_options": [], "cache": False,
    "cache_dir": Path(".waza-cache"), "backend": None, "ray_address": None, "journal": None, "resume": None,
    "max_spend": None, "max_run_cost": None, "prices": None,
}

#: the flags a plain command line may hold -> the parameter each sets to True
_FLAGS = {"--baseline": "baseline", "--parallel": "parallel", "--fail-fast": "fail_fast",
          "--keep-workspaces": "keep_workspaces", "--update-snapshots": "update_snapshots",
          "--skip-graders": "skip_graders", "--audit": "audit", "-q": "quiet", "--quiet": "quiet",
          "-v": "verbose", "--verbose": "verbose", "--cache": "cache"}
#: the options with a value a plain command line may hold -> (parameter, converter)
_VALUES = {"-o": ("output", Path), "--output": ("output", Path), "--output-dir": ("output_dir", Path),
           "--context-dir": ("context_dir", Path), "--task": ("task", str), "--tags": ("tags", str),
           "--executor": ("executor", str), "-m": ("model", str), "--model": ("model", str),
           "--baseline-from": ("baseline_from", Path), "--judge-model": ("judge_model", str),
           "--color": ("color", str), "--log-format": ("log_format", str), "-p": ("plugin", str),
           "--plugin": ("plugin", str), "--reporter": ("reporters", str),
           "--reporter-option": ("reporter_options", str), "--cache-dir": ("cache_dir", Path),
           "--backend": ("backend", str), "--ray-address": ("ray_address", str), "--journal": ("journal", Path),
           "--resume": ("resume", Path), "--prices": ("prices", str)}


def parse_plain(args: list[str]) -> tuple[Path, dict[str, Any]] | None:
    """The suite path and the parameters of ``waza run ARGS`` when ARGS is a plain form
    (one path; options of :data:`_FLAGS` and :data:`_VALUES`, each as its own word, or
    ``--opt=value`` for a long one); None for anything else (``--help``, ``--trials``,
    a bundled or unknown option, ``--``, two paths), which typer then parses."""
    parsed = plain_words(args, _FLAGS, _VALUES)
    if parsed is None:
        return None
    path, options = parsed
    params = {k: list(v) if isinstance(v, list) else v for k, v in DEFAULTS.items()}
    for name, value in options:
        if value is None:
            params[_FLAGS[name]] = True
            continue
        key, convert = _VALUES[name]
        if isinstance(params[key], list):
            params[key].append(convert(value))
        else:
            params[key] = convert(value)
    return Path(path), params


def start(eval_file: Path, params: dict[str, Any]) -> int:
    """Run the suite as ``waza run`` does with these parameters; the exit code."""
    # deferred: waza_core.run.command adds ~288.1 ms to importing this module
    from waza_core.run.command import (
        BackendRequest,
        CacheRequest,
        ConsoleOptions,
        ReportFlags,
        RunCommand,
        RunFlags,
        SpendLimits,
        run_command,
    )
    from waza_core.run.targets import OutputTargets

    p = params
    return run_command(eval_file, RunCommand(
        targets=OutputTargets(output=p["output"], output_dir=p["output_dir"], journal=p["journal"],
                              resume=p["resume"]),
        console=ConsoleOptions(color=p["color"], quiet=p["quiet"], verbose=p["verbose"], log_format=p["log_format"]),
        flags=RunFlags(executor=p["executor"], models=p["model"], trials=p["trials"], parallel=p["parallel"],
                       workers=p["workers"], task=p["task"], tags=p["tags"], context_dir=p["context_dir"],
                       keep_workspaces=p["keep_workspaces"], update_snapshots=p["update_snapshots"],
                       judge_model=p["judge_model"], skip_graders=p["skip_graders"], fail_fast=p["fail_fast"],
                       baseline=p["baseline"], baseline_from=p["baseline_from"], audit=p["audit"]),
        backend=BackendRequest(name=p["backend"], ray_address=p["ray_address"]),
        spend=SpendLimits(max_spend=p["max_spend"], max_run_cost=p["max_run_cost"], prices=p["prices"]),
        cache=CacheRequest(on=p["cache"], directory=p["cache_dir"]),
        reports=ReportFlags(names=p["reporters"], options=p["reporter_options"]),
        plugins=p["plugin"],
    ))


def run(args: list[str]) -> int | None:
    """The exit code of ``waza run ARGS`` for a plain form, None for typer to handle."""
    plain = parse_plain(args)
    if plain is None:
        return None

    result: list[int] = []
    code = exit_code_of(lambda: result.append(start(*plain)))
    return code if code is not None else result[0]
