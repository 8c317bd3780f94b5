"""Grader entries are keyed by name: their ``name``, else their ``type`` (``type_N`` when
that is taken). The common case (every entry named) takes a short path; both agree."""

from __future__ import annotations

import pytest

from waza_core.suite.load import grader_names


@pytest.mark.parametrize(("entries", "names"), [
    ([{"type": "text", "name": "a"}, {"type": "text", "name": "b"}], ["a", "b"]),  # every entry named
    ([], []),
    ("not a list", []),
    ([{"type": "text"}, {"type": "text"}], ["text", "text_2"]),
    ([{"type": "text", "name": "text"}, {"type": "text"}], ["text", "text_2"]),
    ([{"type": "text"}, {"type": "text", "name": "text"}], ["text_1", "text"]),
    ([{"type": "text", "name": "a"}, "oops", {"name": 3}, {"type": ""}], ["a", None, None, None]),
    ([{"type": "code", "name": 5}, {"type": "code", "name": "code"}], ["code_1", "code"]),
])
def test_grader_names(entries, names):
    assert grader_names(entries) == names
