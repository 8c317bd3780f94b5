"""The ``agentv`` dialect: an AgentV eval file -> a waza suite (import only).

AgentV's YAML is promptfoo's in snake_case: ``tests`` with ``id``, ``input`` (the
prompt) and ``assert`` lists of the same assertion types, which map exactly as for
promptfoo. One difference decides the verdict: an AgentV test passes when the weighted
mean score reaches its threshold (0.8 unless ``threshold`` says otherwise), not when
every assertion passes. Each assertion here scores 0 or 1, so the two agree exactly
when no single assertion's weight is small enough for the others to reach the threshold
without it (weight_i > (1 - threshold) x total). Other tests are refused (or, with
--approximate, translated as "every grader must pass" and noted).
"""

from __future__ import annotations

from pathlib import Path

from waza_core import Dialect, SuiteConversion, SuiteError, hookimpl

DEFAULT_THRESHOLD = 0.8


class AgentVDialect(Dialect):
    name = "agentv"
    summary = "Whole AgentV eval files -> waza suites (import-suite; exact verdicts or refused)"

    # imported on use, as in waza_interop.promptfoo: every waza command loads this module
    def import_suite(self, config: Path, approximate: bool) -> SuiteConversion:
        # deferred: waza_interop._agentv adds ~28.9 ms to importing this module
        from waza_interop._agentv import read_agentv
        from waza_interop._emit import suite_files

        model, problems = read_agentv(config, approximate)
        if problems:
            raise SuiteError(problems)
        return SuiteConversion(suite_files(model, "agentv"), tuple(model.notes))


@hookimpl
def waza_register_interop_dialects(register):
    register(AgentVDialect)
