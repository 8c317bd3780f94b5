"""Error types. A :class:`WazaError` is a user or configuration mistake: the CLI
prints its message (no traceback) and exits 2."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The exit codes of every ``waza`` command.

    ``waza gate`` adds its own meanings on top (see its docs); everything else uses
    these: 0 all good, 1 a task (or check) failed, 2 a user, config or I/O error.
    """

    OK = 0
    FAILED = 1
    USAGE = 2
    #: ``waza gate`` only: a results file could not be read
    GATE_INPUT = 3
    #: stopped by Ctrl-C (128 + SIGINT)
    INTERRUPTED = 130
    #: stopped by SIGTERM (128 + SIGTERM)
    TERMINATED = 143


class WazaError(Exception):
    """A user, configuration or I/O error: printed without a traceback, exit 2."""

    exit_code: int = ExitCode.USAGE


class SuiteError(WazaError):
    """All problems found while loading a suite, reported at once."""

    def __init__(self, problems: list[str], warnings: list[str] | tuple[str, ...] = ()):
        self.problems = list(problems)
        #: ``file:line:col: warning: ...`` lines found on the way (printed before the problems)
        self.warnings = list(warnings)
        super().__init__("\n".join(self.problems))


class PluginError(WazaError):
    """A plugin could not be loaded, or two plugins registered the same name."""


class GraderError(Exception):
    """A grader could not judge (as opposed to judging the output wanting).

    ``kind`` says why, e.g. ``timeout``, ``start_failed``, ``context_io``; the run
    becomes ``error`` and the optimizer treats the evaluation as unscorable.
    """

    def __init__(self, message: str, kind: str = "grader_error", details: dict | None = None):
        super().__init__(message)
        self.kind = kind
        self.details = details or {}


class ExecutorError(Exception):
    """An executor could not run the task; the run becomes ``error``."""
