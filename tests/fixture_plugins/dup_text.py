"""Registers a second grader named 'text': a conflict the core must report."""

from waza_core.grading.base import Grader
from waza_core.hookspecs import hookimpl


class OtherText(Grader):
    name = "text"


@hookimpl
def waza_register_graders(register):
    register(OtherText)
