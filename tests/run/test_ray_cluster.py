"""``--backend ray`` on a real Ray cluster: a head and two worker nodes on this
machine, every one bound to 127.0.0.1 (``pytest -m ray`` runs these alone).

One cluster serves the module (starting it takes most of the time): the SIGTERM and
resume test runs first, the node-removal test last, since it takes a node away.
Each test checks that no process of the cluster listens on anything but 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.run.helpers import gradings, journal_tasks, slow_suite
from waza_core.suite.schema import plain_validator

pytestmark = pytest.mark.ray

#: object store of each node: Ray's smallest useful size (the machine is shared)
STORE_BYTES = 80 * 1024 * 1024
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # else Ray swaps 127.0.0.1 for the network address
           "RAY_USAGE_STATS_ENABLED": "0"}


@pytest.fixture(scope="module")
def cluster():
    # The cluster's session folders and waza's unpacked suites on its nodes go to a temporary
    # folder of this module's own (TMPDIR for every process of the cluster and every driver),
    # removed at the end: nothing is left in the machine's temporary folder. Its path is short:
    # Ray's socket paths inside it must fit in 107 bytes.
    scratch = tempfile.mkdtemp(prefix="r")
    saved = {k: os.environ.get(k) for k in (*RAY_ENV, "TMPDIR")}
    os.environ.update(RAY_ENV, TMPDIR=scratch)  # before Ray is imported: it reads them once
    tempfile.tempdir = None
    try:
        pytest.importorskip("ray")
        from ray.cluster_utils import Cluster

        node = {"node_ip_address": "127.0.0.1", "object_store_memory": STORE_BYTES}
        # one CPU per worker node: a run's pool is one actor per CPU, each a process that imports
        # Ray and waza (about 1 s of CPU); two actors on two nodes test the same spread and retries
        c = Cluster(initialize_head=True,
                    head_node_args={**node, "num_cpus": 0, "include_dashboard": False})
        try:
            workers = [c.add_node(**node, num_cpus=1) for _ in range(2)]
            c.wait_for_nodes()
            yield c, workers
        finally:
            c.shutdown()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)


def _waza(*args: str) -> subprocess.Popen:
    env = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", **RAY_ENV)
    return subprocess.Popen([sys.executable, "-m", "waza_core", "run", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(predicate, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


# -- what runs on this machine -------------------------------------------------------------


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _listening_addresses(pids: set[int]) -> set[str]:
    """The local addresses of the TCP sockets these processes listen on."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                found.add(cols[1].rsplit(":", 1)[0])
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def _assert_loopback_only() -> None:
    addresses = _listening_addresses(_descendants(os.getpid()))
    assert addresses, "no cluster process found"
    assert addresses <= LOOPBACK, f"a cluster process listens beyond 127.0.0.1: {addresses - LOOPBACK}"


