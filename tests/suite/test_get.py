"""waza get: grader refs resolved from a real local Git repository (two versions) and a folder,
pinned in waza.lock; waza run uses only what the lock pins and refuses a changed module."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile

import pytest

from tests.conftest import write
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.suite import get as get_mod
from waza_core.suite import refs, yamlio

MODULE = "example.com/acme/graders"
MANIFEST = "schema_version: 1\nexports:\n  graders:\n    words:\n      path: graders/words.yaml\n"
V1 = "type: text\nname: words\nconfig:\n  contains: [\"mock response\"]\n"
V2 = "type: text\nname: words\nconfig:\n  contains: [\"never in a mock answer\"]\n"
EVAL = """name: refs
skill: s
config:
  executor: mock
graders:
  - ref: {ref}
tasks: ["tasks/*.yaml"]
"""


def git(*args, cwd):
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A Git repository with tag v1 (grader passes under mock) and v2 (it fails)."""
    r = tmp_path / "graders-repo"
    write(r / "waza.registry.yaml", MANIFEST)
    write(r / "graders" / "words.yaml", V1)
    git("init", "-q", "-b", "main", cwd=r)
    git("add", "-A", cwd=r)
    git("commit", "-q", "-m", "v1", cwd=r)
    git("tag", "v1", cwd=r)
    write(r / "graders" / "words.yaml", V2)
    git("commit", "-q", "-am", "v2", cwd=r)
    git("tag", "v2", cwd=r)
    return r


@pytest.fixture
def env(tmp_path):
    return {"WAZA_MODULE_CACHE": str(tmp_path / "cache")}


def suite(tmp_path, version: str):
    folder = tmp_path / "suite"
    write(folder / "eval.yaml", EVAL.format(ref=f"{MODULE}#words@{version}"))
    write(folder / "tasks" / "t.yaml", "id: t\ninputs: {prompt: hi}\n")
    return folder


