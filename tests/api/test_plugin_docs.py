"""docs/plugins.md documents the public surface only, and its example plugin is real code.

Each ``<!-- include: PATH -->`` marker is followed by a code block that must be the file
at PATH, verbatim; the files are the waza-shout distribution, which
tests/api/test_third_party_plugin.py installs and uses. So a plugin written from the
doc is a plugin that works.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import waza_core
from tests.conftest import REPO

DOC = REPO / "docs" / "plugins.md"
INCLUDE = re.compile(r"<!-- include: (?P<path>\S+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)
SHOUT = REPO / "examples" / "plugins" / "waza-shout"


def includes() -> list[tuple[str, str]]:
    return [(m["path"], m["body"]) for m in INCLUDE.finditer(DOC.read_text("utf-8"))]


def test_each_included_file_is_shown_verbatim():
    found = includes()
    assert found, "no include markers in docs/plugins.md"
    for path, body in found:
        assert body == (REPO / path).read_text("utf-8"), (
            f"docs/plugins.md shows an old copy of {path}: paste the file into the block after its include marker")


def test_one_complete_plugin_of_each_kind_is_included():
    shown = {p for p, _ in includes()}
    for module in ("grader", "executor", "adapter", "dialect", "reporter"):
        assert f"examples/plugins/waza-shout/waza_shout/{module}.py" in shown
    assert "examples/plugins/waza-shout/pyproject.toml" in shown
    assert "examples/plugins/waza-shout/tests/test_shout.py" in shown


def test_the_doc_names_every_public_name():
    text = DOC.read_text("utf-8")
    missing = [name for name in waza_core.__all__ if f"`{name}`" not in text and name != "__version__"]
    assert missing == []


def test_the_doc_uses_no_private_module():
    text = DOC.read_text("utf-8")
    private = sorted(set(re.findall(r"waza_core\.(?!testing\b)([a-z_]+)\.[a-z_]+", text))
                     | set(re.findall(r"from waza_core\.(?!testing\b)([a-z_.]+) import", text)))
    assert private == []
    names = set(re.findall(r"waza_core\.([A-Za-z_]+)", text)) - {"testing", "__all__"}
    assert names <= set(waza_core.__all__), names - set(waza_core.__all__)


@pytest.mark.parametrize("example", ["waza-shout", "waza-wordcount"])
def test_the_example_plugin_tests_pass(example):
    """The example tests are what a plugin author writes: run them as they would."""
    plugin = REPO / "examples" / "plugins" / example
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(REPO)]), "WAZA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=plugin,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
