"""Grading one run: every grader of it, each isolated and within its time limit.

:func:`grade_run` is what the run loop (:mod:`waza_core.run.unit`), checkpoints and
``waza grade`` call; a grader that raises, overruns or is cancelled becomes a
grader-error result, never an exception (:mod:`waza_core.grading.deadline`).
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Sequence

import attrs

from waza_core.errors import GraderError
from waza_core.grading import deadline
from waza_core.grading.base import Grader, GradingContext
from waza_core.limits import DEFAULT_GRADER_TIMEOUT_SECONDS
from waza_core.model import GraderResult
from waza_core.cancel import CancelEvent


def grade_run(graders: Sequence[Grader], ctx: GradingContext) -> tuple[dict[str, GraderResult], str, str | None]:
    """Run every grader on one run, each isolated and within its time limit
    (:mod:`waza_core.grading.deadline`). Returns (validations, status, error)."""
    validations: dict[str, GraderResult] = {}
    errors: list[str] = []
    clock = time.perf_counter
    for g in graders:
        t0 = clock()
        res = grade_one(g, ctx)
        res.duration_ms = int((clock() - t0) * 1000)
        if res.error:
            errors.append(f"grader {g.spec.name!r}: {res.error['message']}")
        validations[res.identifier] = res
    if errors:
        return validations, "error", "; ".join(errors)
    for v in validations.values():
        if not v.passed:
            return validations, "failed", None
    return validations, "passed", None


def grading_limit(g: Grader, ctx: GradingContext) -> float:
    """The grader's own limit (``Grader.time_limit``), else the run's timeout_seconds."""
    if g.time_limit:
        return float(g.time_limit)
    task_limit = ctx.task.timeout_seconds if ctx.task is not None else None
    suite_limit = ctx.suite.config.timeout_seconds if ctx.suite is not None else None
    return float(task_limit or suite_limit or DEFAULT_GRADER_TIMEOUT_SECONDS)


def grade_one(g: Grader, ctx: GradingContext) -> GraderResult:
    """One grader on one run: its result, or a grader-error result; never raises
    (except KeyboardInterrupt, which stops the whole run)."""
    limit = grading_limit(g, ctx)
    # the group a stop of the run raises GradingCancelled in: none for a grader that stops by itself
    group = None if g.stops_on_cancel else ctx.cancel
    if g.bounded:
        outcome = deadline.in_thread(g.grade, limit, group, ctx)
    else:
        outcome = _on_helper(g, ctx, limit, group)
    kind, value = outcome
    if kind == "ok":
        return value
    if kind == "timeout":
        return _error_result(g, "timeout", f"grading took longer than its limit of {limit:g} s; "
                                           "the grader was stopped")
    if kind == "cancelled":
        return _error_result(g, "cancelled", "grading was stopped: the run was interrupted")
    if isinstance(value, GraderError):
        return _error_result(g, value.kind, str(value), value.details)
    if isinstance(value, BaseException):  # a buggy plugin: where it raised, and how it got there
        where, trace = exception_trace(value, g)
        at = f" (at {where})" if where else ""
        return _error_result(g, "exception", f"{type(value).__name__}: {value}{at}",
                             {"raised_at": where, "traceback": trace})
    return _error_result(g, "exception", f"{type(value).__name__}: {value}")


#: characters of a grader's traceback kept in the run's grader details (its last ones: the
#: frames nearest the raise)
TRACEBACK_LIMIT = 8000


def exception_trace(exc: BaseException, g: Grader) -> tuple[str, str]:
    """(``file:line in function`` of the grader's own frame nearest the raise, the
    traceback text of at most :data:`TRACEBACK_LIMIT` characters).

    The grader's frame is the innermost one in the file that defines its class, so an
    exception raised inside a library the plugin called still points at the plugin's
    line; when no frame is in that file (a base class raised), the innermost frame."""
    import traceback  # deferred: only when a grader raised (~2.5 ms of every start otherwise)

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_harness(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next  # waza's own frames that called the grader say nothing about the bug
    frames = traceback.extract_tb(tb)
    own = _source_file(type(g))
    chosen = next((f for f in reversed(frames) if own and _same_file(f.filename, own)), None)
    if chosen is None and frames:
        chosen = frames[-1]
    where = f"{_shown_path(chosen.filename)}:{chosen.lineno} in {chosen.name}" if chosen is not None else ""
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    if len(text) > TRACEBACK_LIMIT:
        text = "...(earlier frames cut)\n" + text[-(TRACEBACK_LIMIT - 24):]
    return where, text


_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_harness(filename: str) -> bool:
    return os.path.dirname(os.path.abspath(filename)) == _HARNESS_DIR


def _source_file(cls: type) -> str | None:
    try:
        return inspect.getsourcefile(cls) or inspect.getfile(cls)
    except (TypeError, OSError):
        return None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _shown_path(path: str) -> str:
    """A path as a person finds it: relative to the working folder when under it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return rel if not rel.startswith("..") else path


def _on_helper(g: Grader, ctx: GradingContext, limit: float, group: object) -> tuple[str, object]:
    """A grader that does not declare itself bounded: on a helper thread, with its own
    cancel event (linked to the run's), so the run can move on when it overruns."""
    own = CancelEvent()
    token = ctx.cancel._subscribe(own.set) if isinstance(ctx.cancel, CancelEvent) else None
    try:
        return deadline.on_helper(lambda: g.grade(attrs.evolve(ctx, cancel=own)), limit, own, group)
    except BaseException:
        # the wait was left while the grader ran (a stop raised in this thread): tell the grader,
        # as a stop of the run would once the run's event is set, which is unlinked from it below
        own.set()
        raise
    finally:
        if token is not None:
            ctx.cancel._unsubscribe(token)


def _error_result(g: Grader, kind: str, message: str, details: dict | None = None) -> GraderResult:
    return GraderResult(identifier=g.spec.name, type=g.spec.type, score=0.0, passed=False,
                        feedback=f"grader error ({kind}): {message}", weight=g.spec.weight,
                        details=dict(details or {}), error={"kind": kind, "message": message})
