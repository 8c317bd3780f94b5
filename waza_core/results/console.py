"""Everything waza prints for a person: one console layer for every command.

* **Streams that never raise.** stdout or stderr may be closed, a pipe whose reader
  left, or a full disk (``> /dev/full``). Writes go through :class:`Stream`, which
  records the first failure and goes quiet instead of raising: the results file is
  still written and the exit code still says how the runs went. A command whose
  *machine* output is on stdout (``waza grade``'s JSON) asks :meth:`Stream.ok`
  afterwards and exits 2 when it was lost.
* **Escaping.** Task ids, names, grader feedback, agent output and stderr come from
  suites, agents and graders: :func:`escape` turns control characters (C0, DEL, C1,
  the bidirectional overrides and line separators, lone surrogates) into visible
  ``\\x1b``-style escapes before anything reaches a terminal, so a task name cannot
  clear the screen, set the window title or forge a progress line.
  :func:`escape_html` does the same for HTML reports (markdown:
  ``waza_core.escape_markdown``, in :mod:`waza_core.results.markdown_text`).
* **Colour and verbosity.** ``--color auto|always|never`` (auto: colour only on a
  terminal, never when ``NO_COLOR`` is set and not empty), ``-q`` (errors only) and
  ``-v`` (more detail).
* **Progress and summary** of ``waza run``: a progress bar on a terminal, plain
  per-task lines otherwise (both on stderr), and a summary with the failing graders'
  feedback on stdout (on stderr when the results themselves go to stdout).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from typing import Any

from waza_core.errors import WazaError
from waza_core.lazy_re import LazyPattern

MARK = {"passed": "✓", "failed": "✗", "error": "!", "n/a": "-"}
_MARK_STYLE = {"passed": "green", "failed": "red", "error": "yellow", "n/a": "dim"}
_ANSI = {"green": "32", "red": "31", "yellow": "33", "dim": "2", "bold": "1"}

QUIET, NORMAL, VERBOSE = -1, 0, 1
COLOR_CHOICES = ("auto", "always", "never")

# C0 controls but tab, DEL, C1 controls, bidirectional controls (Trojan Source), line and
# paragraph separators, and lone surrogates (which cannot even be encoded).
_CONTROL = LazyPattern("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                       "\ud800-\udfff]")
_CONTROL_KEEP_NL = LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                               "\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}


def _escape_char(m: re.Match) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: Any, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters become visible escapes.

    With ``newlines=True`` line feeds are kept (for multi-line blocks the caller
    indents); otherwise they become ``\\n`` too, so one value stays on one line.
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # no control, format, separator or surrogate character: nothing to escape
        return s
    pattern = _CONTROL_KEEP_NL if newlines else _CONTROL
    return pattern.sub(_escape_char, s) if pattern.search(s) else s


def escape_html(text: Any) -> str:
    """``text`` as literal HTML text or attribute value, without control characters."""
    # deferred: html adds ~1.8 ms to importing this module
    import html

    return html.escape(escape(text, newlines=True), quote=True)


def color_enabled(choice: str = "auto", stream: Any = None) -> bool:
    """Whether to colour: ``always``/``never`` as said; ``auto`` on a terminal unless
    ``NO_COLOR`` is set to something (https://no-color.org)."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR", ""):
        return False
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError, AttributeError):
        return False


#: held progress text (:meth:`Stream.hold`) is written at least this often, in seconds ...
HOLD_SECONDS = 0.1
#: ... and once this many pieces wait
HOLD_LINES = 1000
_monotonic = time.monotonic


def _start_timer(delay: float, call: Any) -> None:
    """Call ``call()`` in ``delay`` seconds on a daemon thread (a test replaces this)."""
    timer = threading.Timer(max(delay, 0.0), call)
    timer.daemon = True
    timer.start()


