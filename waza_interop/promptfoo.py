"""The ``promptfoo`` dialect: whole promptfoo configs <-> waza suites.

``import_suite`` reads a promptfooconfig.yaml with the files it names (prompt files,
test files, a defaultTest file) and writes a waza suite whose tasks give the verdicts
promptfoo gives, test by test, or refuses (see :mod:`waza_interop._pfconfig`).
``export_suite`` writes a promptfooconfig.yaml for a suite whose graders all have an
exact promptfoo equivalent (see :mod:`waza_interop._pfexport`).
"""

from __future__ import annotations

from pathlib import Path

from waza_core import Dialect, SuiteConversion, SuiteError, hookimpl


class PromptfooDialect(Dialect):
    name = "promptfoo"
    summary = "Whole promptfoo configs <-> waza suites (import-suite / export-suite; exact verdicts or refused)"
    #: the key spelling of the format (AgentV's subclass reads snake_case)
    dialect_label = "promptfoo"

    # The translators are imported on use: this module is loaded by every waza command (plugin
    # registration), and they cost about 0.18 s (the reader, with ruamel.yaml) and 0.42 s (the
    # exporter, with the suite loader) of start-up, measured with python -X importtime.
    def import_suite(self, config: Path, approximate: bool) -> SuiteConversion:
        # deferred: waza_interop._emit adds ~0.6 ms to importing this module
        from waza_interop._emit import suite_files
        from waza_interop._pfconfig import Reader

        reader = Reader(config, approximate)
        model = reader.read()
        if model is None:
            raise SuiteError(reader.problems)
        return SuiteConversion(suite_files(model, self.dialect_label), tuple(model.notes))

    def export_suite(self, suite: Path) -> SuiteConversion:
        # deferred: waza_interop._pfexport adds ~50.1 ms to importing this module
        from waza_interop._pfexport import export

        return SuiteConversion({"promptfooconfig.yaml": export(suite)})


@hookimpl
def waza_register_interop_dialects(register):
    register(PromptfooDialect)
