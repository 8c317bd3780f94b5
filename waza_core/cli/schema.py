"""``waza schema NAME``: print a shipped JSON Schema."""

from __future__ import annotations

from typing import List

import typer

from waza_core.cli.common import PLUGIN_OPTION_HELP, user_errors


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_cmd)


@user_errors
def schema_cmd(
    name: str = typer.Argument(..., help="eval, task, results, or an optimizer contract schema."),
    plugin: List[str] = typer.Option([], "-p", "--plugin", help=PLUGIN_OPTION_HELP),
) -> None:
    """Print a JSON Schema. `eval` and `task` include the config schemas of the loaded graders."""
    # deferred: json adds ~4.2 ms to importing this module
    import json

    # deferred: waza_core.errors adds ~0.6 ms to importing this module
    from waza_core.errors import WazaError
    from waza_core.suite import schema

    names = schema.available()
    if name not in names:
        raise WazaError(f"unknown schema {name!r}; available: {', '.join(names)}")
    if name in ("eval", "task"):
        # deferred: waza_core.plugins adds ~26.7 ms to importing this module
        from waza_core.plugins import get_registry

        doc = schema.composed(name, get_registry(plugin))
    else:
        doc = schema.load(name)
    typer.echo(json.dumps(doc, indent=2))