class Stream:
    """A text stream that never raises. ``which`` is ``"stdout"`` or ``"stderr"``: the
    ``sys`` stream of that name when made (not later: rich's live display swaps
    ``sys.stderr`` for a proxy that writes back here), unless ``stream`` is given."""

    def __init__(self, which: str, stream: Any = None) -> None:
        self.which = which
        self.raw = stream if stream is not None else getattr(sys, which)
        self.problem: str | None = None
        self._held: list[str] = []  # see hold()
        self._due = 0.0  # when held text is next written at once
        # hook and preparer warnings come from the run's threads: one writer at a time, so held
        # text is written once and in order (reentrant: hold() and release() write through write())
        self._lock = threading.RLock()

    def ok(self) -> bool:
        """False once a write failed (or the stream was closed from the start)."""
        return self.problem is None

    def write(self, text: str) -> bool:
        with self._lock:
            if self._held:  # held text first: the order of what is printed never changes
                text = "".join(self._held) + text
                self._held.clear()
            return self._write(text)

    def _write(self, text: str) -> bool:
        if self.problem is not None:
            return False
        stream = self.raw
        if stream is None:
            self.problem = "it is closed"
            return False
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError) as exc:
            self.problem = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            _silence(stream)
            return False
        return True

    def hold(self, text: str) -> None:
        """Write ``text`` at most :data:`HOLD_SECONDS` later: with the next :meth:`write` or
        :meth:`release`, with a later :meth:`hold` once that time has passed, or by a timer
        thread started for the first line held after a write (the first line goes out at
        once). For progress lines to a file or pipe: one ``write`` and ``flush`` for each
        finished task was a system call per task of a 100,000-task run."""
        with self._lock:
            held = self._held
            held.append(text)
            now = _monotonic()
            if now >= self._due or len(held) >= HOLD_LINES:
                self._due = now + HOLD_SECONDS
                self.write("")
            elif len(held) == 1:  # nothing else is sure to come: a timer writes it when due
                _start_timer(self._due - now, self.release)

    def release(self) -> bool:
        """Write what :meth:`hold` kept back (at the end of the progress); False if lost."""
        with self._lock:
            return self.write("") if self._held else self.ok()

    def isatty(self) -> bool:
        try:
            stream = self.raw
            return bool(stream is not None and stream.isatty())
        except (ValueError, OSError, AttributeError):
            return False


def _silence(stream: Any) -> None:
    """Point a broken standard stream at /dev/null, so the interpreter's last flush
    cannot print 'Exception ignored' and change the exit code to 120."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return
    if fd not in (1, 2):
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass


class Console:
    """The one way commands print: errors, warnings, information, details, results."""

    def __init__(self, verbosity: int = NORMAL, color: str = "auto", out: Any = None, err: Any = None) -> None:
        self.verbosity = verbosity
        self.out = Stream("stdout", out)
        self.err = Stream("stderr", err)
        self.color_choice = color
        self.color_out = color_enabled(color, self.out)
        self.color_err = color_enabled(color, self.err)

    @property
    def quiet(self) -> bool:
        return self.verbosity <= QUIET

    @property
    def verbose(self) -> bool:
        return self.verbosity >= VERBOSE

    def paint(self, text: str, style: str, stream: str = "out") -> str:
        on = self.color_out if stream == "out" else self.color_err
        return f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if on and style in _ANSI else text

    def error(self, message: str) -> None:
        """``waza: error: ...`` on stderr, always; each line escaped."""
        for line in str(message).split("\n"):
            self.err.write(f"{self.paint('waza: error:', 'red', 'err')} {escape(line)}\n")

    def warning(self, message: str) -> None:
        """Shown also with ``-q`` (which hides progress and the summary): a warning says
        something was ignored or went wrong, as pip's ``-q`` keeps them."""
        self.err.write(f"{self.paint('waza: warning:', 'yellow', 'err')} {escape(message)}\n")

    def info(self, message: str) -> None:
        """Progress-like information on stderr; hidden by ``-q``."""
        if not self.quiet:
            self.err.write(escape(message) + "\n")

    def detail(self, message: str) -> None:
        """Only with ``-v``."""
        if self.verbose:
            self.err.write(escape(message) + "\n")

    def result(self, text: str) -> bool:
        """Machine output on stdout (JSON): printed even with ``-q``; False if lost."""
        return self.out.write(text if text.endswith("\n") else text + "\n")


