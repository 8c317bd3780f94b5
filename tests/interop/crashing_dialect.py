"""Broken third-party dialects: the CLI must still answer in one line with exit 2."""

from waza_core.hookspecs import hookimpl
from waza_core.interop import Dialect


class Crashes(Dialect):
    name = "example-crashes-v1"

    def import_assertion(self, source, test, position):
        raise ValueError("boom\nsecond line")

    def export_grader(self, source):
        return "not a Conversion"


class CannotStart(Dialect):
    name = "example-cannot-start-v1"

    def __init__(self):
        raise RuntimeError("no\nway")


@hookimpl
def waza_register_interop_dialects(register):
    register(Crashes)
    register(CannotStart)
