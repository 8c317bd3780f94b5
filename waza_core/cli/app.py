"""Assembles the typer app from one module per command group."""

from __future__ import annotations

import importlib

import typer

from waza_core._version import __version__


def _version(value: bool) -> None:
    if value:

        typer.echo(f"waza {__version__}")
        raise typer.Exit()


#: the command modules, in the order ``waza --help`` lists their commands; a module registers
#: its command(s) with ``register(app)``, or is a typer sub-app (``interop``, ``optimize``)
_MODULES = ("run", "grade", "validate", "audit", "migrate", "get", "preflight", "assure", "schema", "plugins_cmd",
            "report", "gate", "compare", "noise", "init", "cache", "interop", "optimize")
_SUB_APPS = ("interop", "optimize")
#: the module of each command a command line can start with
COMMANDS = {**{m: m for m in _MODULES if m != "plugins_cmd"}, "plugins": "plugins_cmd", "new": "init"}


def build_app(command: str | None = None) -> typer.Typer:
    """The ``waza`` app; with ``command`` (one of :data:`COMMANDS`), an app of that command alone.

    Typer turns every registered command into a click command on each start, reading each
    function's signature and type hints (~30 ms for all of them), and each command module
    imports what its command needs. A command line that names its command only needs that
    one; everything else (``waza``, ``waza --help``, an unknown command) gets every command,
    so the usage and "No such command" messages list them all."""
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

    for name in (COMMANDS[command],) if command in COMMANDS else _MODULES:
        module = importlib.import_module(f"waza_core.cli.{name}")
        if name in _SUB_APPS:
            app.add_typer(module.app, name=name)
        else:
            module.register(app)
    return app
