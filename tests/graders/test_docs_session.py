"""The examples of the prompt and session grader pages run as written and give the
verdicts the pages show (same markers and checker as tests/graders/test_docs.py)."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

from .test_docs import test_page_example_runs_and_gives_the_verdicts_shown as check_page

PAGES = ["prompt", "behavior", "action_sequence", "skill_invocation", "tool_constraint", "tool_calls"]


@pytest.mark.parametrize("page", PAGES)
def test_page_example_runs_and_gives_the_verdicts_shown(page, tmp_path, waza):
    check_page(page, tmp_path, waza)


def test_every_page_is_linked_from_the_index():
    index = (REPO / "docs" / "index.md").read_text("utf-8")
    assert all(f"graders/{page}.md" in index for page in PAGES)
