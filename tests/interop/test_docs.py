"""docs/interop.md shows what the commands really print."""

from __future__ import annotations

from tests.interop.helpers import ADAPTER, NOTICE, REPO, cli, exp, imp

DOC = (REPO / "docs" / "interop.md").read_text(encoding="utf-8")


def test_the_documented_example_is_the_real_output():
    suite = (REPO / "examples" / "interop" / "suite.yaml").read_bytes()
    first = imp(suite, test="contains-check", n="1")
    assert first.code == 0
    assert first.out.decode() in DOC
    assert NOTICE in DOC
    second = exp(first.out)
    assert second.out.decode() in DOC


def test_the_documented_list_output_is_real():
    assert cli("interop", "list").out.decode() in DOC


def test_every_documented_adapter_id_is_the_real_one():
    assert DOC.count("agentv-68df6d22") == DOC.count(ADAPTER)
