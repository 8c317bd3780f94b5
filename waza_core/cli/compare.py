"""``waza compare A.json B.json [...]``: side-by-side deltas of two or more results files."""

from __future__ import annotations

from typing import List

import typer

from waza_core.cli.common import fail, user_errors


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)


@user_errors
def compare(
    files: List[str] = typer.Argument(..., help="Two or more results files (any waza version); deltas are "
                                                "last minus first."),
    output_format: str = typer.Option("table", "--format", "-f", help="table, json or markdown."),
) -> None:
    """Compare results files: per-task and summary deltas of score, pass rate, tokens and duration.

    Exit 0, or 2 on bad input (fewer than two files, an unreadable or invalid file).
    """
    # deferred: waza_core.results adds ~56.4 ms to importing this module
    from waza_core.results import compare as c

    fmt = output_format.strip().lower()
    if fmt not in ("table", "json", "markdown"):
        raise fail(f"unsupported format {output_format!r}: must be table, json or markdown")
    if len(files) < 2:
        raise fail("compare needs at least two results files")
    report = c.build_report(list(files), c.load_all(list(files)))
    if fmt == "json":
        # deferred: waza_core.results.markdown_text adds ~1.8 ms to importing this module
        from waza_core.results.markdown_text import json_text

        typer.echo(json_text(report))
    elif fmt == "markdown":
        typer.echo(c.render_markdown(report), nl=False)
    else:
        typer.echo(c.render_table(report), nl=False)
