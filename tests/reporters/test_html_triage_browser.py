"""The failure triage and the audit in the HTML report, in a real headless Chromium: the triage
table, the audit line, each run's category and the traceback of a grader that raised."""

from __future__ import annotations

import pytest

from tests.conftest import run_waza
from tests.reporters.browser import open_report
from tests.results.test_triage import ENV, EVAL, PLUGIN, TASKS

pytestmark = pytest.mark.browser


def test_the_page_shows_the_triage_the_audit_and_the_traceback(make_suite, tmp_path):
    from playwright.sync_api import expect

    path = make_suite(EVAL.format(executor="mock"), TASKS)
    html = tmp_path / "r.html"
    res = run_waza("run", str(path), "--audit", "-q", "-p", PLUGIN, "--reporter", f"html:{html}", env=ENV)
    assert res.returncode == 1, res.stderr.decode()
    with open_report(html) as opened:
        page = opened.page
        rows = page.locator("#triage tbody tr")
        expect(rows).to_have_count(3)
        assert [rows.nth(i).locator("td").first.text_content() for i in range(3)] == [
            "grader defect", "agent failure", "vacuous pass"]
        assert "fix the grader; the agent was not judged" in rows.nth(0).text_content()
        assert "green" in rows.nth(2).text_content()
        assert "1 vacuous task(s): green" in page.text_content("#audit")
        page.locator("tr[data-task-id=buggy]").click()
        detail = page.locator("#detail")
        expect(detail.locator("p.triage")).to_contain_text("Triage: grader_defect: grader 'share' (exception)")
        trace = detail.locator("details.traceback")
        expect(trace).to_have_count(1)
        trace.locator("summary").click()
        expect(trace).to_contain_text("ZeroDivisionError: division by zero")
        expect(trace).to_contain_text("return done / total")
        assert opened.errors == []
