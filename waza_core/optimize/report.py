"""``report.json``: built up while the run goes, written once at the end (0600, atomic).

The report is the run's only verdict, so it is written for every run that got an
output folder, including failed, cancelled and timed-out ones, and it is checked
against ``optimizer-report-1.0`` before it is written.
"""

from __future__ import annotations

import datetime
import sys
import time
from pathlib import Path
from typing import Any

from waza_core._version import __version__
from waza_core.optimize import spend as spend_mod
from waza_core.optimize.contract import REPORT_SCHEMA, RESERVED_QUALIFICATION_EVALUATIONS, validate_report
from waza_core.optimize.failures import OUTCOME_EXIT, OptimizeFailure, outcome_for, stop_reason_for


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ReportBuilder:
    def __init__(self, target: str, adapter_kind: str) -> None:

        self._t0 = time.perf_counter()
        self.doc: dict[str, Any] = {
            "kind": "waza.optimizer-report",
            "schema_version": "1.0",
            "waza_version": __version__,
            "started_at": _now(),
            "finished_at": None,
            "duration_ms": 0,
            "outcome": None,
            "stop_reason": None,
            "exit_code": None,
            "failure": None,
            "hard_spend_cap": False,
            "target": target if target in ("context-overlay", "skill-directory") else None,
            "adapter": {"kind": adapter_kind, "name": None, "version": None, "contract_version": None,
                        "required_capabilities": [], "optional_capabilities": [], "selected_capabilities": [],
                        "unavailable_optional_capabilities": [], "paid_calls": None},
            "consent": {"allow_paid_calls": False, "required": False, "reasons": []},
            "budget": {"max_iterations": None, "max_evaluations": None,
                       "reserved_qualification_evaluations": RESERVED_QUALIFICATION_EVALUATIONS,
                       "timeout_ms": None, "adapter_timeout_ms": None, "min_improvement": None,
                       "iterations_used": 0, "evaluations_used": 0},
            "suite_pin": None,
            "seed_candidate_id": None,
            "best_candidate_id": None,
            "candidates": [],
            "proposals": [],
            "evaluations": [],
            "qualification": {"status": "not_reached", "reason": None, "min_improvement": None,
                              "optimization_seed_score": None, "optimization_best_score": None,
                              "improvement": None, "seed_evaluation_index": None,
                              "candidate_evaluation_index": None, "seed_score": None,
                              "candidate_score": None, "decision": None},
            "spend_totals": None,
            "artifacts": {"candidates_dir": "candidates", "evidence_dir": "evidence"},
        }
        self.eval_records: list = []
        self.stop_reason: str | None = None

    # -- recording -------------------------------------------------------------------
    def set_negotiation(self, neg) -> None:
        self.doc["adapter"].update({
            "name": neg.adapter_name, "version": neg.adapter_version, "contract_version": neg.contract_version,
            "required_capabilities": list(neg.required), "optional_capabilities": list(neg.optional),
            "selected_capabilities": list(neg.selected),
            "unavailable_optional_capabilities": list(neg.unavailable), "paid_calls": neg.paid_calls,
        })

    def add_evaluation(self, rec) -> None:
        self.eval_records.append(rec)

    def finish(self, outcome: str | None = None, failure: OptimizeFailure | None = None) -> dict[str, Any]:
        d = self.doc
        if failure is not None:
            d["failure"] = failure.to_json()
            d["outcome"] = outcome_for(failure.category)
            d["stop_reason"] = stop_reason_for(failure.category)
        else:
            d["outcome"] = outcome
            d["stop_reason"] = self.stop_reason
        d["exit_code"] = OUTCOME_EXIT[d["outcome"]]
        d["evaluations"] = [r.to_json() for r in self.eval_records]
        d["budget"]["evaluations_used"] = len(self.eval_records)
        ev = spend_mod.combine(r.spend for r in self.eval_records)
        pr = spend_mod.combine(p["spend"] for p in d["proposals"])
        d["spend_totals"] = {"evaluations": ev, "proposals": pr,
                             "total": spend_mod.combine([r.spend for r in self.eval_records] +
                                                        [p["spend"] for p in d["proposals"]])}
        d["finished_at"] = _now()
        d["duration_ms"] = int((time.perf_counter() - self._t0) * 1000)
        return d

    def write(self, out_dir: Path) -> None:
        """Validate and write atomically with mode 0600."""
        # deferred: waza_core.results.io adds ~71.2 ms to importing this module
        from waza_core.results.io import write_atomic
        from waza_core.results.jsonbytes import dumps

        problem = validate_report(self.doc)
        if problem:  # a harness bug: still write what we have, and say so
            sys.stderr.write(f"waza: internal error: report.json violates {REPORT_SCHEMA}: {problem}\n")
        write_atomic(out_dir / "report.json", dumps(self.doc), 0o600)
