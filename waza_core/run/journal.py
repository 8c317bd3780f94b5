"""The run journal (``waza run --journal PATH``) and resuming from it (``--resume PATH``).

A journal is a JSON Lines file the driver appends to as runs finish, so a crash of
the driver (Ctrl-C, a closed laptop, ``kill -9``, a lost CI machine) costs only the
runs that were in flight. Its first line names the suite; every other line is one
finished run::

    {"waza_journal": 1, "suite": "<sha256>", "eval_name": "...", "settings": {...}, "created": "..."}
    {"task_id": "t1", "trial": 1, "model": "m", "run": {<the run, as in the results file>}}

A run of the second pass of an A/B run (``--baseline``: the suite without its skills)
carries ``"pass": "baseline"`` as well.

**Durability.** Each line is one ``write`` of the whole line to a file opened with
``O_APPEND``: once ``write`` returns, the line is in the operating system's hands and
survives the death of the waza process, ``SIGKILL`` included. Surviving a crash of the
machine needs ``fdatasync``, which costs a disk flush; the journal does it at most
once every :data:`SYNC_INTERVAL` seconds and when it is closed, so a power cut loses
at most that much more, and a 100,000-run suite does not pay a flush per run.

**Resume.** :func:`resume` reads a journal back: the suite fingerprint on the first
line must be this suite's (a journal of another suite, or of a suite edited since, is
exit 2), and the settings that change what a run means (executor, model, judge model,
``--skip-graders``) must match. A last line without its newline is a write the crash
cut short: it is ignored, and cut off the file before appending resumes. The runs read
back go to :attr:`waza_core.run.engine.Engine.prior`, so only the missing runs run; every
line is checked before anything runs, but only where each run's line is, is kept (the
runs are decoded again one at a time as they are aggregated: memory does not grow with
the number of runs the journal holds).

The journal is written under the rules of every file waza writes: a regular file is
appended to and keeps its mode, a FIFO or a character device is written to directly,
anything else is refused; a journal is never replaced. One journal, one writer: the
file is locked (``flock``) while a run appends to it.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from waza_core import untrusted
from waza_core.errors import WazaError
from waza_core.results.codec import decode_run_strictly, run_to_json
from waza_core.run.backend import CompletedRun
from waza_core.run.plan import RunUnit

#: the ``waza_journal`` value of the first line of the journals this version writes
JOURNAL_VERSION = 1
#: at most this many seconds between two flushes to disk (``fdatasync``)
SYNC_INTERVAL = 1.0
#: the longest journal line read back (a run with its transcript); a longer one is exit 2
MAX_LINE_BYTES = 64 * 1024 * 1024
#: the settings that must be equal to resume a journal: they change what a run means
CHECKED_SETTINGS = ("executor", "model", "judge_model", "skip_graders", "baseline")


def suite_fingerprint(suite) -> str:
    """A SHA-256 of what defines the suite's runs: eval.yaml and every task file, as loaded.

    It does not depend on which tasks a run selects (``--task``, ``--tags``), so a run
    can be resumed with another selection. The content of input files, fixture
    folders and grader programs is not part of it (reading them could take longer
    than the run): docs/distributed.md says so.

    The hash is of ``json.dumps({"suite": ..., "tasks": {id: document}}, sort_keys=True,
    default=str, ensure_ascii=False)``, fed to it one task at a time: the same value as
    hashing that text whole (journals of earlier versions still resume), without ever
    holding every task's document at once (a 100,000-task suite's documents take more
    memory than the rest of the run)."""
    digest = hashlib.sha256()
    digest.update(b'{"suite": ' + _canonical(suite.raw) + b', "tasks": {')
    by_id = {t.id: t for t in suite.tasks}  # a dict keeps the last task of an id, as the text did
    for i, task_id in enumerate(sorted(by_id)):
        digest.update(b"%s%s: %s" % (b", " if i else b"", _canonical_key(task_id), _canonical(by_id[task_id].raw)))
    digest.update(b"}}")
    return digest.hexdigest()


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _canonical_key(key: Any) -> bytes:
    """A mapping key as json.dumps writes it (a task id is a string; anything else is
    written as json turns it into one: ``true``, ``null``, ``1.5``)."""
    if not isinstance(key, str):
        key = json.loads(json.dumps({key: 0})).popitem()[0]
    return _canonical(key)


def header(suite, fingerprint: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The first line of a new journal."""
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    return {"waza_journal": JOURNAL_VERSION, "suite": fingerprint, "eval_name": suite.name,
            "settings": settings, "created": created}


#: the ``pass`` of a run of an A/B run's second pass (without skills); the first has none
BASELINE_PASS = "baseline"


