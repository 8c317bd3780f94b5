"""The reporter interface: an output format for a finished run (JUnit, markdown, HTML).

A reporter is a plugin registered through ``waza_register_reporters``. It reads a
results document through a :class:`ResultsView` and writes its bytes to a binary
stream the core opened; the core decides where the bytes go (a file written
atomically, a FIFO, stdout), so every reporter gets the same safe file handling for
free. ``waza run --reporter NAME[:PATH]`` and ``waza report RESULTS.json`` drive the
same code, so a report of a saved file and of a live run are the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any, ClassVar


class ResultsView:
    """A results document (the shape of ``waza schema results``) as a reporter reads it.

    ``header`` is every top-level field but ``tasks``; :meth:`tasks` yields the task
    entries in order. Reporters should not need every task at once: the view may be
    backed by a file on disk for very large runs.
    """

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document
        self.header: dict[str, Any] = {k: v for k, v in document.items() if k != "tasks"}

    @property
    def summary(self) -> dict[str, Any]:
        return self.header.get("summary") or {}

    @property
    def task_count(self) -> int:
        return len(self._document.get("tasks") or ())

    def tasks(self) -> Iterator[dict[str, Any]]:
        yield from self._document.get("tasks") or ()


class Reporter:
    """Base class for reporters. Subclasses set ``name`` and implement :meth:`write`.

    ``option_help`` declares the options the reporter accepts (``--reporter-option
    NAME.KEY=VALUE`` on the command line), each with one line of help; any other key
    is refused before the run starts.
    """

    name: ClassVar[str] = ""
    #: one line for ``waza plugins``
    summary: ClassVar[str] = ""
    #: the usual file suffix of this kind of report (``.xml``, ``.md``, ``.html``)
    suffix: ClassVar[str] = ""
    #: option key -> one line of help
    option_help: ClassVar[Mapping[str, str]] = {}

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options: dict[str, str] = dict(options or {})

    def check_options(self) -> list[str]:
        """Problems with the options (each printed, exit 2); empty when fine."""
        known = sorted(self.option_help)
        return [f"reporter {self.name!r} has no option {key!r}; known: {', '.join(known) or 'none'}"
                for key in self.options if key not in self.option_help]

    def write(self, results: ResultsView, out: IO[bytes]) -> None:  # pragma: no cover - interface
        """Write the whole report to ``out``."""
        raise NotImplementedError
