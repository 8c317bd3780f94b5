"""``waza optimize``: ``run`` (the optimizer loop) and ``capabilities`` (contract 1.0)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import List, Optional

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, fail, user_errors

app = typer.Typer(help="Optimize a skill or context with an optimizer adapter, evaluated by waza.",
                  no_args_is_help=True)


@app.command("capabilities")
@user_errors
def capabilities(
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Print the contract versions and harness capabilities (optimizer-capabilities-1.0)."""
    # deferred: json adds ~1.9 ms to importing this module
    import json

    # deferred: waza_core.optimize.contract adds ~52.1 ms to importing this module
    from waza_core.optimize.contract import capabilities_document
    from waza_core.plugins import get_registry

    registry = get_registry(plugin)
    typer.echo(json.dumps(capabilities_document(registry.names("optimizer_adapter")), indent=2))


@app.command("run")
@user_errors
def run(
    eval_file: Path = typer.Argument(..., help="The suite's eval.yaml (or its folder)."),
    target: str = typer.Option(..., "--target", help="context-overlay or skill-directory."),
    seed: Path = typer.Option(..., "--seed", help="Folder with the seed candidate's files."),
    optimization_tag: str = typer.Option(..., "--optimization-tag", help="Tag of the optimization split."),
    qualification_tag: str = typer.Option(..., "--qualification-tag", help="Tag of the held-out qualification split."),
    adapter: str = typer.Option(..., "--adapter",
                                help="Optimizer adapter: fake, command, copilot-reflect, or a plugin's."),
    output_dir: Path = typer.Option(..., "--output-dir",
                                    help="New or empty folder for report.json, candidates/ and evidence/."),
    fake_script: Optional[str] = typer.Option(None, "--fake-script",
                                              help="Strict JSON file of proposals for --adapter fake."),
    adapter_command: Optional[str] = typer.Option(None, "--adapter-command", help="Executable of --adapter command."),
    adapter_arg: List[str] = typer.Option([], "--adapter-arg", help="Argument for --adapter-command (repeatable)."),
    adapter_env: List[str] = typer.Option([], "--adapter-env",
                                          help="Environment variable passed to the adapter, by name (repeatable)."),
    reflect_model: Optional[str] = typer.Option(None, "--reflect-model", help="Model of --adapter copilot-reflect."),
    adapter_option: List[str] = typer.Option(
        [], "--adapter-option", metavar="KEY=VALUE",
        help="An option of the adapter (repeatable); `waza plugins --options` lists each adapter's keys. "
             "The flags above are aliases: --fake-script F is --adapter-option script=F, --adapter-command C "
             "is command=C, --adapter-arg A is arg=A, --adapter-env N is env=N, --reflect-model M is model=M."),
    max_iterations: int = typer.Option(5, "--max-iterations", help="Maximum propose calls (duplicates count)."),
    max_evaluations: int = typer.Option(10, "--max-evaluations",
                                        help="Total evaluations, including the seed and 2 reserved for qualification."),
    timeout: Optional[str] = typer.Option(None, "--timeout",
                                          help="Deadline for the whole run (e.g. 30m); none by default."),
    adapter_timeout: str = typer.Option("10m", "--adapter-timeout", help="Limit per adapter call."),
    min_improvement: float = typer.Option(0.0, "--min-improvement",
                                          help="The best must beat the seed by more than this to be qualified."),
    allow_paid_calls: bool = typer.Option(False, "--allow-paid-calls",
                                          help="Allow adapters and executors that may cost money."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print only the outcome."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
    backend: Optional[str] = typer.Option(None, "--backend", help="Where evaluation runs run: local or ray."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster to use (else RAY_ADDRESS)."),
) -> None:
    """Propose, evaluate and qualify candidates. Exit 0: accepted, no_improvement, rejected;
    1: not_qualified, failed, incomplete (report.json says why); 2: unusable --output-dir."""

    # deferred: waza_core.optimize.loop adds ~155.3 ms to importing this module
    from waza_core.optimize.loop import OptimizeConfig, run_optimizer
    from waza_core.plugins import get_registry

    get_registry(plugin)  # a -p module that does not exist is a usage error (exit 2), before any report
    options = _adapter_options({"--fake-script": [fake_script] if fake_script is not None else [],
                                "--adapter-command": [adapter_command] if adapter_command is not None else [],
                                "--adapter-arg": adapter_arg, "--adapter-env": adapter_env,
                                "--reflect-model": [reflect_model] if reflect_model is not None else []},
                               adapter_option)

    def progress(text: str) -> None:
        if not quiet or text.startswith("outcome:"):
            sys.stderr.write(f"waza optimize: {text}\n")

    cfg = OptimizeConfig(
        eval_file=eval_file, target=target, seed=seed, optimization_tag=optimization_tag,
        qualification_tag=qualification_tag, adapter=adapter, output_dir=output_dir,
        max_iterations=max_iterations, max_evaluations=max_evaluations, timeout=timeout,
        adapter_timeout=adapter_timeout, min_improvement=min_improvement, allow_paid_calls=allow_paid_calls,
        adapter_options=options,
        plugins=list(plugin), progress=progress, backend=backend, ray_address=ray_address,
    )
    code = run_optimizer(cfg)
    sys.stderr.write(f"waza optimize: report: {output_dir / 'report.json'}\n")
    raise typer.Exit(code)


def _adapter_options(aliases: dict[str, list[str]], given: list[str]):
    """AdapterOptions from the alias flags (first) and each ``--adapter-option KEY=VALUE``.

    A value without ``=`` or with an empty key is a usage error (exit 2); whether the
    adapter knows the key is checked by the optimizer run (``invalid_config``)."""

    # deferred: waza_core.optimize.adapter adds ~34.1 ms to importing this module
    from waza_core.optimize.adapter import OPTION_ALIASES, AdapterOptions

    values: dict[str, list[str]] = {}
    origins: dict[str, str] = {}
    for flag, items in aliases.items():
        if items:
            values.setdefault(OPTION_ALIASES[flag], []).extend(items)
            origins[OPTION_ALIASES[flag]] = flag
    for item in given:
        key, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", key):
            raise fail(f"--adapter-option {item!r}: expected KEY=VALUE (KEY of letters, digits, '_', '.', '-')")
        values.setdefault(key, []).append(value)
        origins.setdefault(key, f"--adapter-option {key}")
    return AdapterOptions(values=values, origins=origins)
