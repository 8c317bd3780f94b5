"""Graders that misbehave on purpose, for the hostile tests (loaded with ``-p``)."""

from __future__ import annotations

import os
import time

from waza_core import Grader, hookimpl


class SpinGrader(Grader):
    """A pure-Python loop that never ends (and swallows ordinary exceptions)."""

    name = "spin"
    config_schema = {"type": "object", "properties": {"bounded": {"type": "boolean"}}}

    def grade(self, ctx):
        n = 0
        while True:
            try:
                n += 1
            except Exception:  # a careless plugin: still stopped (GraderTimeout is a BaseException)
                pass


class BoundedSpinGrader(SpinGrader):
    """The same loop in a grader that (wrongly) declares itself bounded."""

    name = "spin_bounded"
    bounded = True


class BlockGrader(Grader):
    """Blocked in C with the GIL released (a read that never returns)."""

    name = "block"
    config_schema = {"type": "object"}

    def grade(self, ctx):
        r, _w = os.pipe()
        os.read(r, 1)  # nobody ever writes
        return self.result(1.0, True, "unreachable")


class QuickGrader(Grader):
    """Passes after a short, cooperative pause (marks that grading went on after a timeout)."""

    name = "quick"
    config_schema = {"type": "object"}

    def grade(self, ctx):
        time.sleep(0.01)
        return self.result(1.0, True, "quick")


@hookimpl
def waza_register_graders(register):
    for cls in (SpinGrader, BoundedSpinGrader, BlockGrader, QuickGrader):
        register(cls)
