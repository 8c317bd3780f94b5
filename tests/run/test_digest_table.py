"""The columnar digests of finished tasks give back exactly the digests put in, in plan order."""

from __future__ import annotations

import random

import pytest

from waza_core.run.finish import DigestTable, TaskDigest, group_stats, suite_statistics


def _digests(n: int) -> list[TaskDigest]:
    statuses = ["passed", "failed", "error", "n/a", "weird"]
    groups = [(), ("a",), ("a", "b"), ("gpt-x",)]
    return [TaskDigest(statuses[i % 5], groups[i % 4], i % 3 != 0, i / 7, i / 9, i % 4, 3 + i % 2) for i in range(n)]


def test_digests_come_back_in_plan_order_whatever_order_they_finished_in():
    digests = _digests(50)
    table = DigestTable(60)  # ten tasks never finish
    order = list(range(50))
    random.Random(5).shuffle(order)
    for i in order:
        table.put(i, digests[i])
    back = list(table)
    assert back == [d._replace(scored=bool(d.scored)) for d in digests]
    assert list(table) == back  # it can be read again
    assert group_stats(table) == group_stats(digests)
    assert suite_statistics(table, 3) == suite_statistics(digests, 3)


def test_an_empty_table_has_no_digest():
    assert list(DigestTable(4)) == []
    assert suite_statistics(DigestTable(4), 3) is None


def test_the_grouped_digests_are_those_with_a_group_and_none_is_made_when_no_task_has_one(monkeypatch):
    digests = _digests(50)
    table = DigestTable(50)
    for i, d in enumerate(digests):
        table.put(i, d)
    assert list(table.grouped()) == [d._replace(scored=bool(d.scored)) for d in digests if d.groups]
    assert group_stats(table.grouped()) == group_stats(digests)

    plain = DigestTable(50)
    for i, d in enumerate(digests):
        plain.put(i, d._replace(groups=()))
    monkeypatch.setattr(DigestTable, "__iter__", lambda self: iter(pytest.fail("a digest was made")))
    assert list(plain.grouped()) == [] and group_stats(plain.grouped()) == []
