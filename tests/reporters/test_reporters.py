"""Reporters as plugins: JUnit, markdown, json; ``--reporter`` on run and report; ``-o -``."""

from __future__ import annotations

import json
import os
import stat
import xml.etree.ElementTree as ET

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from tests.api.test_public_api import ROOT, _imports
from tests.reporters.conftest import PLUGIN, waza_ci


def _cases(path):
    xml = JUnitXml.fromfile(str(path))
    return [case for suite in xml for case in suite]


def _kinds(case):
    return {type(r).__name__ for r in case.result}


# -- JUnit ---------------------------------------------------------------------------

def test_junit_has_one_testcase_per_run_with_the_right_results(ci_suite, tmp_path):
    xml_path = tmp_path / "r.xml"
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-q", "--reporter", f"junit:{xml_path}")
    assert proc.returncode == 1, proc.stderr.decode()
    cases = _cases(xml_path)
    assert len(cases) == 10  # 5 tasks x 2 trials
    by = {(c.classname, c.name): c for c in cases}
    assert set(c.classname for c in cases) == {"stable-pass", "always-fails", "flaky-task", "errors-task",
                                               "hostile-task"}
    assert by[("stable-pass", "Stable pass (trial 1 of 2)")].is_passed
    fail = by[("always-fails", "Always fails (trial 2 of 2)")]
    assert _kinds(fail) == {"Failure"}
    failure = next(r for r in fail.result if isinstance(r, Failure))
    assert failure.type == "GraderFailure"
    assert "says_42" in failure.message
    assert "Missing expected substring: 42" in failure.text
    flaky = [by[("flaky-task", f"Flaky task (trial {n} of 2)")] for n in (1, 2)]
    assert flaky[0].is_passed and _kinds(flaky[1]) == {"Failure"}
    errored = by[("errors-task", "Errors on trial two (trial 2 of 2)")]
    err = next(r for r in errored.result if isinstance(r, Error))
    assert "scripted failure of trial 2" in err.message
    suite = next(iter(JUnitXml.fromfile(str(xml_path))))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (10, 5, 1, 0)


def test_junit_marks_ungraded_runs_skipped(ci_suite, tmp_path):
    xml_path = tmp_path / "r.xml"
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-q", "--skip-graders", "--reporter", f"junit:{xml_path}")
    assert proc.returncode == 1, proc.stderr.decode()  # the errored trial still counts
    kinds = [_kinds(c) for c in _cases(xml_path)]
    assert kinds.count({"Skipped"}) == 9 and kinds.count({"Error"}) == 1
    skipped = next(r for c in _cases(xml_path) for r in c.result if isinstance(r, Skipped))
    assert "n/a" in skipped.message


def test_junit_survives_characters_xml_cannot_hold(tmp_path):
    from waza_core.plugins import get_registry
    from waza_core.results.reporting import ResultsView

    nasty = "ctrl \x00\x07\x1b[31m surrogate \ud800 ]]> </failure> & \"quote\""
    doc = {"eval_name": nasty, "summary": {"duration_ms": 5}, "config": {}, "tasks": [
        {"test_id": nasty, "display_name": nasty, "status": "failed", "runs": [
            {"run_number": 1, "status": "failed", "final_output": nasty,
             "validations": {"g": {"type": "text", "passed": False, "score": 0, "feedback": nasty}}}]}]}
    reporter = get_registry([]).get("reporter", "junit")({"output": "true"})
    out = tmp_path / "n.xml"
    with open(out, "wb") as fh:
        reporter.write(ResultsView(doc), fh)
    ET.parse(out)  # well-formed
    case = _cases(out)[0]
    failure = next(r for r in case.result if isinstance(r, Failure))
    assert "\\x07" in failure.text and "\\x1b[31m" in failure.text and "]]> </failure> &" in failure.text
    assert case.system_out.startswith("ctrl \\x00")


def test_junit_reads_a_waza_go_results_file(tmp_path):
    """A results file as waza (Go) 1.0 wrote it: no schemaVersion field values we add."""
    doc = {"eval_id": "x", "skill": "s", "eval_name": "go", "timestamp": "2026-01-01T00:00:00Z",
           "config": {"runs_per_test": 1, "model_id": "m"},
           "summary": {"total_tests": 1, "succeeded": 0, "failed": 1, "errors": 0, "skipped": 0,
                       "success_rate": 0, "aggregate_score": 0.2, "duration_ms": 10},
           "tasks": [{"test_id": "t", "display_name": "T", "status": "failed",
                      "runs": [{"run_number": 1, "status": "failed", "duration_ms": 10,
                                "validations": {"a": {"identifier": "a", "type": "regex", "score": 0.2,
                                                      "passed": False, "feedback": "no match"}}}]}]}
    src = tmp_path / "go.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "go.xml"
    proc = waza_ci("report", str(src), "--junit", str(out))
    assert proc.returncode == 0, proc.stderr.decode()
    (case,) = _cases(out)
    assert case.classname == "t" and _kinds(case) == {"Failure"}


