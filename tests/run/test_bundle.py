"""What travels to Ray workers (waza_core/run/ray_bundle.py), without a cluster."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile

import pytest

from waza_core.errors import WazaError
from waza_core.run import ray_bundle
from waza_core.run.prepared import UnitSettings
from waza_core.run.recipe import SuiteRecipe


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Unpack into this test's own temporary folder."""
    tmp = tmp_path / "node-tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def _project(tmp_path):
    """A project folder with a suite below it, an outside fixtures folder and odd entries."""
    project = tmp_path / "project"
    suite = project / "evals" / "demo"
    (suite / "graders").mkdir(parents=True)
    (suite / "eval.yaml").write_text("name: demo\n")
    script = suite / "graders" / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    os.symlink("graders/check.sh", suite / "inside-link")
    outside = tmp_path / "secret.txt"
    outside.write_text("not for workers")
    os.symlink(str(outside), suite / "absolute-link")
    os.symlink("../../../secret.txt", suite / "escaping-link")
    os.mkfifo(suite / "pipe")
    fixtures = tmp_path / "fixtures"
    (fixtures / "repo").mkdir(parents=True)
    (fixtures / "repo" / "a.py").write_text("print(1)\n")
    (project / ".waza.yaml").write_text("graders:\n  programTimeout: 7\n")
    recipe = SuiteRecipe(str(suite / "eval.yaml"), ("my_plugin",),
                         UnitSettings(executor="mock", context_dir=str(fixtures)), ("t1",))
    return project, suite, fixtures, recipe


def test_bundle_ships_the_suite_and_fixtures_and_rewrites_paths(tmp_path, private_tmp):
    project, suite, fixtures, recipe = _project(tmp_path)
    bundle = ray_bundle.make_bundle(recipe, {"DEMO_KEY": "k"}, cwd=str(project),
                                    project_file=project / ".waza.yaml")
    spec = bundle.spec
    assert spec.cwd == "work" and dict(spec.environment) == {"DEMO_KEY": "k"}
    calls = []
    tree = ray_bundle.unpack_once(spec.digest, lambda: calls.append(1) or bundle.data)
    work = tree / "work"
    assert (work / "evals" / "demo" / "eval.yaml").read_text() == "name: demo\n"
    assert os.access(work / "evals" / "demo" / "graders" / "check.sh", os.X_OK)  # modes travel
    assert os.readlink(work / "evals" / "demo" / "inside-link") == "graders/check.sh"
    for left_out in ("absolute-link", "escaping-link", "pipe"):
        assert not os.path.lexists(work / "evals" / "demo" / left_out), left_out
    assert (work / ".waza.yaml").read_text() == "graders:\n  programTimeout: 7\n"
    local = spec.local_recipe(tree)
    assert local.suite_file == str(work / "evals" / "demo" / "eval.yaml")
    assert local.settings.context_dir == str(tree / "context")
    assert (tree / "context" / "repo" / "a.py").read_text() == "print(1)\n"
    assert local.plugins == ("my_plugin",) and local.task_ids == ("t1",)
    # a second worker of the node uses the same tree and fetches nothing
    assert ray_bundle.unpack_once(spec.digest, lambda: pytest.fail("fetched twice")) == tree
    assert calls == [1]
    base = ray_bundle.cache_root()
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o700
    other_worker = base / f"{spec.digest}.users" / str(os.getppid())  # a live process using the tree
    other_worker.touch()
    ray_bundle.release(spec.digest)
    assert tree.exists()  # the other worker still uses it
    other_worker.unlink()
    ray_bundle.release(spec.digest)
    assert not tree.exists() and not (base / spec.digest).exists()
    assert not (base / f"{spec.digest}.users").exists()


def test_working_directory_is_the_suite_folder_when_the_driver_ran_elsewhere(tmp_path, private_tmp):
    _project_dir, suite, _fixtures, recipe = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(elsewhere))
    assert bundle.spec.cwd == "work"
    tree = ray_bundle.unpack_once(bundle.spec.digest, lambda: bundle.data)
    assert (tree / "work" / "eval.yaml").exists()
    assert bundle.spec.local_recipe(tree).suite_file == str(tree / "work" / "eval.yaml")
    ray_bundle.release(bundle.spec.digest)


