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
    options: bool = typer.Option(False, "--options",
                                 help="List the options each optimizer adapter, reporter and executor declares."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """List every plugin: name, distribution, version, what it registers, and broken or disabled ones.

    Exit 0, or 2 when two plugins register the same name (listed as CONFLICT lines).
    """
    # deferred: json adds ~2.6 ms to importing this module
    import json

    # deferred: attrs adds ~34.1 ms to importing this module
    import attrs

    # deferred: waza_core.errors adds ~0.7 ms to importing this module
    from waza_core.errors import ExitCode
    from waza_core.plugins import get_registry

    registry = get_registry(plugin).load_all()  # every plugin listed, built-ins are loaded when asked for
    if options:
        _print_options(registry, as_json)
        raise typer.Exit(ExitCode.OK)
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


#: plugin kind -> how its options are given
_OPTION_SYNTAX = {
    "optimizer_adapter": "waza optimize run --adapter NAME --adapter-option KEY=VALUE",
    "reporter": "--reporter-option NAME.KEY=VALUE",
    "executor": "keys of eval.yaml",
}


def declared_options(registry) -> list[dict]:
    """Every declared plugin option: adapters' and reporters' ``option_help``, and the
    top-level keys of each executor's ``config_schema`` (with their ``description``)."""
    found = []
    for kind in _OPTION_SYNTAX:
        for name in registry.names(kind):
            cls = registry.get(kind, name)
            if kind == "executor":
                if not cls.config_key:
                    continue
                props = cls.config_schema.get("properties") or {}
                opts = {f"config.{cls.config_key}.{key}": _describe(spec)
                        for key, spec in props.items() if isinstance(spec, dict)}
            else:
                opts = dict(cls.option_help)
            found.append({"kind": kind, "name": name, "syntax": _OPTION_SYNTAX[kind], "options": opts})
    return found


def _describe(spec: dict) -> str:
    if spec.get("description"):
        return str(spec["description"])
    if "enum" in spec:
        return "one of: " + ", ".join(map(str, spec["enum"]))
    return str(spec.get("type") or "")


def _print_options(registry, as_json: bool) -> None:
    # deferred: json adds ~2.6 ms to importing this module
    import json

    found = declared_options(registry)
    if as_json:
        typer.echo(json.dumps({"options": found}, indent=2))
        return
    for entry in found:
        human = entry["kind"].replace("_", " ")
        typer.echo(f"{human} {entry['name']} ({entry['syntax']})")
        width = max((len(k) for k in entry["options"]), default=0)
        for key, text in entry["options"].items():
            typer.echo(f"  {key:<{width}}  {text}")
        if not entry["options"]:
            typer.echo("  (no options)")