def entry(done: CompletedRun, baseline: bool = False) -> bytes:
    """One journal line: the run's unit (and pass) and the run as the results file has it."""

    line: dict[str, Any] = {"task_id": done.unit.task_id, "trial": done.unit.trial, "model": done.unit.model}
    if baseline:
        line["pass"] = BASELINE_PASS
    line["run"] = run_to_json(done.run)
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")


def check_new_target(path: Path) -> None:
    """``--journal PATH``: fail before running when PATH could not take a new journal."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = path.absolute().parent
        if not parent.is_dir():
            raise WazaError(f"--journal {path}: folder {parent} does not exist") from None
        if not os.access(parent, os.W_OK | os.X_OK):
            raise WazaError(f"--journal {path}: folder {parent} is not writable") from None
        return
    except OSError as exc:
        raise WazaError(f"--journal {path}: {exc.strerror}") from None
    _check_kind(path, st, "--journal")
    if stat.S_ISREG(st.st_mode) and st.st_size > 0:
        raise WazaError(f"--journal {path}: the file exists; continue that run with --resume {path}, "
                        "or remove the file")
    if not os.access(path, os.W_OK):
        raise WazaError(f"--journal {path}: the file is not writable")


def check_resume_target(path: Path) -> None:
    """``--resume PATH``: an existing, readable and writable regular file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise WazaError(f"--resume {path}: no such journal (start one with --journal {path})") from None
    except OSError as exc:
        raise WazaError(f"--resume {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise WazaError(f"--resume {path}: not a regular file (a journal to resume must be read back)")
    if not os.access(path, os.R_OK | os.W_OK):
        raise WazaError(f"--resume {path}: the file must be readable and writable")


def _check_kind(path: Path, st: os.stat_result, flag: str) -> None:
    mode = st.st_mode
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return
    what = "a folder" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode) else \
        "a block device" if stat.S_ISBLK(mode) else "not a regular file"
    raise WazaError(f"{flag} {path}: {what}; name a file")


