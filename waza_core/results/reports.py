"""Driving reporters: ``--reporter NAME[:PATH]``, ``--reporter-option NAME.KEY=VALUE``.

Every request is checked before a run starts (unknown reporter, unknown option, two
reports to one file, two to stdout, a folder that does not exist), so a typo costs
nothing. Each reporter then writes into a stream the core opened: a regular or new
file is written atomically (temporary sibling, fsync, rename; an existing file keeps
its mode), a symlink is written through, a FIFO or character device is written to
directly, and ``-`` is stdout. When stdout carries machine output, everything else
that would go there is moved to stderr (:func:`machine_stdout`), so
``waza run -o - | jq`` and ``waza report r.json --reporter markdown | ...`` work.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import attrs

from waza_core.errors import WazaError
from waza_core.results.reporting import Reporter, ResultsView

STDOUT = "-"


@attrs.define
class ReportRequest:
    reporter: Reporter
    target: str  # a path, or "-" for stdout

    @property
    def label(self) -> str:
        return f"{self.reporter.name}:{self.target}"


def parse_requests(specs: list[str], option_specs: list[str], registry,
                   taken: dict[str, str] | None = None) -> list[ReportRequest]:
    """Build and check every requested report; raise one WazaError naming all problems.

    ``taken`` maps targets already in use (the ``-o`` results file) to what uses them.
    """
    problems: list[str] = []
    options: dict[str, dict[str, str]] = {}
    for spec in option_specs:
        name, dot, rest = spec.partition(".")
        key, eq, value = rest.partition("=")
        if not (name and dot and key and eq):
            problems.append(f"--reporter-option {spec!r}: expected NAME.KEY=VALUE, e.g. junit.output=true")
            continue
        options.setdefault(name, {})[key] = value
    requests: list[ReportRequest] = []
    used = dict(taken or {})
    for spec in specs:
        name, _, target = spec.partition(":")
        target = target or STDOUT
        if not name:
            problems.append(f"--reporter {spec!r}: expected NAME[:PATH], e.g. junit:results.xml")
            continue
        cls = registry.get("reporter", name)
        if cls is None:
            problems.append(f"--reporter {spec!r}: {registry.unknown('reporter', name)}")
            continue
        reporter = cls(options.get(name, {}))
        problems.extend(reporter.check_options())
        key = target if target == STDOUT else str(Path(target).absolute())
        if key in used:
            where = "stdout" if target == STDOUT else target
            problems.append(f"--reporter {spec!r}: {where} is already written by {used[key]}")
            continue
        used[key] = f"--reporter {spec}"
        if target != STDOUT:
            problem = _check_target(target)
            if problem:
                problems.append(f"--reporter {spec!r}: {problem}")
        requests.append(ReportRequest(reporter, target))
    requested = {r.reporter.name for r in requests}
    for name in sorted(set(options) - requested - {s.partition(":")[0] for s in specs}):
        problems.append(f"--reporter-option {name}.{next(iter(options[name]))}: no --reporter {name} was given")
    problems = list(dict.fromkeys(problems))
    if problems:
        raise WazaError("; ".join(problems))
    return requests


def check_kind(requests: list[ReportRequest], view: ResultsView, source: str) -> None:
    """Refuse, before writing anything, a reporter that cannot write this kind of document."""
    wrong = [r.reporter.name for r in requests if view.kind not in r.reporter.accepts]
    if wrong:
        what = "a `waza optimize` report" if view.kind == "optimizer-report" else "a results file"
        raise WazaError(f"{source} is {what}; reporter(s) {', '.join(wrong)} cannot write a report of it")


def _check_target(target: str) -> str | None:
    path = Path(target)
    if path.is_dir():
        return f"{target} is a folder; give a file name"
    parent = path.absolute().parent
    if not parent.is_dir():
        return f"folder {parent} does not exist"
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        return f"folder {parent} is not writable"
    return None


def write_requests(requests: list[ReportRequest], view: ResultsView, stdout: IO[bytes] | None = None) -> list[str]:
    """Write every report; return one line per report that failed (the others are still written)."""
    failures = []
    for request in requests:
        try:
            if request.target == STDOUT:
                out = stdout if stdout is not None else sys.stdout.buffer
                _write_with(request.reporter, view, out)
                out.flush()
            else:
                write_target(request.target, lambda fh, r=request.reporter: _write_with(r, view, fh))
        except WazaError as exc:
            failures.append(f"report {request.label}: {exc}")
    return failures


def _write_with(reporter: Reporter, view: ResultsView, out: IO[bytes]) -> None:
    try:
        reporter.write(view, out)
    except WazaError:
        raise
    except OSError as exc:
        raise WazaError(f"cannot write: {exc.strerror or exc}") from None
    except Exception as exc:  # a buggy reporter plugin must not hide the others or a traceback-free exit
        raise WazaError(f"reporter {reporter.name!r} failed: {type(exc).__name__}: {exc}") from exc


def write_target(target: str | Path, fill: Callable[[IO[bytes]], Any], mode: int | None = None) -> None:
    """Write a file through ``fill(stream)`` with the safe-write rules of the module
    docstring: one implementation for every file waza writes
    (:func:`waza_core.safe_write.write_stream`)."""
    # deferred: waza_core.safe_write adds ~11.9 ms to importing this module
    from waza_core.safe_write import write_stream

    write_stream(target, fill, mode)


@attrs.define
class RunReports:
    """The reports of one ``waza run``: checked before the run, written after it."""

    requests: list[ReportRequest]
    uses_stdout: bool

    def write(self, outcome: dict[str, Any], stdout: IO[bytes] | None) -> list[str]:
        return write_requests(self.requests, ResultsView(outcome), stdout) if self.requests else []


def plan_for_run(specs: list[str], option_specs: list[str], registry, output: Path | None) -> RunReports:
    """Check ``--reporter``/``--reporter-option`` of ``waza run`` against each other and ``-o``."""
    taken: dict[str, str] = {}
    if output is not None:
        key = STDOUT if str(output) == STDOUT else str(Path(output).absolute())
        taken[key] = f"-o {output}"
    requests = parse_requests(specs, option_specs, registry, taken) if (specs or option_specs) else []
    return RunReports(requests, STDOUT in taken or any(r.target == STDOUT for r in requests))


class MachineStdout:
    """What :func:`machine_stdout` hands out: where the machine-readable bytes go."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self.stream = stream


