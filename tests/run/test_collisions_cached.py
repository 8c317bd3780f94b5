"""The output collision check reads a task that came through the suite cache as bytes
first (its compact JSON is searched for the target's path parts before it is decoded and
walked): it must name exactly what walking every decoded document names."""

from __future__ import annotations

import attrs
import pytest

from tests.conftest import BASIC_EVAL
from waza_core.errors import WazaError
from waza_core.plugins import get_registry
from waza_core.run import collisions
from waza_core.suite.load import load_suite

#: files the task documents name (each beside the task files), spelled as a user might
NAMED = ["data.txt", "dé jà.json", "tab\tname.txt", 'quo"te.txt', "back\\slash.txt", "out/"]

TASK = """id: t{i}
inputs:
  prompt: use the file
  files:
    - path: {path}
graders:
  - type: text
    name: t
    config: {{contains: ["x"]}}
"""


def _outcome(targets, suite) -> str | None:
    try:
        collisions.check_outputs(targets, suite)
    except WazaError as exc:
        return str(exc)
    return None


@pytest.fixture
def suites(make_suite):
    tasks = {f"tasks/t{i}.yaml": TASK.format(i=i, path=_yaml_str(name)) for i, name in enumerate(NAMED)}
    files = {f"tasks/{name.rstrip('/')}": "x\n" for name in NAMED}
    eval_file = make_suite(BASIC_EVAL, tasks, files)
    registry = get_registry()
    load_suite(eval_file, registry)  # writes the suite cache
    cached = load_suite(eval_file, registry)
    assert all(task.raw_json is not None for task in cached.tasks), "the second load comes from the cache"
    decoded = attrs.evolve(cached, tasks=[attrs.evolve(task, raw=task.raw) for task in cached.tasks])
    assert all(task.raw_json is None for task in decoded.tasks)
    return eval_file.parent, cached, decoded


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


@pytest.mark.parametrize("name", NAMED + ["other.txt", "t0.yaml"])
def test_cached_and_decoded_documents_name_the_same_files(suites, name):
    root, cached, decoded = suites
    for target in (root / "tasks" / name.rstrip("/"), root / "other" / name, root / name):
        targets = [("-o x", str(target))]
        assert _outcome(targets, cached) == _outcome(targets, decoded)
    if name in NAMED:
        said = _outcome([("-o x", str(root / "tasks" / name.rstrip("/")))], cached)
        assert said is not None and "(named by task 't" in said


def test_an_escaped_name_in_a_cached_line_is_still_found(suites):
    """A line written with ``\\u`` escapes (by hand, not by waza) holds none of the name's
    bytes: it is walked anyway."""
    root, cached, _ = suites
    task = cached.tasks[0]
    escaped = attrs.evolve(task, raw=b'{"id":"t0","inputs":{"files":[{"path":"\\u0064ata.txt"}]}}')
    suite = attrs.evolve(cached, tasks=[escaped])
    said = _outcome([("-o x", str(root / "tasks" / "data.txt"))], suite)
    assert said is not None and "data.txt (named by task 't0')" in said
