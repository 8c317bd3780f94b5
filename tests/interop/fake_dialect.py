"""A third-party dialect for the plugin tests, written the way docs/interop.md shows."""

from waza_core.hookspecs import hookimpl
from waza_core.interop import Conversion, Dialect, InteropError, quote


class ShoutDialect(Dialect):
    name = "example-shout-v1"
    summary = "Toy dialect: a `shout: WORD` line <-> a contains_cs grader"

    def import_assertion(self, source: bytes, test: str, position: int) -> Conversion:
        from waza_core.suite import strict_yaml

        data = strict_yaml.load(source).data
        if not isinstance(data, dict) or not isinstance(data.get("shout"), str):
            raise InteropError("expected a mapping with a shout string")
        text = f'name: "shout"\ntype: "text"\nconfig:\n  contains_cs:\n    - {quote(data["shout"])}\n'
        return Conversion(text.encode(), "toy notice")

    def export_grader(self, source: bytes) -> Conversion:
        raise InteropError("the toy dialect cannot export")


@hookimpl
def waza_register_interop_dialects(register):
    register(ShoutDialect)
