"""A third-party whole-suite dialect, loaded with ``-p tests.interop.fake_suite_dialect``:
a text file of ``prompt => expected substring`` lines becomes a waza suite."""

from __future__ import annotations

from waza_core import Dialect, SuiteConversion, hookimpl, yaml_quote
from waza_core.errors import SuiteError


class ArrowDialect(Dialect):
    name = "example-arrows-v1"
    summary = "Toy suite dialect: `prompt => substring` lines <-> a waza suite"

    def import_suite(self, config, approximate):
        files = {"eval.yaml": b'name: arrows\nskill: arrows\nconfig: {executor: echo}\ntasks: ["tasks/*.yaml"]\n'}
        problems = []
        for n, line in enumerate(config.read_text(encoding="utf-8").splitlines(), 1):
            prompt, sep, expected = line.partition(" => ")
            if not sep:
                problems.append(f"{config}:{n}:1: expected `prompt => substring`")
                continue
            files[f"tasks/t{n}.yaml"] = (
                f"id: t{n}\ninputs:\n  prompt: {yaml_quote(prompt)}\ngraders:\n"
                f"  - {{type: text, name: has, config: {{contains_cs: [{yaml_quote(expected)}]}}}}\n").encode()
        if problems:
            raise SuiteError(problems)
        return SuiteConversion(files, ("toy note",) if approximate else ())


@hookimpl
def waza_register_interop_dialects(register):
    register(ArrowDialect)
