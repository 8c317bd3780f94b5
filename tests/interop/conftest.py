"""The AgentV oracle fixture: installs the pinned @agentv/core and runs oracle.mjs.

The conformance tests must run wherever the test suite runs (CI has Node.js and npm),
so a missing node, npm or failed install is a test failure, never a skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parent / "oracle"


class AgentV:
    """Talks to the real AgentV through ``oracle/oracle.mjs``."""

    def __init__(self, node: str) -> None:
        self.node = node

    def call(self, ops: list[dict]) -> list:
        with tempfile.TemporaryDirectory(prefix="waza-agentv-home-") as home:
            env = {"PATH": _path(), "HOME": home, "AGENTV_HOME": home, "LANG": "C.UTF-8"}
            proc = subprocess.run([self.node, str(ORACLE / "oracle.mjs")], input=json.dumps({"ops": ops}).encode(),
                                  capture_output=True, cwd=home, env=env, timeout=600)
        if proc.returncode != 0:
            raise AssertionError(f"oracle.mjs failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        return json.loads(proc.stdout)["results"]


def _path() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


@pytest.fixture(scope="session")
def agentv() -> AgentV:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.fail("the AgentV conformance tests need Node.js >= 20 and npm on PATH "
                    "(they run in CI and must not be skipped)")
    proc = subprocess.run(["bash", str(ORACLE / "install.sh")], capture_output=True, timeout=900)
    if proc.returncode != 0:
        pytest.fail(f"tests/interop/oracle/install.sh failed ({proc.returncode}):\n{proc.stderr.decode()[-3000:]}")
    return AgentV(node)