# -- markdown ------------------------------------------------------------------------

def test_markdown_names_every_task_and_escapes_hostile_text(ci_results, tmp_path):
    md = tmp_path / "r.md"
    proc = waza_ci("report", str(ci_results), "--markdown", str(md))
    assert proc.returncode == 0, proc.stderr.decode()
    text = md.read_text("utf-8")
    for name in ("Stable pass", "Always fails", "Flaky task", "Errors on trial two"):
        assert name in text
    assert text.startswith("## ❌ waza: ci-demo")
    table = [line for line in text[text.index("| Status |"):].splitlines() if line.startswith("| ")]
    assert len(table) == 1 + 5  # header + one row per task (the failure-triage table comes before it)
    assert all(line.count("|") - line.count("\\|") == 7 for line in table)  # no cell broken by a pipe
    hostile = next(line for line in table if "hostile-task" in line)
    assert "<b>" not in hostile and "&lt;b&gt;" in hostile and "<script>" not in text
    assert "\\`tick\\`" in hostile and "@\u200boctocat" in hostile and "\\|" in hostile
    flaky = next(line for line in table if "flaky-task" in line)
    assert "flaky" in flaky.split("|")[5]


def test_markdown_escape_covers_controls_newlines_and_html():
    from waza_core import escape_markdown

    assert escape_markdown("a|b\nc`d`<i>x</i>\x1b[0m\r\n@x *y* _z_ [l](u) ~s~ #h &amp;") == (
        "a\\|b<br>c\\`d\\`&lt;i&gt;x&lt;/i&gt;\\\\x1b\\[0m<br>@\u200bx \\*y\\* \\_z\\_ \\[l\\](u) "
        "\\~s\\~ \\#h &amp;amp;")


def test_markdown_limits_rows_and_feedback(ci_results, tmp_path):
    md = tmp_path / "r.md"
    proc = waza_ci("report", str(ci_results), "--reporter", f"markdown:{md}", "--reporter-option",
                   "markdown.max_rows=2", "--reporter-option", "markdown.max_feedback=10")
    assert proc.returncode == 0, proc.stderr.decode()
    text = md.read_text("utf-8")
    assert "… and 3 more task(s)" in text
    assert "says\\_42: M…" in text


# -- json, -o -, and stdout discipline ------------------------------------------------

def test_dash_o_writes_only_results_json_on_stdout(ci_suite):
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-o", "-")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)  # nothing but the JSON
    assert doc["summary"]["total_tests"] == 5
    err = proc.stderr.decode()
    assert "RESULTS  ci-demo" in err and "running 'ci-demo'" in err


