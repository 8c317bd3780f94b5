"""`waza COMMAND ...` builds an app of that command alone (typer builds a click command for each
registered command on every start): it must be the same command the full app has."""

from __future__ import annotations

import typer

from waza_core.cli.app import COMMANDS, build_app


def _describe(command) -> dict:
    """What a user meets of a command: its parameters, help, and its sub-commands, recursively."""
    out = {"params": [(p.name, tuple(p.opts), tuple(p.secondary_opts), p.required, repr(p.default), p.help
                       if hasattr(p, "help") else None) for p in command.params],
           "help": command.help}
    subs = getattr(command, "commands", None)
    if subs is not None:
        out["commands"] = {name: _describe(sub) for name, sub in sorted(subs.items())}
    return out


def test_every_command_is_the_same_alone_and_in_the_full_app():
    full = typer.main.get_command(build_app())
    listed = set(full.commands)
    assert set(COMMANDS) == listed  # a new command module must be added to COMMANDS
    for name in COMMANDS:
        alone = typer.main.get_command(build_app(name))
        assert set(alone.commands) >= {name}
        assert _describe(alone.commands[name]) == _describe(full.commands[name]), name
        assert _describe(alone)["params"] == _describe(full)["params"]  # --version and completion


def test_an_unknown_or_absent_command_gets_every_command(waza):
    for argv in ([], ["rn"], ["--version"]):
        assert set(typer.main.get_command(build_app(argv[0] if argv else None)).commands) == set(COMMANDS)
    proc = waza("rn", "x")
    assert proc.returncode == 2
    err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
    assert "No such command 'rn'" in err and "Did you mean 'run'?" in err
