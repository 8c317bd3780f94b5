"""Assembles the typer app from one module per command group."""

from __future__ import annotations

import typer


def _version(value: bool) -> None:
    if value:
        from waza_core._version import __version__

        typer.echo(f"waza {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    from waza_core.cli import (
        assure,
        audit,
        cache,
        compare,
        gate,
        get,
        grade,
        init,
        interop,
        migrate,
        noise,
        optimize,
        plugins_cmd,
        preflight,
        report,
        run,
        schema,
        validate,
    )

    app = typer.Typer(
        name="waza",
        help="Evaluate AI agents and skills: run eval suites, grade runs, optimize, translate assertions.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        add_completion=True,
    )

    @app.callback()
    def root(
        version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                     help="Print the version and exit."),
    ) -> None:
        """waza: a plugin-based grading framework for AI-agent evaluations."""

    run.register(app)
    grade.register(app)
    validate.register(app)
    audit.register(app)
    migrate.register(app)
    get.register(app)
    preflight.register(app)
    assure.register(app)
    schema.register(app)
    plugins_cmd.register(app)
    report.register(app)
    gate.register(app)
    compare.register(app)
    noise.register(app)
    init.register(app)
    cache.register(app)
    app.add_typer(interop.app, name="interop")
    app.add_typer(optimize.app, name="optimize")
    return app