def test_json_reporter_writes_the_bytes_of_dash_o(ci_suite, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-q", "-o", str(a), "--reporter", f"json:{b}")
    assert proc.returncode == 1, proc.stderr.decode()
    assert a.read_bytes() == b.read_bytes()


def test_report_to_stdout_keeps_stdout_clean(ci_results):
    proc = waza_ci("report", str(ci_results), "--reporter", "markdown")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("## ❌ waza: ci-demo")


def test_report_of_saved_file_matches_the_live_run(ci_suite, tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    res = tmp_path / "r.json"
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, "-q", "-o", str(res),
                   "--reporter", f"junit:{live / 'r.xml'}", "--reporter", f"markdown:{live / 'r.md'}",
                   "--reporter", f"html:{live / 'r.html'}")
    assert proc.returncode == 1, proc.stderr.decode()
    again = tmp_path / "again"
    again.mkdir()
    proc = waza_ci("report", str(res), "--junit", str(again / "r.xml"), "--markdown", str(again / "r.md"),
                   "--html", str(again / "r.html"))
    assert proc.returncode == 0, proc.stderr.decode()
    for name in ("r.xml", "r.md", "r.html"):
        assert (live / name).read_bytes() == (again / name).read_bytes(), name


# -- request checking ----------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--reporter", "junitt:x.xml"], "unknown reporter 'junitt' (did you mean 'junit'?)"),
    (["--reporter", "junit:x.xml", "--reporter-option", "junit.nope=1"], "reporter 'junit' has no option 'nope'"),
    (["--reporter", "junit:x.xml", "--reporter-option", "junit.output=maybe"], "must be true or false"),
    (["--reporter-option", "html.page_size=5"], "no --reporter html was given"),
    (["--reporter", "junit:x.xml", "--reporter", "markdown:x.xml"], "is already written by --reporter junit:x.xml"),
    (["--reporter", "junit", "-o", "-"], "stdout is already written by -o -"),
    (["--reporter", "junit:no/such/dir/x.xml"], "does not exist"),
    (["--reporter", "junit:x.xml", "--reporter-option", "bad"], "expected NAME.KEY=VALUE"),
    (["--reporter", "html:x.html", "--reporter-option", "html.page_size=0"],
     "reporter 'html' option 'page_size' must be a whole number >= 1, not '0'"),
    (["--reporter", "html:x.html", "--reporter-option", "html.max_text=lots"], "option 'max_text' must be a whole"),
    (["--reporter", "markdown:x.md", "--reporter-option", "markdown.max_rows=-3"], "option 'max_rows' must be a"),
    (["--reporter", "markdown:x.md", "--reporter-option", "markdown.max_feedback=1.5"], "'max_feedback' must be"),
])
def test_bad_reporter_requests_fail_before_the_run(ci_suite, tmp_path, args, message):
    proc = waza_ci("run", str(ci_suite), "-p", PLUGIN, *args, cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert message in err and "Traceback" not in err
    assert "running 'ci-demo'" not in err  # refused before any run
    assert not (tmp_path / "x.xml").exists()


def test_report_needs_a_report_and_a_readable_file(tmp_path):
    proc = waza_ci("report", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and b"name at least one report" in proc.stderr
    proc = waza_ci("report", str(tmp_path / "missing.json"), "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and b"No such file" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": "2.0", "tasks": []}')
    proc = waza_ci("report", str(bad), "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and b"schemaVersion '2.0' is not supported" in proc.stderr
    assert not (tmp_path / "r.html").exists()


# -- where the bytes go ----------------------------------------------------------------

def test_reports_go_through_symlinks_fifos_and_keep_modes(ci_results, tmp_path):
    real = tmp_path / "real.md"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    proc = waza_ci("report", str(ci_results), "--markdown", str(link))
    assert proc.returncode == 0, proc.stderr.decode()
    assert link.is_symlink() and real.read_text("utf-8").startswith("## ")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    import subprocess
    import sys

    reader = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stdout.write(open({str(fifo)!r}).read())"],
                              stdout=subprocess.PIPE)
    proc = waza_ci("report", str(ci_results), "--junit", str(fifo))
    data, _ = reader.communicate(timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert fifo.is_fifo() and data.startswith(b"<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "pipe.xml", "real.md"]  # no temp files


def test_a_broken_reporter_plugin_fails_cleanly_and_others_are_written(ci_results, tmp_path, monkeypatch):
    (tmp_path / "bad_reporter.py").write_text(
        "from waza_core import Reporter, hookimpl\n"
        "class Bad(Reporter):\n    name = 'bad'\n"
        "    def write(self, results, out):\n        out.write(b'half')\n        raise RuntimeError('boom')\n"
        "@hookimpl\ndef waza_register_reporters(register):\n    register(Bad)\n")
    out = tmp_path / "b.txt"
    md = tmp_path / "r.md"
    proc = waza_ci("report", str(ci_results), "-p", "bad_reporter", "--reporter", f"bad:{out}",
                   "--markdown", str(md), env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert proc.returncode == 2
    assert b"reporter 'bad' failed: RuntimeError: boom" in proc.stderr and b"Traceback" not in proc.stderr
    assert not out.exists()  # no half-written report
    assert md.read_text("utf-8").startswith("## ")


def test_reporters_are_plugins_listed_by_waza_plugins():
    proc = waza_ci("plugins", "--json")
    assert proc.returncode == 0
    registered = {name for p in json.loads(proc.stdout)["plugins"] for name in p["registers"].get("reporter", [])}
    assert {"json", "junit", "markdown", "html"} <= registered


def test_builtin_reporters_import_only_the_public_surface():
    offenders = [f"{p.relative_to(ROOT)}:{line}: {mod}" for p in sorted((ROOT / "waza_reporters").rglob("*.py"))
                 for line, mod in _imports(p) if mod.startswith("waza_core.")]
    assert offenders == []


def test_report_never_overwrites_the_results_file_it_reads(ci_results, tmp_path):
    src = tmp_path / "r.json"
    src.write_bytes(ci_results.read_bytes())
    (tmp_path / "link.json").symlink_to(src)
    os.link(src, tmp_path / "hard.json")
    for args in (["--html", str(src)], ["--junit", str(tmp_path / "link.json")],
                 ["--reporter", f"markdown:{tmp_path / 'hard.json'}"], ["--html", str(tmp_path / "ok.html"),
                                                                        "--junit", str(src)]):
        proc = waza_ci("report", str(src), *args)
        assert proc.returncode == 2 and b"is the results file being read" in proc.stderr, args
        assert src.read_bytes() == ci_results.read_bytes()
        assert not (tmp_path / "ok.html").exists()  # refused before anything was written