def _processes_with(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if text.encode() in fh.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _unpacked(log: Path) -> set[str]:
    """The copies of one test's suite (its eval.yaml names the test's own ``log``) unpacked on
    this machine's nodes (all nodes share the module's TMPDIR), with their ``.users`` folders.
    Only this test's own suite: another test's copies (the optimizer test's Ray actors may still
    be unpacking while the next test starts) are not this test's to judge."""
    cache = Path(tempfile.gettempdir()) / f"waza-ray-{os.getuid()}"
    if not cache.is_dir():
        return set()
    ours = set()
    for tree in cache.glob("*/tree"):
        if any(str(log) in f.read_text(errors="replace") for f in tree.rglob("eval.yaml") if f.is_file()):
            ours |= {tree.parent.name, f"{tree.parent.name}.users"}
    return {name for name in ours if (cache / name).exists()}


def _results(out: Path) -> dict:
    doc = json.loads(out.read_bytes())
    assert not list(plain_validator("results").iter_errors(doc))
    return doc


# -- the tests (in this order) -----------------------------------------------------------------


def test_sigterm_stops_the_remote_runs_and_resume_finishes(cluster, tmp_path):
    c, _workers = cluster
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", 16, log, sleep=0.5)
    journal, out = tmp_path / "runs.jsonl", tmp_path / "out.json"
    assert not _unpacked(log)  # a new suite: no copy of it yet
    proc = _waza(str(suite), "--backend", "ray", "--ray-address", c.address, "--journal", str(journal),
                 "-o", str(out))
    try:
        _wait_for(lambda: journal.exists() and journal.read_bytes().count(b"\n") >= 4)
        assert _unpacked(log)  # the workers run from their copy of this suite (the check sees it)
        _assert_loopback_only()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    # 143 once SIGTERM reports itself as such (signals.py); 130 (interrupted) before
    assert proc.returncode in (130, 143), stderr.decode()
    assert b"Traceback" not in stderr
    doc = _results(out)
    assert doc["incomplete"] is True
    finished = sorted(t["test_id"] for t in doc["tasks"])
    assert 3 <= len(finished) < 16
    assert sorted(journal_tasks(journal)) == finished  # every aggregated run was journaled first
    # the actors and the graders they ran are gone, and so is the unpacked suite
    _wait_for(lambda: not _processes_with("ray::RunWorker") and not _processes_with(str(log)), timeout=30)
    left_after_sigterm = _unpacked(log)  # judged at the end, after the resumed run's own checks

    before = gradings(log)
    proc = _waza(str(suite), "--backend", "ray", "--ray-address", c.address, "--resume", str(journal),
                 "-o", str(out), "-q")
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()
    doc = _results(out)
    assert doc["incomplete"] is False and len(doc["tasks"]) == 16
    after = gradings(log)
    assert all(after[t] == before[t] for t in finished)  # journaled runs are not run again
    assert set(after) == {f"t{i:02d}" for i in range(1, 17)}
    assert not _unpacked(log) - left_after_sigterm  # a finished run leaves no copy of its own
    if left_after_sigterm:
        # Known defect (seen once in a full run under load): ray.kill is asynchronous, so an
        # actor killed while still starting may unpack its copy after the driver's sweep looked;
        # the copy stays until the next run of the same suite on that node (as just above).
        pytest.xfail(f"the SIGTERMed run left its unpacked copy behind: {sorted(left_after_sigterm)}")


def test_optimize_evaluates_on_the_cluster(cluster, tmp_path):
    """The optimizer's evaluations (a candidate's files materialized in a fresh folder)
    run on the workers with --backend ray; this process is the driver."""
    import ray

    from tests.optimize.conftest import Suite, files

    c, _workers = cluster
    try:
        r = Suite(tmp_path).run([files("alpha beta gamma delta")], backend="ray", ray_address=c.address)
    finally:
        ray.shutdown()
    assert r.outcome == "accepted", r.message
    workers = set()
    for path in (r.out / "evidence").rglob("*.json"):
        doc = json.loads(path.read_bytes())
        workers |= {run["worker"] for t in doc.get("tasks", ()) for run in t["runs"]}
    assert workers and all(len(w) == 56 for w in workers), workers  # Ray node ids, not "local"


def test_a_worker_node_removed_mid_run_loses_nothing_and_doubles_nothing(cluster, tmp_path):
    c, workers = cluster
    tasks = 24  # about 8 graded before the node goes, the rest after
    log = tmp_path / "graded.log"
    suite = slow_suite(tmp_path / "suite", tasks, log, sleep=0.5)
    out = tmp_path / "out.json"
    assert not _unpacked(log)  # a new suite: no copy of it yet
    proc = _waza(str(suite), "--backend", "ray", "--ray-address", c.address, "-o", str(out))
    try:
        _wait_for(lambda: sum(gradings(log).values()) >= 8)
        assert _unpacked(log)  # the workers run from their copy of this suite (the check sees it)
        _assert_loopback_only()
        c.remove_node(workers[1])
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr.decode()
    doc = _results(out)
    assert doc["incomplete"] is False
    assert sorted(t["test_id"] for t in doc["tasks"]) == [f"t{i:02d}" for i in range(1, tasks + 1)]
    runs = [r for t in doc["tasks"] for r in t["runs"]]
    assert len(runs) == tasks and all(r["status"] == "passed" for r in runs)
    nodes = Counter(r["worker"] for r in runs)
    assert len(nodes) >= 2, nodes  # spread over both worker nodes before one went away
    assert all(len(n) == 56 for n in nodes)  # Ray node ids
    graded = gradings(log)
    assert set(graded) == {f"t{i:02d}" for i in range(1, tasks + 1)}  # every task graded
    assert sum(n - 1 for n in graded.values()) <= 4, graded  # runs the lost node was grading
    assert b"lost with its Ray worker" in stderr  # the retry was reported
    assert not _unpacked(log)  # the lost node's workers do not keep the suite for ever