def test_lock_pins_the_version_and_run_uses_it(waza, tmp_path, repo, env):
    folder = suite(tmp_path, "v1")
    res = waza("get", "eval.yaml", "--source", f"{MODULE}={repo}", cwd=folder, env=env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"Resolved 1 remote grader ref(s); wrote waza.lock\n"
    lock = yamlio.parse((folder / "waza.lock").read_text())
    v1 = git("rev-parse", "v1", cwd=repo)
    entry = lock["graders"][0]
    assert lock["schema_version"] == 1
    assert entry == {"ref": f"{MODULE}#words@v1", "commit": v1, "url": str(repo), "digest": entry["digest"]}
    module = tmp_path / "cache" / "example.com" / "acme" / "graders" / v1
    assert entry["digest"] == refs.digest_directory(module)
    assert (module / "graders" / "words.yaml").read_text() == V1  # v1's tree, not the branch head
    # the lock pins v1: the run passes although the repository has moved on to v2
    res = waza("run", "eval.yaml", "-q", "-o", "r.json", cwd=folder, env=env)
    assert res.returncode == 0, res.stderr
    doc = json.loads((folder / "r.json").read_text())
    assert doc["tasks"][0]["runs"][0]["validations"]["words"]["passed"] is True
    # v2 needs a new `waza get`; until then the run is refused, not silently re-resolved
    write(folder / "eval.yaml", EVAL.format(ref=f"{MODULE}#words@v2"))
    res = waza("run", "eval.yaml", "-q", cwd=folder, env=env)
    assert res.returncode == 2 and b"is not present in waza.lock; run `waza get`" in res.stderr
    assert waza("get", "--source", f"{MODULE}={repo}", cwd=folder, env=env).returncode == 0
    res = waza("run", "eval.yaml", "-q", "-o", "r.json", cwd=folder, env=env)
    assert res.returncode == 1  # v2's grader fails under the mock executor
    assert yamlio.parse((folder / "waza.lock").read_text())["graders"][0]["commit"] == git("rev-parse", "v2", cwd=repo)


def test_a_changed_file_is_refused(waza, tmp_path, repo, env):
    folder = suite(tmp_path, "v1")
    assert waza("get", "eval.yaml", "--source", f"{MODULE}={repo}", cwd=folder, env=env).returncode == 0
    v1 = git("rev-parse", "v1", cwd=repo)
    preset = tmp_path / "cache" / "example.com" / "acme" / "graders" / v1 / "graders" / "words.yaml"
    preset.write_text(V1.replace("mock response", "mock"))
    res = waza("run", "eval.yaml", "-q", cwd=folder, env=env)
    assert res.returncode == 2 and b"digest mismatch for ref" in res.stderr and b"Traceback" not in res.stderr
    # and `waza get` does not pin the edited cache as if it were the module (waza Go would)
    res = waza("get", "eval.yaml", "--source", f"{MODULE}={repo}", cwd=folder, env=env)
    assert res.returncode == 2 and b"differs from the module's content" in res.stderr
    shutil.rmtree(preset.parents[1])
    assert waza("get", "eval.yaml", "--source", f"{MODULE}={repo}", cwd=folder, env=env).returncode == 0
    assert waza("run", "eval.yaml", "-q", cwd=folder, env=env).returncode == 0


def test_a_folder_source_and_a_single_ref(waza, tmp_path, env):
    src = tmp_path / "plain"
    write(src / "waza.registry.yaml", MANIFEST)
    write(src / "graders" / "words.yaml", V1)
    folder = suite(tmp_path, "local")
    res = waza("get", "eval.yaml", "--source", f"{MODULE}={src}", cwd=folder, env=env)
    assert res.returncode == 0, res.stderr
    entry = yamlio.parse((folder / "waza.lock").read_text())["graders"][0]
    assert len(entry["commit"]) == 40 and entry["url"] == str(src)
    assert waza("run", "eval.yaml", "-q", cwd=folder, env=env).returncode == 0
    other = tmp_path / "elsewhere"
    other.mkdir()
    res = waza("get", f"{MODULE}#words@local", "--source", f"{MODULE}={src}", cwd=other, env=env)
    assert res.returncode == 0 and (other / "waza.lock").is_file()


@pytest.mark.parametrize("args,message", [
    (["eval.yaml", "--source", "bad"], b"expected HOST/OWNER/REPO=LOCATION"),
    (["eval.yaml", "--source", f"{MODULE}=REPO"], b"version 'nope' is not a tag, branch or commit"),
    (["notes.txt"], b"is neither an eval YAML file nor a grader ref"),
])
def test_errors_are_exit_2_with_a_message(waza, tmp_path, repo, env, args, message):
    folder = suite(tmp_path, "nope")
    args = [a.replace("REPO", str(repo)) for a in args]
    res = waza("get", *args, cwd=folder, env=env)
    assert res.returncode == 2 and message in res.stderr and b"Traceback" not in res.stderr


def test_an_eval_without_refs_is_an_error(waza, tmp_path, env):
    folder = tmp_path / "s"
    write(folder / "eval.yaml", "name: x\nskill: s\ntasks: [t/*.yaml]\n")
    res = waza("get", "eval.yaml", cwd=folder, env=env)
    assert res.returncode == 2 and b"no remote grader refs found in eval.yaml" in res.stderr


def test_example_folder_behaves_as_its_readme_says(waza, tmp_path, env):
    from tests.conftest import REPO

    sg = tmp_path / "sg"
    shutil.copytree(REPO / "examples" / "shared-graders", sg)
    codes = [waza("run", "suite/eval.yaml", "-q", cwd=sg, env=env).returncode,
             waza("get", "suite/eval.yaml", "--source", "example.com/acme/graders=graders-module",
                  cwd=sg, env=env).returncode,
             waza("run", "suite/eval.yaml", "-q", cwd=sg, env=env).returncode]
    preset = next((tmp_path / "cache").glob("example.com/acme/graders/*/graders/answers-prompt.yaml"))
    preset.write_text(preset.read_text() + "x\n")
    codes.append(waza("run", "suite/eval.yaml", "-q", cwd=sg, env=env).returncode)
    assert codes == [2, 0, 0, 2]


def _tar(*members: tuple[str, bytes | str | None, str]) -> bytes:
    """A tar of (name, content or link target, kind: file, sym, lnk, fifo, dir)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size, info.mode = len(data), 0o4777  # setuid and write for all: dropped
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"sym": tarfile.SYMTYPE, "lnk": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE,
                         "dir": tarfile.DIRTYPE}[kind]
            if kind in ("sym", "lnk"):
                info.linkname = data
            tar.addfile(info)
    return out.getvalue()


@pytest.mark.parametrize("filters", [True, False], ids=["python-filters", "python-3.11.0-3.11.3"])
def test_a_module_archive_unpacks_as_the_data_filter_allows(tmp_path, monkeypatch, filters):
    """Python 3.11.0-3.11.3 has no tarfile extraction filters: the same archives are refused."""
    if not filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    good = _tar(("d", None, "dir"), ("d/a.py", b"x = 1\n", "file"), ("d/link", "a.py", "sym"),
                ("d/hard", "d/a.py", "lnk"))
    get_mod._untar(good, str(tmp_path / "ok"))
    assert (tmp_path / "ok" / "d" / "link").read_text() == "x = 1\n"
    assert (tmp_path / "ok" / "d" / "a.py").stat().st_mode & 0o7022 == 0
    # (no absolute member name: the filter strips its slash, and a bug here must not write to /)
    for bad in [("../up.py", b"", "file"), ("out", "../../etc/passwd", "sym"), ("out", "/etc/passwd", "sym"),
                ("h", "../x", "lnk"), ("p", None, "fifo")]:
        with pytest.raises((get_mod.WazaError, tarfile.TarError)):
            get_mod._untar(_tar(bad), str(tmp_path / "bad"))
    assert not (tmp_path / "up.py").exists()
