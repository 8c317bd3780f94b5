"""The cyclic garbage collector during a command: rare passes while it sets up, the usual
ones while it runs.

A command first imports its modules (about 150) and loads its suite: functions, classes and
specs that live to its end and hold few cycles, which the collector walked ~45 young and ~5
middle passes over for nothing at Python's thresholds (~8 ms of a ~240 ms ``waza run`` of
2,000 mock tasks). The runs are different: a garbage cycle there may hold a transcript or an
exception with its evidence, megabytes each, so they get the thresholds the process had.
``main()`` calls :func:`set_up` first; ``waza run`` calls :func:`as_before` once its engine is
built, ``waza grade`` once its suite is loaded, and ``main()`` when it returns in a process that
goes on (tests, embedding). The other commands run no agent or grader: they keep the rare passes.
"""

from __future__ import annotations

import gc

#: the collector's thresholds while a command sets up (Python's are 700, 10, 10)
SETUP_THRESHOLDS = (50_000, 20, 100)

#: the thresholds :func:`set_up` replaced, until :func:`as_before` puts them back
_saved: list[tuple[int, int, int]] = []


def set_up() -> None:
    """Rare passes from now on (the thresholds in place are kept, once, for :func:`as_before`)."""
    if not _saved:
        _saved.append(gc.get_threshold())
    gc.set_threshold(*SETUP_THRESHOLDS)


def as_before() -> None:
    """The thresholds :func:`set_up` replaced, back (nothing when it was not called)."""
    if _saved:
        gc.set_threshold(*_saved.pop())
