"""What one in-process optimizer run left behind (shared by the optimize and adapters/optimize helpers)."""

from __future__ import annotations

from pathlib import Path


class Outcome:
    """The exit code, the parsed report.json and the output folder of one ``run_optimizer`` call."""

    def __init__(self, code: int, report: dict, out: Path) -> None:
        self.code, self.report, self.out = code, report, out

    @property
    def category(self):
        return (self.report["failure"] or {}).get("category")

    @property
    def message(self):
        return (self.report["failure"] or {}).get("message", "")

    @property
    def outcome(self):
        return self.report["outcome"]