def _stderr_fd() -> int:
    """stderr's descriptor; 2 when Python has no ``sys.stderr`` (it was closed when waza
    started, and waza then reopened descriptor 2 on the null device)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


@contextlib.contextmanager
def machine_stdout(active: bool) -> Iterator[MachineStdout]:
    """While active, anything written to stdout (prints, logs, child processes that
    inherit fd 1) lands on stderr; the yielded object's ``stream`` is the real stdout.

    At the file-descriptor level when stdout is a real file descriptor, so even a
    child process cannot corrupt the JSON that ``| jq`` reads.
    """
    if not active:
        yield MachineStdout(None)
        return
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None  # an in-memory stdout (tests): redirect at the Python level only
    if fd is None:
        real = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            yield MachineStdout(getattr(real, "buffer", None) or _TextAsBytes(real))
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    os.dup2(_stderr_fd(), fd)
    machine = os.fdopen(os.dup(saved), "wb", closefd=True)
    try:
        yield MachineStdout(machine)
    finally:
        sys.stdout.flush()
        machine.flush()
        machine.close()
        os.dup2(saved, fd)
        os.close(saved)


class _TextAsBytes:
    def __init__(self, text_stream) -> None:
        self.text_stream = text_stream

    def write(self, data: bytes) -> int:
        self.text_stream.write(data.decode("utf-8", "replace"))
        return len(data)

    def flush(self) -> None:
        self.text_stream.flush()