def test_driver_in_a_subfolder_of_the_suite(tmp_path, private_tmp):
    _project_dir, suite, _fixtures, recipe = _project(tmp_path)
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(suite / "graders"))
    assert bundle.spec.cwd == "work/graders"
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(suite))
    assert bundle.spec.cwd == "work"


def test_too_big_a_suite_is_exit_2(tmp_path, monkeypatch):
    _project_dir, suite, _fixtures, recipe = _project(tmp_path)
    monkeypatch.setattr(ray_bundle, "MAX_BUNDLE_BYTES", 10)
    with pytest.raises(WazaError, match="larger than"):
        ray_bundle.make_bundle(recipe, {}, cwd=str(tmp_path))


def test_a_shared_cache_folder_of_another_mode_is_refused(private_tmp):
    base = private_tmp / f"waza-ray-{os.getuid()}"
    base.mkdir(mode=0o777)
    os.chmod(base, 0o777)
    with pytest.raises(WazaError, match="mode 0700"):
        ray_bundle.cache_root()


def test_workers_that_died_do_not_keep_the_tree(tmp_path, private_tmp):
    _project_dir, _suite, _fixtures, recipe = _project(tmp_path)
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(tmp_path))
    tree = ray_bundle.unpack_once(bundle.spec.digest, lambda: bundle.data)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (ray_bundle.cache_root() / f"{bundle.spec.digest}.users" / str(dead.pid)).touch()  # a killed worker
    ray_bundle.release(bundle.spec.digest)
    assert not tree.exists()


def test_a_worker_left_a_zombie_does_not_keep_the_tree(tmp_path, private_tmp):
    """A worker killed with its node may stay a zombie (its new parent, a subreaper, never
    reaps it): its pid still answers signal 0, but it is not running."""
    import time

    _project_dir, _suite, _fixtures, recipe = _project(tmp_path)
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(tmp_path))
    tree = ray_bundle.unpack_once(bundle.spec.digest, lambda: bundle.data)
    zombie = subprocess.Popen(["true"])  # exits, and is not waited for until the end
    try:
        deadline = time.monotonic() + 10
        while b") Z" not in open(f"/proc/{zombie.pid}/stat", "rb").read() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(zombie.pid, 0)  # the pid still answers
        (ray_bundle.cache_root() / f"{bundle.spec.digest}.users" / str(zombie.pid)).touch()
        ray_bundle.release(bundle.spec.digest)
        assert not tree.exists()
    finally:
        zombie.wait()


def test_a_sweep_waits_for_killed_workers_then_removes_the_tree(tmp_path, private_tmp):
    """A worker killed by the driver never releases the tree, and may still be dying when
    the last worker that did release looked: the driver's sweep on each node waits for
    the users to be gone, and leaves a tree a live worker still uses."""
    import threading

    _project_dir, _suite, _fixtures, recipe = _project(tmp_path)
    bundle = ray_bundle.make_bundle(recipe, {}, cwd=str(tmp_path))
    digest = bundle.spec.digest
    tree = ray_bundle.unpack_once(digest, lambda: bundle.data)  # this process: a live user
    dying = subprocess.Popen(["sleep", "30"])
    try:
        (ray_bundle.cache_root() / f"{digest}.users" / str(dying.pid)).touch()
        (ray_bundle.cache_root() / f".{digest}-half").mkdir()  # a worker killed while unpacking
        ray_bundle.release(digest)  # the last worker that says so: the dying one still runs
        assert tree.exists()
        assert ray_bundle.sweep(digest, 0.3) is False and tree.exists()  # still there after the wait
        threading.Timer(0.3, dying.kill).start()
        threading.Timer(0.4, dying.wait).start()
        assert ray_bundle.sweep(digest, 10) is True  # waited for it to die
        assert not tree.exists() and not (ray_bundle.cache_root() / f"{digest}.users").exists()
        assert not (ray_bundle.cache_root() / f".{digest}-half").exists()
    finally:
        dying.kill()
        dying.wait()
    assert ray_bundle.sweep(digest, 0) is True  # a node that has no copy: nothing to do
