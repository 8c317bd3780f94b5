"""``waza migrate``: bring eval suites to the newest schema form (see waza_core.suite.migrate)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from waza_core.cli.common import user_errors


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)


@user_errors
def migrate(
    files: List[Path] = typer.Argument(..., help="eval.yaml files (or suite folders) and results JSON files."),
    check: bool = typer.Option(False, "--check",
                               help="Change nothing; exit 1 when a file needs migrating (for CI)."),
) -> None:
    """Rewrite older eval suites (eval.yaml and the task files it loads) to the newest form,
    keeping comments and layout: schemaVersion, old grader kinds (regex, keyword -> text),
    keys waza dropped; results files to schemaVersion 1.8. Each change is listed.

    Exit 0 when every file is current (or was migrated), 1 with --check when one needs
    migrating, 2 on an unreadable file or another major version.
    """
    # deferred: waza_core.paths adds ~0.3 ms to importing this module
    from waza_core.paths import display_path
    from waza_core.suite import migrate as mig

    plans = [m for f in files for m in mig.plan_suite(f)]  # all checked before anything is written
    pending = 0
    for m in plans:
        name = display_path(m.file)
        for note in m.notes:
            typer.echo(f"{name}: note: {note}")
        if not m.needed and m.kind == "task":
            continue
        if not m.needed:
            typer.echo(f"{name} is already compatible with schemaVersion {m.target}; no migration needed.")
            continue
        pending += 1
        to = f" to schemaVersion {m.target}" if m.kind != "task" else ""
        if check:
            typer.echo(f"{name}: needs migration{to}:")
        else:
            mig.write(m)
            typer.echo(f"{name}: migrated{to}:")
        for change in m.changes:
            typer.echo(f"  - {change}")
    if check and pending:
        typer.echo(f"waza: {pending} file(s) need migrating; run: waza migrate "
                   + " ".join(display_path(f) for f in files), err=True)
        # deferred: waza_core.errors adds ~0.6 ms to importing this module
        from waza_core.errors import ExitCode

        raise typer.Exit(ExitCode.FAILED)
