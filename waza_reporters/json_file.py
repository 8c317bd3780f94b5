"""``--reporter json[:PATH]``: the results file itself, the same bytes ``-o`` writes."""

from __future__ import annotations

from typing import IO

from waza_core import Reporter, ResultsView, hookimpl, results_json_bytes


class JsonReporter(Reporter):
    name = "json"
    summary = "the results file (the same bytes as -o); json without a path writes it to stdout"
    suffix = ".json"
    accepts = frozenset({"results", "optimizer-report"})

    def write(self, results: ResultsView, out: IO[bytes]) -> None:
        out.write(results_json_bytes(results.document()))


@hookimpl
def waza_register_reporters(register):
    register(JsonReporter)
