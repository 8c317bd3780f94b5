"""Reading an option's value the way click does, for the commands :mod:`waza_core.cli`
runs before typer is imported (``validate``, ``run``: see their modules for why)."""

from __future__ import annotations

from collections.abc import Iterator

#: a word that is not a plain option of the command (typer must parse the line)
NOT_PLAIN = object()


def option_value(word: str, words: Iterator[str], names: object) -> str | None | object:
    """The value of option ``word`` if its name is in ``names``: ``--name=value`` (long
    names only: click reads ``-o=x`` as the value ``=x``) or ``--name value`` / ``-o
    value`` (the next word, whatever it starts with, as click takes it). None when the
    word is not one of ``names``; :data:`NOT_PLAIN` when it is but has no value."""
    name, eq, value = word.partition("=")
    if name not in names or not (eq and name.startswith("--") or word == name):  # type: ignore[operator]
        return None
    if eq:
        return value
    following = next(words, None)
    return NOT_PLAIN if following is None else following