_current: list[Console] = []


def get_console() -> Console:
    """The console of this command; a default one when the command set none, or when
    the standard streams were swapped since (tests running commands in-process)."""
    if _current and _current[-1].out.raw is sys.stdout and _current[-1].err.raw is sys.stderr:
        return _current[-1]
    return Console()


def set_console(console: Console) -> Console:
    _current[:] = [console]
    return console


class Reporter:
    """Progress and summary of ``waza run`` (see the module doc)."""

    def __init__(self, quiet: bool = False, stream=None, console: Console | None = None,
                 summary_to_stderr: bool = False) -> None:
        if console is None:
            console = Console(verbosity=QUIET if quiet else NORMAL, err=stream)
        self.console = console
        self.quiet = console.quiet
        self.err = console.err
        self.summary_to_stderr = summary_to_stderr
        self.progress: Any = None  # a rich Progress while the bar is shown
        self.bar: Any = None
        #: progress lines go out together (Stream.hold) unless stderr is a terminal
        self.hold_lines = False
        self._marks: dict[str, str] = {}  # status -> its painted mark

    def start(self, suite, engine) -> None:
        if self.quiet:
            return
        self.err.write(escape(f"waza: running {suite.name!r} ({len(engine.tasks)} task(s) x {engine.trials} "
                              f"trial(s)) with executor {engine.executor_name!r}, "
                              f"model {engine.model or '(default)'!r}") + "\n")
        if self.err.isatty():
            try:
                self._start_bar(len(engine.tasks))
            except Exception:  # a terminal rich cannot drive: plain lines instead
                self.progress = None
        else:
            self.hold_lines = True

    def _start_bar(self, total: int) -> None:
        # deferred: rich.console adds ~39.4 ms to importing this module
        from rich.console import Console as RichConsole
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        rich_console = RichConsole(file=_RichFile(self.err), force_terminal=True,  # type: ignore[arg-type]
                                   no_color=not self.console.color_err, highlight=False)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=rich_console, transient=True,
                                 redirect_stdout=False, redirect_stderr=False)
        self.progress.start()
        self.bar = self.progress.add_task("tasks", total=total)

    def task_done(self, index: int, total: int, entry: dict[str, Any]) -> None:
        if self.quiet:
            return
        if self.progress is not None:
            try:
                self.progress.update(self.bar, completed=index)
            except Exception:
                pass
            return
        status = entry.get("status", "?")
        score = (entry.get("stats") or {}).get("avg_score")
        shown = f" score {score:.2f}" if isinstance(score, (int, float)) and status != "n/a" else ""
        mark = self._marks.get(status)
        if mark is None:
            mark = self._marks[status] = self.console.paint(MARK.get(status, "?"),
                                                            _MARK_STYLE.get(status, "bold"), "err")
        put = self.err.hold if self.hold_lines else self.err.write
        put(f"{mark} [{index}/{total}] {escape(entry.get('display_name', ''))} ({escape(status)}{shown})\n")
        if self.console.verbose:
            for line in _feedback(entry)[:10]:
                put(f"      {line}\n")

    def stop(self) -> None:
        self.err.release()
        if self.progress is not None:
            try:
                self.progress.stop()
            except Exception:
                pass
            self.progress = None

    def block(self, text: str) -> None:
        """More of the summary (groups, reliability, A/B impact, model comparison) on the
        summary's stream, escaped: the names in it come from the suite."""
        if self.quiet or not text:
            return
        stream = self.console.err if self.summary_to_stderr else self.console.out
        stream.write(escape(text, newlines=True))

    def summary(self, outcome: dict[str, Any], target) -> None:
        if self.quiet:
            return
        console = self.console
        stream = console.err if self.summary_to_stderr else console.out
        where = "err" if self.summary_to_stderr else "out"
        s = outcome["summary"]
        title = console.paint(f"RESULTS  {escape(outcome['eval_name'])}", "bold", where)
        lines = ["", title + ("  (INCOMPLETE)" if outcome.get("incomplete") else "")]
        lines.append(f"  tasks {s['total_tests']}: {s['succeeded']} passed, {s['failed']} failed, "
                     f"{s['errors']} errors, {s['skipped']} skipped")
        if _graders_skipped(outcome):
            lines.append(f"  graders skipped: {s['skipped']} task(s) ran without grading; "
                         f"grade them with `waza grade --results`   duration {s['duration_ms']} ms")
        else:
            lines.append(f"  success rate {s['success_rate'] * 100:.1f}%   aggregate score "
                         f"{s['aggregate_score']:.3f}   weighted {s['weighted_score']:.3f}   "
                         f"duration {s['duration_ms']} ms")
        if "cached_runs" in s:
            lines.append(f"  {s['cached_runs']} run(s) from the result cache")
        problems = [t for t in outcome["tasks"] if t["status"] in ("failed", "error")]
        if problems:
            lines.append("")
            lines.append("FAILED OR ERRORED TASKS")
            for t in problems[:50]:
                mark = console.paint(MARK[t["status"]], _MARK_STYLE[t["status"]], where)
                lines.append(f"  {mark} {escape(t['test_id'])} ({t['status']})")
                for line in _feedback(t)[:10]:
                    lines.append(f"      {line}")
            if len(problems) > 50:
                lines.append(f"  ... and {len(problems) - 50} more (see the results file)")
        if target is not None:
            lines.append(f"\nresults: {escape(target)}")
        stream.write("\n".join(lines) + "\n")


