"""``waza grade``: placeholder until the offline-grading issue lands."""

import typer


def register(app: typer.Typer) -> None:
    pass
