"""``--reporter junit:PATH``: JUnit XML for the test reports of CI systems.

One ``<testcase>`` per run (waza (Go) writes one per task; a run is what passes or
fails, and trials of a flaky task then show as such): ``classname`` is the task id,
``name`` the task name and trial. A failed run carries a ``<failure>`` with each
failed grader's feedback, an errored run an ``<error>``, a run that was not graded
(``n/a``, e.g. ``--skip-graders``) ``<skipped>``. Text from agents and graders may
hold characters XML 1.0 cannot carry at all (most control characters, lone
surrogates): they are written as visible ``\\xNN`` escapes so the file always parses.
"""

from __future__ import annotations

import re
from typing import IO, TYPE_CHECKING, Any

from waza_core import Reporter, ResultsView, hookimpl

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: Any) -> str:
    """``value`` as text XML 1.0 can hold (escaping of <, & and quotes is ElementTree's job)."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else "\ufffd", text)


def _seconds(ms: Any) -> str:
    return f"{ms / 1000:.3f}" if isinstance(ms, (int, float)) and not isinstance(ms, bool) else "0.000"


class JUnitReporter(Reporter):
    name = "junit"
    summary = "JUnit XML: one <testcase> per run, <failure> with the failed graders' feedback"
    suffix = ".xml"
    option_help = {
        "output": "true: put each run's final output in <system-out> (default false)",
    }
    flag_options = {"output": False}

    def write(self, results: ResultsView, out: IO[bytes]) -> None:
        import xml.etree.ElementTree as ET  # here, not at import: every command loads the plugins

        with_output = self.option_flag("output")
        header = results.header
        summary = results.summary
        config = header.get("config") or {}
        suite = ET.Element("testsuite", name=xml_text(header.get("eval_name") or header.get("skill") or "waza"))
        props = ET.SubElement(suite, "properties")
        for key, value in (("skill", header.get("skill")), ("model", config.get("model_id")),
                           ("engine", config.get("engine_type")), ("eval_id", header.get("eval_id")),
                           ("waza_version", header.get("waza_version")),
                           ("aggregate_score", summary.get("aggregate_score")),
                           ("success_rate", summary.get("success_rate"))):
            if value is not None and value != "":
                ET.SubElement(props, "property", name=key, value=xml_text(value))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        tally = ResultsView.triage_tally(header.get("audit"))
        for task in tally.watch(results.tasks()):
            runs = task.get("runs") or [{"run_number": 1, "status": task.get("status"), "validations": {}}]
            for run in runs:
                counts["tests"] += 1
                kind = self._testcase(suite, task, run, len(runs), with_output, tally.vacuous)
                if kind:
                    counts[kind] += 1
        for g in tally.groups():  # failure triage (docs/triage.md): runs per category
            ET.SubElement(props, "property", name=f"triage.{g['category']}", value=str(g["runs"]))
        audit = header.get("audit")
        if isinstance(audit, dict):
            ET.SubElement(props, "property", name="audit.vacuous_tasks",
                          value=xml_text(",".join(str(t) for t in audit.get("vacuous_tasks") or [])))
        total_time = _seconds(summary.get("duration_ms"))
        for key, value in counts.items():
            suite.set(key, str(value))
        suite.set("time", total_time)
        if header.get("timestamp"):
            suite.set("timestamp", xml_text(header["timestamp"]))
        root = ET.Element("testsuites", name="waza", time=total_time,
                          **{k: str(v) for k, v in counts.items()})
        root.append(suite)
        ET.indent(root)
        ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
        out.write(b"\n")

    def _testcase(self, suite: ET.Element, task: dict, run: dict, trials: int, with_output: bool,
                  vacuous: frozenset = frozenset()) -> str | None:
        # deferred: xml.etree.ElementTree adds ~5.0 ms to importing this module
        import xml.etree.ElementTree as ET

        """Add one run's testcase; return the counter it adds to (failures, errors, skipped) or None."""
        number = run.get("run_number", 1)
        name = task.get("display_name") or task.get("test_id")
        case = ET.SubElement(suite, "testcase", classname=xml_text(task.get("test_id")),
                             name=xml_text(f"{name} (trial {number} of {trials})" if trials > 1
                                           else f"{name} (trial {number})"),
                             time=_seconds(run.get("duration_ms")))
        status = run.get("status")
        if task.get("runs"):
            found = ResultsView.run_triage(run, task.get("test_id") in vacuous)
        else:  # a task without runs (its before_task hook failed): the task's own category
            found = task.get("triage") if isinstance(task.get("triage"), dict) else None
        if found:  # failure triage: who is at fault, as a property CI tools show beside the case
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="triage", value=xml_text(found.get("category")))
            ET.SubElement(props, "property", name="triage.reason", value=xml_text(found.get("reason")))
        failed = ResultsView.failed_graders(run)
        lines = [f"[FAIL] {n} ({v.get('type', '?')}): score={_score(v.get('score'))} - {v.get('feedback') or ''}"
                 for n, v in failed]
        kind = None
        if status == "error":
            message = run.get("error_msg") or "the run errored"
            el = ET.SubElement(case, "error", message=xml_text(message), type="ExecutionError")
            el.text = xml_text("\n".join([message, *lines]))
            kind = "errors"
        elif status == "failed":
            names = ", ".join(n for n, _ in failed)
            message = (f"{len(failed)} of {len(run.get('validations') or {})} grader(s) failed: {names}" if failed
                       else "the run failed")
            el = ET.SubElement(case, "failure", message=xml_text(message), type="GraderFailure")
            el.text = xml_text("\n".join(lines) or message)
            kind = "failures"
        elif status != "passed":
            ET.SubElement(case, "skipped", message=xml_text(f"not graded (status {status})"))
            kind = "skipped"
        if with_output and run.get("final_output"):
            ET.SubElement(case, "system-out").text = xml_text(run["final_output"])
        return kind


def _score(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"


@hookimpl
def waza_register_reporters(register):
    register(JUnitReporter)
