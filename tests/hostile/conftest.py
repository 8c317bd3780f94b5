"""Helpers for the hostile-input tests: private device nodes, FIFOs and a tiny suite.

Never point a test at the machine's real ``/dev/null``, ``/dev/full`` or
``/dev/stdout``: a regression that renames over its target would replace them. Device
nodes with the same numbers are made in the test's own folder instead.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from tests.conftest import BASIC_EVAL

NULL_DEV = (1, 3)  # the numbers of /dev/null
FULL_DEV = (1, 7)  # the numbers of /dev/full


def make_device(path: Path, numbers: tuple[int, int]) -> Path:
    """A character device node in a test folder (needs root, as the CI runs)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*numbers))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def is_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


class FifoReader:
    """A FIFO in a test folder and a thread that reads everything written to it."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as fh:
            self.data = fh.read()

    def result(self, timeout: float = 30) -> bytes:
        self.thread.join(timeout)
        return self.data


@pytest.fixture
def small_suite(make_suite):
    """A two-task mock suite (one passing, one failing task)."""
    return make_suite(BASIC_EVAL, {
        "tasks/a.yaml": "id: a\ninputs: {prompt: hello}\nexpected: {output_contains: [hello]}\n",
        "tasks/b.yaml": "id: b\ninputs: {prompt: hello}\nexpected: {output_contains: [absent]}\n",
    })


def valid_results(data: bytes) -> dict:
    doc = json.loads(data)
    assert isinstance(doc, dict) and isinstance(doc["tasks"], list)
    return doc


def no_traceback(proc) -> None:
    err = proc.stderr.decode("utf-8", "replace") if isinstance(proc.stderr, bytes) else proc.stderr
    assert "Traceback" not in err, err
