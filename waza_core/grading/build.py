"""Build, start and close graders from their specs and the plugin registry.

The run (:mod:`waza_core.run.prepared`), checkpoints and ``waza grade`` build their
graders here, so a grader is made, started and closed the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from waza_core.errors import GraderError, WazaError
from waza_core.grading.base import Grader, GraderSetup
from waza_core.grading.expectations import ExpectationGrader
from waza_core.model import Suite


def grader_class(spec, registry) -> type[Grader]:
    """The class that grades ``spec``: a plugin by its type, or the built-in expectation grader."""
    if spec.type == "_expected":
        return ExpectationGrader
    cls = registry.get("grader", spec.type)
    if cls is None:
        raise WazaError(f"{spec.where}: {registry.unknown('grader', spec.type)}")
    return cls


def build_grader(spec, suite, registry, cls: type[Grader] | None = None) -> Grader:
    """The grader of ``spec`` (of class ``cls`` when the caller looked it up already)."""
    if cls is None:
        cls = grader_class(spec, registry)
    try:
        return cls(spec, suite)
    except WazaError:
        raise
    except Exception as exc:
        raise WazaError(f"{spec.where}: grader {spec.name!r} could not be built: {type(exc).__name__}: {exc}") from exc


def executor_factory(suite: Suite, registry) -> Callable[[str, dict], Any]:
    """``new_executor(name, options)`` for :class:`GraderSetup`: an executor plugin by name."""

    def new_executor(name: str, options: dict | None) -> Any:
        cls = registry.get("executor", name)
        if cls is None:
            raise WazaError(registry.unknown("executor", name))
        if options is None:  # the suite's own options for that executor (config.<key>)
            options = suite.config.extra.get(cls.config_key, {}) if cls.config_key else {}
        return cls(suite, dict(options))

    return new_executor


def start_graders(graders: list[Grader], setup: GraderSetup) -> None:
    """Start each grader once; a grader that cannot start is a config error (exit 2)."""
    for g in graders:
        try:
            g.start(setup)
        except WazaError:
            raise
        except GraderError as exc:
            raise WazaError(f"{g.spec.where}: grader {g.spec.name!r} could not start: {exc}") from None


def close_graders(graders: list[Grader]) -> None:
    """Close every grader, even when one of them fails to close."""
    problems = []
    for g in graders:
        try:
            g.close()
        except Exception as exc:  # one grader's failure must not leave the others open
            problems.append(f"grader {g.spec.name!r}: {type(exc).__name__}: {exc}")
    if problems:
        raise WazaError("could not close: " + "; ".join(problems))
