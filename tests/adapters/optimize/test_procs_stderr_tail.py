"""The ``stderr_tail`` option of :func:`waza_core.procs.run` (added for the command
adapter): stderr keeps its last bytes, where a crash says why, and a chatty stderr
never counts as an overflow, even with ``kill_on_overflow``."""

from __future__ import annotations

import os
import sys

import pytest

from tests import proc_helpers
from waza_core.procs import run

PY = sys.executable

pytestmark = pytest.mark.skipif(os.name != "posix", reason="procs is POSIX only")


exit_watch = proc_helpers.exit_watch  # autouse: every test runs with pidfd and with the waiter thread


NOISY = "import sys\nfor i in range(100000):\n    sys.stderr.write(f'{i:06d}\\n')\nsys.stderr.write('END\\n')\n"


def test_tail_keeps_the_last_bytes():
    result = run([PY, "-c", NOISY], max_stderr=1000, stderr_tail=True, timeout=60)
    assert result.returncode == 0 and result.stderr_truncated
    assert len(result.stderr) == 1000 and result.stderr.endswith(b"099999\nEND\n")


def test_head_is_still_the_default():
    result = run([PY, "-c", NOISY], max_stderr=1000, timeout=60)
    assert result.stderr.startswith(b"000000\n") and len(result.stderr) == 1000 and result.stderr_truncated


def test_tail_is_not_an_overflow_but_stdout_still_is():
    quiet_stdout = run([PY, "-c", NOISY], max_stdout=10, max_stderr=100, stderr_tail=True,
                       kill_on_overflow=True, timeout=60)
    assert not quiet_stdout.overflowed and quiet_stdout.returncode == 0
    flood = run([PY, "-c", "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)\n"], max_stdout=10_000,
                max_stderr=100, stderr_tail=True, kill_on_overflow=True, timeout=60)
    assert flood.overflowed and len(flood.stdout) == 10_000


def test_short_stderr_is_kept_whole():
    result = run([PY, "-c", "import sys; sys.stderr.write('short')"], max_stderr=1000, stderr_tail=True)
    assert result.stderr == b"short" and not result.stderr_truncated
