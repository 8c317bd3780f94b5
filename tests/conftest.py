"""Shared fixtures: build suites on disk and run the real ``waza`` command."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import tests.depth  # noqa: F401  (the hypothesis profiles, registered before --hypothesis-profile is read)

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    """Children start with SIGINT at its default even when pytest was started ignoring it (a
    background job of a shell without job control ignores SIGINT, and that is inherited
    across exec): the Ctrl-C tests send SIGINT to a waza that, rightly, keeps an inherited
    "ignore". Python's handler is replaced by the default in the children it starts."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: interpreter names that examples and test suites start by name (``python3 judge.py``)
_PYTHON_NAMES = ("python3", "python")


@pytest.fixture(autouse=True, scope="session")
def _interpreters_without_a_dispatcher(tmp_path_factory):
    """Where ``python3`` on PATH is a dispatcher script (a pyenv shim: about 70 ms of CPU
    before the interpreter starts, more than the interpreter itself), put a folder first on
    PATH whose ``python3`` links straight to the interpreter the dispatcher picks: the same
    interpreter, started the way a plain install starts it. Hundreds of the tests' child
    processes (judges, graders, hooks, mock scripts) start ``python3`` by name."""
    links = tmp_path_factory.mktemp("python-on-path")
    for name in _PYTHON_NAMES:
        found = shutil.which(name)
        if found is None:
            continue
        with open(found, "rb") as head:
            if head.read(2) != b"#!":
                continue  # a binary (or a link to one): nothing in between
        proc = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                              timeout=60)
        real = proc.stdout.strip()
        if proc.returncode == 0 and real and os.path.isfile(real):
            (links / name).symlink_to(real)
    if any(links.iterdir()):
        os.environ["PATH"] = f"{links}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Keep the suite cache of every test (and every waza subprocess) out of $HOME, and the
    key that seals its eval lines (waza_core/suite/seal.py, under $XDG_STATE_HOME) too."""
    os.environ["WAZA_CACHE_DIR"] = str(tmp_path_factory.mktemp("waza-cache"))
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder that ``build`` fills once per test run and every pytest-xdist worker then uses
    (a virtual environment that takes half a minute of pip, say): the pattern of
    pytest-xdist's docs, the workers' common temporary root and a lock. A failed build
    leaves nothing marked done, so the next worker to ask tries again (and fails the same)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the workers of this run only
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def make_suite(tmp_path):
    """Write an eval.yaml and task files; returns the eval.yaml path."""

    def make(eval_yaml: str, tasks: dict[str, str] | None = None, files: dict[str, str] | None = None) -> Path:
        root = tmp_path / "suite"
        write(root / "eval.yaml", eval_yaml)
        for name, text in (tasks or {}).items():
            write(root / name, text)
        for name, text in (files or {}).items():
            write(root / name, text)
        return root / "eval.yaml"

    return make


def run_waza(*args: str, cwd: Path | None = None, env: dict | None = None, input: bytes | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess (exit codes, stderr, no traceback)."""
    full_env = dict(os.environ)
    full_env.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "waza_core", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def waza():
    return run_waza


@pytest.fixture
def registry(monkeypatch):
    from waza_core.plugins import build_plugin_manager

    monkeypatch.setenv("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    return build_plugin_manager()[1]


#: a suite for tests about other things than grading; ``allow_ungraded`` lets its tasks
#: load without a grader (a task that nothing grades is a load error otherwise:
#: waza_core/suite/ungraded.py)
BASIC_EVAL = """
name: basic
skill: demo
config:
  executor: mock
  trials_per_task: 1
  timeout_seconds: 30
tasks: ["tasks/*.yaml"]
allow_ungraded: true
"""


#: test files whose tests must share one pytest-xdist worker, by group name: ``ray`` (the tests
#: that start a local Ray cluster: two clusters at once would fight over the machine's cores
#: and the cluster's default ports) and ``third-party-venv`` (the other worker would only wait
#: for the virtual environment the first one builds).
#:
#: Why files and not ``xdist_group`` marks: pytest-xdist 3.8 groups by a suffix it writes into
#: ``item._nodeid``, which pytest 9.2 no longer reads (node ids are built from ``item._id``),
#: so ``--dist loadgroup`` silently spread marked tests over every worker. The scheduler
#: below groups by file on the controller, which sees only node ids.
XDIST_GROUPS = {"tests/run/test_ray_cluster.py": "ray", "tests/api/test_third_party_plugin.py": "third-party-venv",
                # one module-scoped mypy run (about 6 s) or one shared browser (about 1.5 s a start)
                # serves the whole file only on one worker
                "tests/api/test_typing.py": "mypy", "tests/reporters/test_html_browser.py": "html-browser"}


#: the test files with the longest single tests (measured with ``--durations``: the release
#: build, the npm oracles, examples run twice, real browsers, graders that must time out), run
#: first: pytest-xdist hands out tests in collection order, and one of these starting last would
#: keep one worker busy while the other has nothing left to do. Longest first.
LONG_FIRST = [
    "tests/release/test_release_check.py",
    "tests/interop/test_promptfoo_oracle.py",
    "tests/suite/test_migrate_examples.py",
    "tests/interop/test_agentv_conformance.py",
    "tests/reporters/test_html_browser.py",
    "tests/hostile/test_grading_limits.py",
    "tests/run/test_judge_agreement.py",
    "tests/untrusted/test_mcp_replies.py",
    "tests/graders/program/test_grade.py",
    "tests/run/test_spend_cap.py",
    "tests/test_procs.py",
    "tests/suite/test_tasks_from.py",
    "tests/mocks/test_runs.py",
]


def pytest_collection_modifyitems(config, items):
    """The files of :data:`LONG_FIRST` go first (each file's tests keep their order; every worker
    sorts the same way, so their collections stay equal). Every test marked ``ray`` must be in
    a file of the ``ray`` group (else it could start a second cluster on another worker):
    checked at collection, so the list cannot drift."""
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    for item in items:
        if item.get_closest_marker("ray") is not None:
            where = item.nodeid.split("::", 1)[0]
            if XDIST_GROUPS.get(where) != "ray":
                raise pytest.UsageError(f"{where} has tests marked ray: add it to XDIST_GROUPS in tests/conftest.py")


def pytest_runtest_teardown(item, nextitem):
    """The headless browser tests/reporters/browser.py shares between the reports of one test
    file ends with that file, before a test of another file runs (see ``_browser`` there why)."""
    browser = sys.modules.get("tests.reporters.browser")
    if browser is not None and (nextitem is None or nextitem.path != item.path):
        browser.stop()


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups of :data:`XDIST_GROUPS` (see there why)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FileGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = XDIST_GROUPS.get(nodeid.split("::", 1)[0])
            return group if group is not None else super()._split_scope(nodeid)

    return FileGroupScheduling(config, log)
