"""`waza optimize`: placeholder until its issue lands."""

import typer

app = typer.Typer(help="optimize commands.", no_args_is_help=True)
