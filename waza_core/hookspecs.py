"""The six hook specifications of waza.

Every hook only *collects* classes through a ``register`` callback (the pattern of
simonw/llm). The core never runs a grader, executor or adapter inside a hook call:
pluggy stops calling the remaining implementations when one raises, so the core
runs them itself and isolates each failure.

Each registered class carries a class attribute ``name``: the grader ``type:`` key,
the ``config.executor`` value, the ``--adapter`` value, the interop adapter id or the ``config.cli.events`` format.
"""

import pluggy

PROJECT = "waza"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def waza_register_graders(register):
    """Register grader classes: ``register(GraderClass)``.

    A grader class has ``name`` (its ``type:`` key), ``config_schema`` (a JSON Schema
    for its ``config`` mapping), ``__init__(spec, suite)`` and ``grade(context)``.
    See :mod:`waza_core.grading.base`.
    """


@hookspec
def waza_register_executors(register):
    """Register executor classes: ``register(ExecutorClass)``.

    An executor class has ``name`` (the ``config.executor`` value), ``paid`` and
    ``start()``, ``execute(request)``, ``shutdown()``. See :mod:`waza_core.run.execution`.
    """


@hookspec
def waza_register_optimizer_adapters(register):
    """Register optimizer adapter classes: ``register(AdapterClass)``.

    An adapter class has ``name`` (the ``--adapter`` value). See
    :mod:`waza_core.optimize.adapter`.
    """


@hookspec
def waza_register_interop_dialects(register):
    """Register interop dialect classes: ``register(DialectClass)``.

    A dialect class has ``name`` (the ``--adapter`` id of ``waza interop``). See
    :mod:`waza_core.interop`.
    """


@hookspec
def waza_register_reporters(register):
    """Register reporter classes: ``register(ReporterClass)``.

    A reporter class has ``name`` (the ``--reporter`` value) and ``write(results, out)``.
    See :class:`waza_core.Reporter`.
    """


@hookspec
def waza_register_event_formats(register):
    """Register agent event-stream readers: ``register(EventFormatClass)``.

    An event format class has ``name`` (the ``config.cli.events`` value) and
    ``read_event(event, turn)``, mapping one JSON event of the agent's stream onto tool
    calls, messages, skills, usage and errors. See :mod:`waza_core.run.event_stream`.
    """
