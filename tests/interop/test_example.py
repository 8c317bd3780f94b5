"""examples/interop/run.sh passes with this checkout's waza, and keeps its scratch folder."""

from __future__ import annotations

import subprocess
import sys

from tests.interop.helpers import REPO, child_env

SCRIPT = REPO / "examples" / "interop" / "run.sh"


def test_example_round_trip_passes_and_reports_its_scratch_folder(tmp_path):
    proc = subprocess.run(["bash", str(SCRIPT), sys.executable, "-m", "waza_core"], cwd=tmp_path,
                          capture_output=True, env=child_env(TMPDIR=str(tmp_path)), timeout=300)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "ran passing control: exit 0 as expected" in out
    assert "ran failing control: exit 1 as expected" in out
    assert out.rstrip().splitlines()[-2:][0] == "OK"
    scratch = out.rstrip().splitlines()[-1].split(": ", 1)[1]
    assert scratch.startswith(str(tmp_path))
    for name in ("one-native-grader.yaml", "agentv-assertion.yaml", "round-trip-grader.yaml",
                 "passing/results.json", "failing/results.json"):
        assert (tmp_path / scratch / name).is_file(), name


def test_example_failure_still_reports_the_scratch_folder(tmp_path):
    fake = tmp_path / "broken-waza"
    fake.write_text("#!/bin/sh\necho 'waza: error: simulated' >&2\nexit 2\n")
    fake.chmod(0o755)
    proc = subprocess.run(["bash", str(SCRIPT), str(fake)], capture_output=True, env=child_env(TMPDIR=str(tmp_path)),
                          timeout=60)
    assert proc.returncode == 1
    assert b"run.sh: FAILED: import: waza: error: simulated" in proc.stderr
    assert b"scratch folder (kept; inspect it before removing it): " + str(tmp_path).encode() in proc.stdout


def test_example_never_deletes_anything():
    text = SCRIPT.read_text()
    assert "rm " not in text and "rmdir" not in text and "find " not in text
