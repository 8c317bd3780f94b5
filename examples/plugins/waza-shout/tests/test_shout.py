"""Tests of every plugin in waza-shout, written with ``waza_core.testing`` only.

Run from this folder: ``python -m pytest tests`` (installed or with ``PYTHONPATH=.``).
"""

from pathlib import Path

import pytest
from waza_shout.adapter import AppendLinesAdapter
from waza_shout.dialect import ShoutDialect
from waza_shout.executor import LoudExecutor
from waza_shout.grader import ShoutGrader
from waza_shout.reporter import TsvReporter

from waza_core import AdapterOptions, InteropError, SuiteError, testing

EXAMPLE = Path(__file__).resolve().parents[1] / "example"
PLUGINS = [ShoutGrader, LoudExecutor, TsvReporter]


def test_grader_scores_the_share_of_capitals():
    assert testing.grade(ShoutGrader, "HELLO!").passed is True
    result = testing.grade(ShoutGrader, "HELLo", config={"min_letters": 2})
    assert (result.passed, result.score, result.feedback) == (False, 0.8, "1 lowercase letter(s)")
    assert testing.grade(ShoutGrader, "HI", config={"min_letters": 3}).feedback == "2 letters, wanted 3..any"


def test_grader_config_is_checked_at_load():
    assert testing.config_problems(ShoutGrader, {"min_letters": 5, "max_letters": 1}) == [
        "config.min_letters: min_letters (5) is greater than max_letters (1)"]
    with pytest.raises(SuiteError, match="unknown key 'min_leters'"):
        testing.grade(ShoutGrader, "X", config={"min_leters": 1})


def test_the_example_suite_with_the_loud_executor(tmp_path):
    run = testing.run_suite(EXAMPLE, plugins=PLUGINS, folder=tmp_path)
    assert run.exit_code == 1  # the blank prompt is an executor error
    hi = run.run("hi")
    assert hi["status"] == "passed" and hi["final_output"] == "ECHO: SAY HI"
    assert hi["session_digest"]["tools_used"] == ["write_file"]
    assert run.run("blank")["error_msg"] == "empty prompt"


def test_the_grader_with_a_scripted_agent(tmp_path):
    agent = testing.scripted_executor({"loud": "HEY THERE", "quiet": "hey there"})
    run = testing.run_suite({"graders": [{"type": "shout", "name": "caps"}]},
                            tasks=[{"id": "loud", "inputs": {"prompt": "p"}},
                                   {"id": "quiet", "inputs": {"prompt": "q"}}],
                            executor=agent, plugins=[ShoutGrader], folder=tmp_path)
    assert run.validation("loud", "caps")["passed"] is True
    assert run.validation("quiet", "caps")["score"] == 0.0


def test_the_reporter(tmp_path):
    run = testing.run_suite(EXAMPLE, plugins=PLUGINS, folder=tmp_path)
    assert testing.render_report(TsvReporter, run) == (
        b"task\tstatus\tscore\nblank\terror\t0.000\nhi\tpassed\t1.000\n")
    assert testing.render_report(TsvReporter, run, {"header": "false"}).startswith(b"blank\t")
    with pytest.raises(Exception, match="must be true or false"):
        testing.render_report(TsvReporter, run, {"header": "maybe"})


def test_the_adapter_appends_its_lines():
    import threading

    adapter = AppendLinesAdapter(AdapterOptions.of({"line": ["- one", "- two"]}))
    assert adapter.check_options() == []
    request = {"operation": "propose", "contract_version": "1.0", "iteration": 1,
               "parent": {"candidate_id": "0" * 64, "files": [{"path": "a.md", "content": "top"}]}}
    reply = adapter.call(request, timeout=5, cancel=threading.Event())
    assert b'"content": "top\\n- one\\n- two\\n"' in reply.raw
    assert AppendLinesAdapter(AdapterOptions.of({})).check_options() == [
        "--adapter append-lines needs --adapter-option line=TEXT"]


def test_the_dialect_round_trip():
    suite = b"tests:\n  - id: t1\n    asserts:\n      - shout: hello\n"
    grader = ShoutDialect().import_assertion(suite, "t1", 1)
    assert grader.output == b'name: "shout"\ntype: "text"\nconfig:\n  contains_cs:\n    - "HELLO"\n'
    assert ShoutDialect().export_grader(grader.output).output == b'shout: "HELLO"\n'
    with pytest.raises(InteropError, match="has 1 assertion"):
        ShoutDialect().import_assertion(suite, "t1", 2)
