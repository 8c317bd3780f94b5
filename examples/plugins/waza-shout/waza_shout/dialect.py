"""``waza interop --adapter shout-yaml-v1``: a toy foreign format, ``shout: WORD`` assertions.

A foreign suite is ``tests: [{id, asserts: [{shout: WORD}, ...]}]``; one assertion becomes
a native ``text`` grader that wants WORD in capitals, and back.
"""

from waza_core import Conversion, Dialect, InteropError, hookimpl, load_strict_yaml, yaml_quote


class ShoutDialect(Dialect):
    name = "shout-yaml-v1"
    summary = "Toy format: a `shout: WORD` assertion <-> a text grader with contains_cs [WORD]"

    def import_assertion(self, source, test, position):
        doc = load_strict_yaml(source, source="<stdin>").data
        tests = doc.get("tests") if isinstance(doc, dict) else None
        found = [t for t in tests or [] if isinstance(t, dict) and t.get("id") == test]
        if not found:
            raise InteropError(f"no test {test!r}")
        asserts = found[0].get("asserts") or []
        if position > len(asserts):
            raise InteropError(f"test {test!r} has {len(asserts)} assertion(s), not {position}")
        word = asserts[position - 1].get("shout") if isinstance(asserts[position - 1], dict) else None
        if not isinstance(word, str) or not word:
            raise InteropError(f"assertion {position} of {test!r} is not `shout: WORD`")
        grader = f"name: \"shout\"\ntype: \"text\"\nconfig:\n  contains_cs:\n    - {yaml_quote(word.upper())}\n"
        return Conversion(grader.encode("utf-8"), "imported one assertion only")

    def export_grader(self, source):
        doc = load_strict_yaml(source, source="<stdin>").data
        config = doc.get("config") if isinstance(doc, dict) else None
        needles = config.get("contains_cs") if isinstance(config, dict) else None
        if doc.get("type") != "text" or not isinstance(needles, list) or len(needles) != 1 \
                or not isinstance(needles[0], str):
            raise InteropError("only a text grader with exactly one contains_cs string can be exported")
        return Conversion(f"shout: {yaml_quote(needles[0])}\n".encode("utf-8"), None)


@hookimpl
def waza_register_interop_dialects(register):
    register(ShoutDialect)