class Journal:
    """An open journal: :meth:`append` each finished run, :meth:`close` at the end."""

    def __init__(self, path: Path, fd: int, regular: bool) -> None:
        self.path = path
        self.fd = fd
        self.regular = regular
        self.last_sync = time.monotonic()
        self.unsynced = False

    # -- opening ------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, first_line: dict[str, Any]) -> Journal:
        """A new journal at ``path`` (a new or empty file, a FIFO, a character device)."""
        journal = cls._open(path, create=True)
        try:
            if journal.regular and os.fstat(journal.fd).st_size > 0:  # appeared since the check
                raise WazaError(f"--journal {path}: the file exists; continue that run with --resume {path}")
            journal._write(json.dumps(first_line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            journal._sync()
        except BaseException:
            journal.close()
            raise
        return journal

    @classmethod
    def _open(cls, path: Path, create: bool) -> Journal:
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_CLOEXEC | (os.O_CREAT if create else 0)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None:
            _check_kind(path, st, "--journal")
            if stat.S_ISFIFO(st.st_mode):
                flags |= os.O_NONBLOCK  # a FIFO without a reader: fail now, not hang
        try:
            fd = os.open(path, flags, 0o666)  # the umask applies; an existing file keeps its mode
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise WazaError(f"--journal {path}: a FIFO with no reader") from None
            raise WazaError(f"--journal {path}: cannot open: {exc.strerror}") from None
        if flags & os.O_NONBLOCK:
            os.set_blocking(fd, True)
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        if regular:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise WazaError(f"--journal {path}: another waza run is writing this journal") from None
        return cls(path, fd, regular)

    # -- writing ------------------------------------------------------------------
    def append(self, done: CompletedRun, baseline: bool = False) -> None:
        """Record one finished run (called by the engine before it aggregates the run);
        ``baseline``: a run of an A/B run's second pass."""
        self._write(entry(done, baseline))
        self.unsynced = True
        if self.regular and time.monotonic() - self.last_sync >= SYNC_INTERVAL:
            self._sync()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.fd, view)
            except InterruptedError:
                continue
            except OSError as exc:
                raise WazaError(f"cannot write the journal {self.path}: {exc.strerror}") from None
            view = view[n:]

    def _sync(self) -> None:
        if self.regular:
            try:
                os.fdatasync(self.fd)
            except OSError:
                pass  # a file system without flushes: the write itself already happened
        self.last_sync = time.monotonic()
        self.unsynced = False

    def close(self) -> None:
        if self.fd < 0:
            return
        try:
            if self.unsynced:
                self._sync()
        finally:
            os.close(self.fd)  # also releases the lock
            self.fd = -1


def resume(path: Path, fingerprint: str, settings: dict[str, Any]) -> tuple[Journal, PriorRuns]:
    """Open the journal at ``path`` to go on appending; the runs it holds.

    Raises WazaError (exit 2) for a file that is not a journal, the journal of another
    suite or of other settings, or a damaged line before the last."""
    journal = Journal._open(path, create=False)
    try:
        runs, keep = read(path, fingerprint, settings)
        if keep is not None:  # cut off a line a crash tore, so the next line starts clean
            os.ftruncate(journal.fd, keep)
    except BaseException:
        journal.close()
        raise
    return journal, runs


def read(path: Path, fingerprint: str, settings: dict[str, Any]) -> tuple[PriorRuns, int | None]:
    """The runs of the journal at ``path`` (first of each unit), and the length to cut the
    file to when its last line is torn (else None).

    Every line is read and checked now, so a damaged journal is exit 2 before anything
    runs; what is kept of each run is only where its line is: the runs are decoded again,
    one at a time, as the engine aggregates them (:class:`PriorRuns`), so resuming a
    journal of 100,000 runs does not hold 100,000 transcripts (~3 KB each) at once."""
    spans = array("q")  # offset, length, line number and pass (1: baseline) of the first line of each unit
    seen: set[tuple[str, int, str, bool]] = set()
    complete = 0  # bytes up to the end of the last complete line
    try:
        with untrusted.open_regular(path, follow=True) as fh:
            for number, raw in untrusted.iter_lines(fh, limit=MAX_LINE_BYTES, where=str(path)):
                if not raw.endswith(b"\n"):
                    break  # a write the crash cut short: ignored, cut off by resume()
                start, complete = complete, complete + len(raw)
                if number == 1:
                    _check_header(path, raw, fingerprint, settings)
                    continue
                key, baseline, _run = _entry(path, number, raw)
                if (*key, baseline) not in seen:
                    seen.add((*key, baseline))
                    spans.extend((start, len(raw), number, baseline))
            size = fh.tell()
    except untrusted.UntrustedInput as exc:
        raise WazaError(f"--resume {exc}") from None
    except OSError as exc:
        raise WazaError(f"--resume {path}: cannot read: {exc.strerror}") from None
    if complete == 0:
        raise WazaError(f"--resume {path}: not a waza run journal (no first line)")
    return PriorRuns(path, spans), complete if complete < size else None


class PriorRuns:
    """The runs of a resumed journal, decoded from their lines one at a time as they are
    iterated (the engine aggregates each and lets it go); :meth:`of_pass` gives those
    of one pass of an A/B run."""

    def __init__(self, path: Path, spans: array, baseline: bool | None = None) -> None:
        self.path = path
        self.spans = spans  # offset, length, line number and pass of each run's line, flat
        self.baseline = baseline  # only the runs of this pass (None: all)

    def of_pass(self, baseline: bool) -> PriorRuns:
        return PriorRuns(self.path, self.spans, baseline)

    def _chosen(self) -> Iterator[int]:
        spans, want = self.spans, self.baseline
        return (i for i in range(0, len(spans), 4) if want is None or bool(spans[i + 3]) == want)

    def __len__(self) -> int:
        return sum(1 for _ in self._chosen())

    def __iter__(self) -> Iterator[CompletedRun]:
        spans = self.spans
        try:
            with open(self.path, "rb") as fh:
                for i in self._chosen():
                    fh.seek(spans[i])
                    key, _baseline, run = _entry(self.path, spans[i + 2], fh.read(spans[i + 1]))
                    yield CompletedRun(RunUnit(*key), run)
        except OSError as exc:
            raise WazaError(f"--resume {self.path}: cannot read: {exc.strerror}") from None


def _entry(path: Path, number: int, raw: bytes) -> tuple[tuple[str, int, str], bool, Any]:
    """(unit key, of the baseline pass, run) of one journal line, checked field by field
    before the run may join a results document (docs/safety.md): strict JSON (no NaN, no
    Infinity, 64-bit integers, at most 100 levels), ``task_id`` and ``model`` strings,
    ``trial`` an integer >= 1 and not a boolean, a known ``pass``, and a run whose every
    field has its type and whose status is known. Anything else is exit 2 at FILE:LINE."""
    where = f"{path}:{number}"
    try:
        obj = untrusted.loads(raw, where)
        if not isinstance(obj, dict):
            raise untrusted.UntrustedInput(f"{where}: not a JSON object")
        key = (untrusted.field(obj, "task_id", lambda v: isinstance(v, str), "a string", where),
               untrusted.field(obj, "trial", lambda v: untrusted.is_int(v) and v >= 1, "an integer >= 1", where),
               untrusted.field(obj, "model", lambda v: isinstance(v, str), "a string", where))
        untrusted.field(obj, "pass", lambda v: v == BASELINE_PASS, repr(BASELINE_PASS), where, optional=True)
        if "run" not in obj:
            raise untrusted.UntrustedInput(f"{where}: 'run' is missing")
        run = decode_run_strictly(obj["run"], f"{where}: run")
    except untrusted.UntrustedInput as exc:
        problem = str(exc).removeprefix(f"{where}: ")
        raise WazaError(f"{where}: not a journal entry: {problem} (the journal is damaged; "
                        "remove the line to resume without it)") from None
    return key, "pass" in obj, run


def _check_header(path: Path, raw: bytes, fingerprint: str, settings: dict[str, Any]) -> None:
    try:
        head = untrusted.loads(raw, f"{path}:1")
    except untrusted.UntrustedInput:
        head = None
    if not isinstance(head, dict) or "waza_journal" not in head:
        raise WazaError(f"--resume {path}: not a waza run journal (line 1 is not its header)")
    if not untrusted.is_int(head["waza_journal"]) or head["waza_journal"] != JOURNAL_VERSION:
        raise WazaError(f"--resume {path}: journal format {head['waza_journal']!r}; "
                        f"this waza reads format {JOURNAL_VERSION}")
    if head.get("suite") != fingerprint:
        name = head.get("eval_name")
        raise WazaError(f"--resume {path}: the journal belongs to another suite"
                        f"{f' ({name!r})' if isinstance(name, str) else ''}, or the suite was edited since "
                        "(eval.yaml, a task file or an input file); start a new journal with --journal")
    written = head.get("settings") if isinstance(head.get("settings"), dict) else {}
    for key in CHECKED_SETTINGS:
        if written.get(key) != settings.get(key) and key == "baseline":
            kinds = ("an A/B run (--baseline)", "a run without --baseline")
            was, now = (kinds[0], kinds[1]) if written.get(key) else (kinds[1], kinds[0])
            raise WazaError(f"--resume {path}: the journal was written by {was}, this is {now}; "
                            "resume with the same settings")
        if written.get(key) != settings.get(key):
            raise WazaError(f"--resume {path}: the journal was written with {key} {written.get(key)!r}, "
                            f"this run has {settings.get(key)!r}; resume with the same settings")


def run_settings(engine) -> dict[str, Any]:
    """The settings of an engine's runs that a journal records and checks."""
    s = engine.prepared.settings
    judge = s.judge_model if s.judge_model is not None else engine.suite.config.judge_model
    return {"executor": s.executor, "model": s.model, "judge_model": judge, "skip_graders": s.skip_graders,
            "trials": engine.plan.trials}


class Session:
    """The journal of one ``waza run`` command, opened at its first pass and shared by
    every pass: of every model (``-m a -m b``; each run's line names its model) and both
    passes of an A/B run (the second pass's lines say ``"pass": "baseline"``). Each
    pass's engine takes from a resumed journal only the runs of its own model and pass.
    The header's ``settings.model`` is the list of models when there are several, and
    ``settings.baseline`` is true for an A/B run."""

    def __init__(self, journal_path: Path | None, resume_path: Path | None, models: list[str],
                 ab_run: bool = False) -> None:
        self.journal_path, self.resume_path, self.models, self.ab_run = journal_path, resume_path, models, ab_run
        self.journal: Journal | None = None
        self.prior: PriorRuns | None = None

    def attach(self, engine, baseline: bool = False) -> None:
        """Hook ``engine`` (of the baseline pass of an A/B run when ``baseline``) to the
        journal, opening it, new or resumed, at the first call. Without ``--journal`` or
        ``--resume`` (the common case) nothing is computed: the suite's fingerprint reads
        every task's document."""
        if self.journal_path is None and self.resume_path is None:
            return
        if self.journal is None:
            fingerprint, settings = suite_fingerprint(engine.suite), run_settings(engine)
            if len(self.models) > 1:
                settings["model"] = list(self.models)
            if self.ab_run:
                settings["baseline"] = True
            if self.resume_path is not None:
                self.journal, self.prior = resume(self.resume_path, fingerprint, settings)
            else:
                assert self.journal_path is not None
                self.journal = Journal.create(self.journal_path, header(engine.suite, fingerprint, settings))
        if self.prior is not None:  # read again by each pass's engine (PriorRuns reads the file anew)
            engine.prior = self.prior.of_pass(baseline)
        journal = self.journal
        engine.run_observers.append(lambda done: journal.append(done, baseline))

    def pass_ended(self) -> None:
        """Flush what a pass appended to disk (as closing would) before the next model's pass."""
        if self.journal is not None and self.journal.unsynced:
            self.journal._sync()

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
