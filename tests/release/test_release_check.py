"""What a user installs: the sdist and the wheel built from it, each in a fresh virtual environment,
used from a folder outside the checkout (scripts/release_check.sh does the work; this runs it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the release check is a bash script")

def test_sdist_and_wheel_install_and_run_outside_the_checkout():
    done = subprocess.run(["bash", str(REPO / "scripts" / "release_check.sh"), sys.executable],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    for what in ("wheel", "sdist"):
        assert f"{what}: every built-in plugin loads" in out
        assert f"{what}: waza schema results, and the results file validates against it" in out
    assert out.rstrip().endswith("release check: all checks passed")

def test_the_sdist_lists_every_package():
    """The sdist's include list names every package the wheel ships (it once left out waza_reporters)."""

    conf = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["hatch"]["build"]["targets"]
    wheel = set(conf["wheel"]["packages"])
    sdist = {entry.strip("/") for entry in conf["sdist"]["include"]}
    assert wheel <= sdist
    on_disk = {p.parent.name for p in REPO.glob("waza_*/__init__.py")}
    assert on_disk == wheel
