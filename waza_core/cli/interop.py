"""`waza interop`: placeholder until its issue lands."""

import typer

app = typer.Typer(help="interop commands.", no_args_is_help=True)
