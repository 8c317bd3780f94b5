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
    def kind(self) -> str:
        """``"results"`` (a results file) or ``"optimizer-report"`` (a ``waza optimize`` report.json)."""
        return "optimizer-report" if self.header.get("kind") == "waza.optimizer-report" else "results"

    @property
    def summary(self) -> dict[str, Any]:
        return self.header.get("summary") or {}

    @property
    def task_count(self) -> int:
        return len(self._document.get("tasks") or ())

    def tasks(self) -> Iterator[dict[str, Any]]:
        yield from self._document.get("tasks") or ()

    def document(self) -> dict[str, Any]:
        """The whole document, keys in their original order (for reporters that copy it)."""
        return dict(self._document)

    # Readings every reporter needs, the same way gate and compare read them; each
    # tolerates the fields older waza (Go) files lack.
    @staticmethod
    def task_score(task: Mapping[str, Any]) -> float | None:
        """``stats.avg_score``, else the mean run score; None when nothing was graded."""
        from waza_core.results.reading import task_score

        return task_score(task)

    @staticmethod
    def task_pass_rate(task: Mapping[str, Any]) -> float | None:
        from waza_core.results.reading import task_pass_rate

        return task_pass_rate(task)

    @staticmethod
    def task_flaky(task: Mapping[str, Any]) -> bool:
        """Some trials passed and some did not."""
        from waza_core.results.reading import task_flaky

        return task_flaky(task)

    @staticmethod
    def run_score(run: Mapping[str, Any]) -> float | None:
        from waza_core.results.reading import run_score

        return run_score(run)

    @staticmethod
    def failed_graders(run: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """``(name, validation)`` of each grader of ``run`` that did not pass, by name."""
        from waza_core.results.reading import failed_graders

        return failed_graders(run)


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
    #: the document kinds this reporter can write (:attr:`ResultsView.kind`)
    accepts: ClassVar[frozenset[str]] = frozenset({"results"})

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options: dict[str, str] = dict(options or {})

    def check_options(self) -> list[str]:
        """Problems with the options (each printed, exit 2); empty when fine."""
        known = sorted(self.option_help)
        return [f"reporter {self.name!r} has no option {key!r}; known: {', '.join(known) or 'none'}"
                for key in self.options if key not in self.option_help]

    def option_flag(self, key: str, default: bool = False) -> bool:
        """A true/false option; raises ValueError (shown as a usage error) for anything else."""
        value = self.options.get(key)
        if value is None:
            return default
        low = value.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"reporter {self.name!r} option {key!r} must be true or false, not {value!r}")

    def option_int(self, key: str, default: int, minimum: int = 0) -> int:
        """A whole-number option of at least ``minimum``; raises ValueError otherwise."""
        value = self.options.get(key)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise ValueError(f"reporter {self.name!r} option {key!r} must be a whole number >= {minimum}, "
                             f"not {value!r}")
        return number

    def write(self, results: ResultsView, out: IO[bytes]) -> None:  # pragma: no cover - interface
        """Write the whole report to ``out``."""
        raise NotImplementedError
