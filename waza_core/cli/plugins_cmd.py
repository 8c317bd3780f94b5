"""``waza plugins``: what is installed and what each plugin registers."""

from __future__ import annotations

from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins)


@user_errors
def plugins(
    as_json: bool = typer.Option(False, "--json", help="Print JSON for machines."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """List every plugin: name, distribution, version, what it registers, and broken or disabled ones.

    Exit 0, or 2 when two plugins register the same name (listed as CONFLICT lines).
    """
    import json

    import attrs

    from waza_core.errors import ExitCode
    from waza_core.plugins import get_registry

    registry = get_registry(plugin)
    rows = [attrs.asdict(p) for p in registry.plugins]
    if as_json:
        typer.echo(json.dumps({"plugins": rows, "conflicts": registry.conflicts}, indent=2))
    else:
        for p in rows:
            what = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(p["registers"].items())) or "nothing"
            dist = f"{p['distribution'] or '?'} {p['version'] or ''}".strip()
            status = (f"DISABLED by {p['disabled_by']}" if p["disabled_by"]
                      else f"BROKEN: {p['error']}" if p["error"] else what)
            typer.echo(f"{p['name']:<36} {p['source']:<12} {dist:<24} {status}")
        for c in registry.conflicts:
            typer.echo(f"CONFLICT: {c}")
    raise typer.Exit(ExitCode.USAGE if registry.conflicts else ExitCode.OK)
