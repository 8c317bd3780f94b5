"""The reporter interface: an output format for a finished run (JUnit, markdown, HTML).

A reporter is a plugin registered through ``waza_register_reporters``. It reads a
results document through a :class:`ResultsView` and writes its bytes to a binary
stream the core opened; the core decides where the bytes go (a file written
atomically, a FIFO, stdout), so every reporter gets the same safe file handling for
free. ``waza run --reporter NAME[:PATH]`` and ``waza report RESULTS.json`` drive the
same code, so a report of a saved file and of a live run are the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, ClassVar

from waza_core.results import reading, triage
from waza_core.results.jsonbytes import dumps

if TYPE_CHECKING:
    from waza_core.results.outline import Outline


def _json_bytes(document: Mapping[str, Any]) -> bytes | None:
    """The results-file bytes of ``document`` (what ``waza run`` writes, see
    :mod:`waza_core.results.jsonbytes`); None when strict JSON in UTF-8 cannot hold it."""
    try:
        return dumps(document)
    except (TypeError, ValueError):  # not JSON values; a lone surrogate (UnicodeEncodeError)
        return None


class ResultsView:
    """A results document (the shape of ``waza schema results``) as a reporter reads it.

    ``header`` is every top-level field but ``tasks``; :meth:`tasks` yields the task
    entries in order. A view of a saved file (``waza report``) keeps the file's bytes and
    reads the whole document only when a reporter first asks for it; :meth:`outline`
    gives a light summary of every task plus each task's JSON text as it is in the file,
    which is all the HTML reporter needs.
    """

    def __init__(self, document: Mapping[str, Any] | None = None, *, source: bytes | None = None,
                 outline: Outline | None = None, load: Callable[[], Mapping[str, Any]] | None = None,
                 streamed: Any = None) -> None:
        if document is None and load is None:
            raise TypeError("ResultsView needs a document or a way to load one")
        #: a :class:`~waza_core.results.stream.StreamedResults` of the file: then ``header``,
        #: ``task_count`` and ``tasks()`` read it one task at a time, in bounded memory
        self._streamed = streamed
        self._document = document
        self._load = load
        self._source = source
        self._outline: Outline | None | bool = outline if outline is not None else False

    def _doc(self) -> Mapping[str, Any]:
        if self._document is None:
            assert self._load is not None
            self._document = self._load()
        return self._document

    @property
    def header(self) -> dict[str, Any]:
        header = getattr(self, "_header", None)
        if header is None and self._streamed is not None and self._document is None:
            header = self._header = self._streamed.header
        if header is None:
            header = self._header = {k: v for k, v in self._doc().items() if k != "tasks"}
        return header

    @property
    def kind(self) -> str:
        """``"results"`` (a results file) or ``"optimizer-report"`` (a ``waza optimize`` report.json)."""
        if self._document is None and self._outline:
            return "results"  # an outline is only ever made of a results file
        return "optimizer-report" if self.header.get("kind") == "waza.optimizer-report" else "results"

    @property
    def summary(self) -> dict[str, Any]:
        return self.header.get("summary") or {}

    @property
    def task_count(self) -> int:
        if self._streamed is not None and self._document is None:
            return len(self._streamed)
        return len(self._doc().get("tasks") or ())

    def tasks(self) -> Iterator[dict[str, Any]]:
        """The tasks in order; of a streamed file, decoded one at a time (keep only what you need)."""
        if self._streamed is not None and self._document is None:
            yield from self._streamed.tasks()
            return
        yield from self._doc().get("tasks") or ()

    def document(self) -> dict[str, Any]:
        """The whole document, keys in their original order (for reporters that copy it)."""
        return dict(self._doc())

    def outline(self) -> Outline | None:
        """The light reading of the document (see :mod:`waza_core.results.outline`), or None
        when it has none (a document only Python's JSON can carry, an unusual shape, an
        optimizer report): then read :attr:`header` and :meth:`tasks`. A view of a live run
        makes it from the bytes the results file has (``results_json_bytes``), so a report
        of a run and of its saved file are the same bytes."""
        if self._outline is False:
            # deferred: waza_core.results.outline adds ~60.7 ms to importing this module
            from waza_core.results.outline import outline

            self._outline = None
            if self.kind == "results":
                data = self._source if self._source is not None else _json_bytes(self._doc())
                if data is not None:
                    self._outline = outline(data, "results")
        return self._outline  # type: ignore[return-value]

    # Readings every reporter needs, the same way gate and compare read them; each
    # tolerates the fields older waza (Go) files lack. They are the functions of
    # waza_core.results.reading themselves: a report calls them for every run.
    #: ``stats.avg_score``, else the mean run score; None when nothing was graded
    task_score = staticmethod(reading.task_score)
    #: ``stats.pass_rate``, else the share of graded runs that passed; None when none was graded
    task_pass_rate = staticmethod(reading.task_pass_rate)
    #: some trials passed and some did not
    task_flaky = staticmethod(reading.task_flaky)
    #: the mean of a run's grader scores; None when ungraded
    run_score = staticmethod(reading.run_score)
    #: input + output tokens of one run, from whichever field its writer used; None when unknown
    run_tokens = staticmethod(reading.run_tokens)
    #: ``(name, validation)`` of each grader of a run that did not pass, by name
    failed_graders = staticmethod(reading.failed_graders)
    #: the failure-triage ``{"category", "reason"}`` of a run (its ``triage`` field, else
    #: worked out from its status and grader errors), None for a real pass: docs/triage.md
    run_triage = staticmethod(triage.of_run_json)
    #: a :class:`~waza_core.results.triage.Tally` to pass the tasks through (``watch``):
    #: runs and tasks per category, with the next action of each (``groups()``)
    triage_tally = staticmethod(triage.new_tally)


class Reporter:
    """Base class for reporters. Subclasses set ``name`` and implement :meth:`write`.

    ``option_help`` declares the options the reporter accepts (``--reporter-option
    NAME.KEY=VALUE`` on the command line), each with one line of help; any other key
    is refused before the run starts. Options declared in ``int_options`` or
    ``flag_options`` are checked too, and read with :meth:`option_int` and
    :meth:`option_flag` by key alone.
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
    #: whole-number options: key -> (default, minimum)
    int_options: ClassVar[Mapping[str, tuple[int, int]]] = {}
    #: true/false options: key -> default
    flag_options: ClassVar[Mapping[str, bool]] = {}

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options: dict[str, str] = dict(options or {})

    def check_options(self) -> list[str]:
        """Problems with the options (each printed, exit 2); empty when fine."""
        known = sorted(self.option_help)
        problems = [f"reporter {self.name!r} has no option {key!r}; known: {', '.join(known) or 'none'}"
                    for key in self.options if key not in self.option_help]
        for key in [*self.int_options, *self.flag_options]:
            try:
                self.option_int(key) if key in self.int_options else self.option_flag(key)
            except ValueError as exc:
                problems.append(str(exc))
        return problems

    def option_flag(self, key: str, default: bool | None = None) -> bool:
        """A true/false option; raises ValueError (shown as a usage error) for anything else.
        ``default``: the one in ``flag_options``, else false."""
        value = self.options.get(key)
        if value is None:
            return self.flag_options.get(key, False) if default is None else default
        low = value.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"reporter {self.name!r} option {key!r} must be true or false, not {value!r}")

    def option_int(self, key: str, default: int | None = None, minimum: int | None = None) -> int:
        """A whole-number option of at least ``minimum``; raises ValueError otherwise.
        ``default`` and ``minimum``: those in ``int_options``, else 0."""
        declared_default, declared_minimum = self.int_options.get(key, (0, 0))
        default = declared_default if default is None else default
        minimum = declared_minimum if minimum is None else minimum
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
