"""Reading an option's value the way click does, for the commands :mod:`waza_core.cli`
runs before typer is imported (``validate``, ``run``: see their modules for why)."""

from __future__ import annotations

from collections.abc import Container, Iterator

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


def plain_words(args: list[str], flags: Container[str], values: Container[str]) -> tuple[str, list] | None:
    """The one path and the options of a plain command line, in order: ``(name, None)`` for a
    flag of ``flags``, ``(name, value)`` for an option of ``values`` (``--name=value`` or
    ``--name value``). None for anything else (an unknown or bundled option, ``--``, a
    missing value, no path or two), which typer then parses and reports."""
    path: str | None = None
    found: list[tuple[str, str | None]] = []
    words = iter(args)
    for word in words:
        value = option_value(word, words, values)
        if word in flags:
            found.append((word, None))
        elif value is NOT_PLAIN:
            return None
        elif isinstance(value, str):
            found.append((word.partition("=")[0], value))
        elif word.startswith("-") or path is not None:
            return None
        else:
            path = word
    return None if path is None else (path, found)
