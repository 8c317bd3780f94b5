"""The grader interface and the per-run grading context.

A grader class is built once per suite (compile regexes, resolve paths there) and
``grade`` is called once per run, possibly from several threads: keep it free of
per-run state. ``grade`` returns a :class:`GraderResult`; it raises
:class:`~waza_core.errors.GraderError` only when it could not judge at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from waza_core.frozen_build import fast_builder
from waza_core.model import GraderResult, GraderSpec, RunEvidence, TaskSpec

if TYPE_CHECKING:
    from waza_core.model import Suite


@attrs.frozen(weakref_slot=False)  # see make_grading_context
class GradingContext:
    """What a grader sees of one run."""

    task: TaskSpec
    evidence: RunEvidence
    workspace_dir: str | None
    suite: Suite | None = None
    #: set when the run is being interrupted; long-running graders should stop
    cancel: threading.Event | None = None
    #: the final output of the same task run without the skill (baseline mode), for
    #: pairwise judging; ``None`` when there is no baseline run
    baseline_output: str | None = None


#: ``GradingContext(...)``, for one context per run (waza_core/frozen_build.py)
make_grading_context = fast_builder(GradingContext)


@attrs.frozen
class GraderSetup:
    """What the core hands every grader once, before the first run (:meth:`Grader.start`).

    ``new_executor(name, options)`` builds an executor plugin by name (not started), so a
    grader that needs a model (an LLM judge) runs it through any executor that can
    answer, instead of a hard-wired SDK. ``options=None`` means the suite's own options
    for that executor (``config.<its config_key>``).
    """

    #: the judge model: ``--judge-model``, else ``config.judge_model`` (may be empty)
    judge_model: str = ""
    #: the model under test
    model: str = ""
    #: the run's executor (``--executor``, else ``config.executor``): a judge's default
    executor: str = ""
    #: ``waza run --update-snapshots``: snapshot-based graders rewrite their snapshots
    update_snapshots: bool = False
    #: builds an executor plugin by name; ``None`` where no registry is available
    new_executor: Callable[[str, dict | None], Any] | None = None
    #: set when the run is being interrupted
    cancel: threading.Event | None = None


class Grader:
    """Base class for graders. Subclasses set ``name`` and ``config_schema``."""

    name: ClassVar[str] = ""
    config_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    #: whether ``grade`` may look at the workspace; output-only graders set False, which
    #: lets the runner skip making a workspace nobody could see
    needs_workspace: ClassVar[bool] = True
    #: whether the same evidence always gets the same verdict; a judge model or timing
    #: based grader sets False, which turns the result cache off (as in waza)
    deterministic: ClassVar[bool] = True
    #: True when the verdict comes from a language model (a judge): ``waza grade --repeat K``
    #: asks such a grader K times per run to measure how often it agrees with itself
    model_judge: ClassVar[bool] = False
    #: seconds one ``grade`` call may take (None: the run's ``timeout_seconds``); past
    #: it the run's grade is a ``timeout`` grader error (docs/safety.md)
    time_limit: float | None = None
    #: True when ``grade`` never blocks for long outside Python code (it uses bounded
    #: regexes, and runs children through ``run_process`` with a timeout): it is then
    #: called in the run's thread at no cost. Otherwise it runs on a helper thread that
    #: the run abandons when it overruns (docs/safety.md)
    bounded: ClassVar[bool] = False
    #: True when ``grade`` watches ``ctx.cancel`` itself and returns soon after it is set (its
    #: child runs through ``run_process(..., cancel=ctx.cancel)``): a stop of the whole run
    #: (Ctrl-C, SIGTERM) is then not raised inside it as ``GradingCancelled``, which can land
    #: at any line, between creating a file and the ``try`` that removes it. Its time limit
    #: still applies (docs/safety.md)
    stops_on_cancel: ClassVar[bool] = False
    #: True when building the grader is cheap, cannot fail once the suite's load-time
    #: checks (schema, ``check_config``) passed, reads no environment variable, has no
    #: ``start``/``close`` and sets ``needs_workspace`` on the class, not per instance:
    #: a run then builds it for each attempt instead of
    #: keeping one per task for the whole suite run (100,000 text graders kept ~27 MB)
    built_per_run: ClassVar[bool] = False

    def __init__(self, spec: GraderSpec, suite: Suite | None = None) -> None:
        self.spec = spec
        self.suite = suite

    def start(self, setup: GraderSetup) -> None:
        """Called once before the first run (and by ``waza grade``), after ``__init__``.

        Start what lives for the whole suite run here (a judge's executor, say)."""

    def close(self) -> None:
        """Called once after the last run, also after an interrupt."""

    def environment_allow_list(self) -> tuple[str, ...]:
        """Names (``*`` and ``?`` globs allowed) of variables of waza's environment this
        grader reads, a credential say. A backend that runs it on another machine
        (``ray``) passes exactly these along from the driver, and nothing else of it."""
        return ()

    @classmethod
    def check_config(cls, config: dict) -> list[tuple[tuple, str]]:
        """Semantic checks beyond the schema, run at load time.

        Returns ``(json_path_inside_config, message)`` pairs; empty when fine.
        """
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:  # pragma: no cover - interface
        raise NotImplementedError

    def result(self, score: float, passed: bool, feedback: str, **details: Any) -> GraderResult:
        return GraderResult(
            identifier=self.spec.name,
            type=self.spec.type,
            score=score,
            passed=passed,
            feedback=feedback,
            weight=self.spec.weight,
            details=details,
        )
