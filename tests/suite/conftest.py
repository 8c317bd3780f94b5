"""Helpers for the suite-format tests: write a suite, load it, collect problems and warnings."""

from __future__ import annotations

import pytest

from waza_core import untrusted
from waza_core.errors import SuiteError
from waza_core.suite import cache as cache_mod
from waza_core.suite.load import load_suite

TASK = "id: t1\ninputs:\n  prompt: hello\n"

#: the opt-out of the no-grader load error (waza_core/suite/ungraded.py): these suites test
#: other things, and their tasks (TASK) have no grader
UNGRADED_OK = "allow_ungraded: true\n"

LEGACY = """\
name: demo
skill: demo
config:
  executor: mock
tasks: ["tasks/*.yaml"]
""" + UNGRADED_OK

SCENARIO = """\
schemaVersion: "2.0"
scenario: release-notes
name: demo
config:
  executor: mock
tasks: ["tasks/*.yaml"]
""" + UNGRADED_OK


@pytest.fixture
def load(make_suite, registry):
    """``load(eval_yaml, tasks=None, files=None, strict=False)`` -> Suite."""

    def go(eval_yaml: str, tasks: dict | None = None, files: dict | None = None, strict: bool = False):
        path = make_suite(eval_yaml, {"tasks/t1.yaml": TASK} if tasks is None else tasks, files)
        return load_suite(path, registry, strict=strict)

    return go


@pytest.fixture
def problems(load):
    """``problems(...)`` -> the SuiteError's problem lines (fails when the suite loads)."""

    def go(*args, **kwargs) -> list[str]:
        with pytest.raises(SuiteError) as exc:
            load(*args, **kwargs)
        return exc.value.problems

    return go


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A suite cache folder of this test's own, the cache on."""
    d = tmp_path / "cache"
    monkeypatch.setenv("WAZA_CACHE_DIR", str(d))
    monkeypatch.delenv("WAZA_NO_CACHE", raising=False)
    return d


@pytest.fixture(params=["read", "mapped"])
def how_read(request, monkeypatch):
    """Every test twice: the cache file read whole, and mapped with its pages dropped after
    each line (what a large suite's file gets: waza_core.suite.cache.MAP_FROM_BYTES)."""
    if request.param == "mapped":
        if not untrusted.can_map():
            pytest.skip("this platform cannot drop the pages of a mapping")
        monkeypatch.setattr(cache_mod, "MAP_FROM_BYTES", 1)
        monkeypatch.setattr(cache_mod, "DROP_EVERY_BYTES", 1)
    return request.param
