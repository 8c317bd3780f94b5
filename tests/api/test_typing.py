"""The public surface type-checks: mypy on ``waza_core`` (strict flags, see pyproject.toml),
every module that defines an exported name, ``waza_core.testing``, and the example plugins
as a plugin author's code. One mypy run of a few seconds; no network."""

from __future__ import annotations

import subprocess
import sys

import pytest

import waza_core
from tests.conftest import REPO


def surface_files() -> list[str]:
    modules = {"waza_core/__init__.py", "waza_core/testing.py", "waza_core/plugins.py"}
    modules |= {m.replace(".", "/") + ".py" for m in waza_core._EXPORTS.values()}
    return sorted(modules) + ["examples/plugins/waza-shout/waza_shout",
                              "examples/plugins/waza-wordcount/waza_wordcount"]


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    pytest.importorskip("mypy")  # in the test extra: pip install -e '.[test]'
    tmp = tmp_path_factory.mktemp("typing")
    # a plugin author with no implicit re-export (mypy --strict) importing every public name
    (tmp / "uses_all.py").write_text("# mypy: no-implicit-reexport\n"
                                     "from waza_core import " + ", ".join(waza_core.__all__) + "\n"
                                     "from waza_core import testing\n"
                                     "grade = testing.grade\n")
    # and one that gets a type wrong, to show the check can fail
    (tmp / "bad_plugin.py").write_text("from waza_core import Grader\nclass G(Grader):\n    name = 1\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp / "cache"), *surface_files(),
                           str(tmp / "uses_all.py"), str(tmp / "bad_plugin.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    return proc


def test_mypy_is_clean_on_the_public_surface(mypy_run):
    errors = [line for line in mypy_run.stdout.splitlines() if ": error:" in line]
    assert [e for e in errors if "bad_plugin.py" not in e] == [], mypy_run.stdout[-5000:]


def test_the_check_finds_a_type_error(mypy_run):
    assert mypy_run.returncode == 1
    assert any("bad_plugin.py:3: error" in line for line in mypy_run.stdout.splitlines()), mypy_run.stdout