def _graders_skipped(outcome: dict[str, Any]) -> bool:
    """True when no task was graded because of ``--skip-graders`` (its rate means nothing)."""
    cfg = outcome.get("config") or {}
    s = outcome["summary"]
    return bool(cfg.get("skip_graders")) or (s["total_tests"] > 0 and s["skipped"] == s["total_tests"])


#: at most this many characters of one feedback line are shown
FEEDBACK_LINE_LIMIT = 300


def _feedback(task: dict) -> list[str]:
    """The distinct problems of a task's runs, one escaped line each."""
    seen, out = set(), []
    for run in task.get("runs") or ():
        if run.get("error_msg") and run["error_msg"] not in seen:
            seen.add(run["error_msg"])
            out.append(_clip(f"run {run.get('run_number')}: error: {escape(run['error_msg'])}"))
        for name, v in (run.get("validations") or {}).items():
            if not v.get("passed") and (name, v.get("feedback")) not in seen:
                seen.add((name, v.get("feedback")))
                out.append(_clip(f"{escape(name)}: {escape(v.get('feedback', ''))}"))
    return out


def _clip(line: str) -> str:
    return line if len(line) <= FEEDBACK_LINE_LIMIT else line[:FEEDBACK_LINE_LIMIT - 3] + "..."


class _RichFile:
    """What rich writes to: a :class:`Stream`, so a broken terminal never raises."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        raw = self.stream.raw
        if raw is None:
            raise OSError("closed")
        return raw.fileno()


def setup_console(color: str = "auto", quiet: bool = False, verbose: bool = False) -> Console:
    """Make the console of a command from its options (a bad --color is exit 2)."""
    if color not in COLOR_CHOICES:
        raise WazaError(f"--color must be one of {', '.join(COLOR_CHOICES)}, not {color!r}")
    if quiet and verbose:
        raise WazaError("use either -q/--quiet or -v/--verbose, not both")
    level = QUIET if quiet else (VERBOSE if verbose else NORMAL)
    return set_console(Console(verbosity=level, color=color))


def print_warnings(lines) -> None:
    """Print suite warnings (``file:line:col: warning: ...``) on stderr, one per line,
    escaped (a key in a suite is text from a file)."""
    err = get_console().err
    for line in lines:
        err.write(escape(line) + "\n")
