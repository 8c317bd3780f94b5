"""The HTML report in a real headless Chromium: an A/B run's "Skill impact" section (the
paired test's line, its verdict, each task's change) and each task's trial spread in the
task table (passed out of graded trials, and the score range when there are several)."""

from __future__ import annotations

import pytest

from tests.reporters.browser import open_report
from tests.reporters.conftest import waza_ci
from tests.reporters.test_comparison_reports import ab_run  # noqa: F401  (the module's A/B run fixture)

pytestmark = pytest.mark.browser


def _expect(locator):
    from playwright.sync_api import expect

    return expect(locator)


def test_an_ab_report_shows_the_verdict_interval_and_each_tasks_change(ab_run):  # noqa: F811
    root, _ = ab_run
    with open_report(root / "ab.html") as opened:
        page = opened.page
        section = page.locator("#skill-impact")
        _expect(section).to_be_visible()
        text = section.text_content()
        assert "Skill impact" in text and "significant improvement" in text
        assert "mean task change +100.0 pp (95% CI +100.0 to +100.0" in page.text_content("#skill-impact .significance")
        assert section.locator("tbody tr").count() == 6
        assert "0.0%" in section.locator("tbody tr").first.text_content()
        assert "+100 pp" in section.locator("tbody tr").first.text_content()
        # the task table: two trials each, both passed, every score 1
        summaries = page.locator("#task-rows .trial-summary").all_text_contents()
        assert summaries == ["2/2 passed · score 1.00–1.00"] * 6
        assert opened.errors == []
        assert opened.remote_requests((root / "ab.html").resolve().as_uri()) == []


def test_the_task_table_shows_each_tasks_trial_spread(ci_results, tmp_path):
    out = tmp_path / "r.html"
    assert waza_ci("report", str(ci_results), "--html", str(out)).returncode == 0
    with open_report(out) as opened:
        page = opened.page
        rows = {page.locator("#task-rows tr.task-row").nth(i).get_attribute("data-task-id"):
                page.locator("#task-rows tr.task-row").nth(i).locator(".trial-summary").text_content()
                for i in range(page.locator("#task-rows tr.task-row").count())}
        assert page.locator("#skill-impact").count() == 0  # no comparison in this file
        assert opened.errors == []
    # an errored trial counts as graded and not passed; it has no score, so the range is the other trial's
    assert rows == {"stable-pass": "2/2 passed · score 1.00–1.00", "always-fails": "0/2 passed · score 0.00–0.00",
                    "flaky-task": "1/2 passed · score 0.00–1.00", "errors-task": "1/2 passed · score 1.00–1.00",
                    "hostile-task": "0/2 passed · score 0.50–0.50"}
