"""Item 8: no file outside the suite is read through a symbolic link (the rule of
``inputs.prompt_file``: after resolving links a file must stay inside its root)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import BASIC_EVAL
from tests.hostile.conftest import no_traceback
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.errors import SuiteError
from waza_core.suite.load import load_suite

SECRET = "id: stolen\ninputs: {prompt: 'the secret outside the suite'}\n"


def test_a_task_glob_through_a_linked_folder_is_refused(make_suite, registry, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.yaml").write_text(SECRET)
    path = make_suite(BASIC_EVAL.replace('"tasks/*.yaml"', '"tasks/*.yaml", "more/*.yaml"'),
                      {"tasks/ok.yaml": "id: ok\ninputs: {prompt: p}\n"})
    (path.parent / "more").symlink_to(outside)
    with pytest.raises(SuiteError, match="leaves the suite's folder through a symbolic link"):
        load_suite(path, registry)


def test_a_linked_task_file_is_refused(make_suite, registry, tmp_path):
    (tmp_path / "secret.yaml").write_text(SECRET)
    path = make_suite(BASIC_EVAL, {"tasks/ok.yaml": "id: ok\ninputs: {prompt: p}\n"})
    (path.parent / "tasks" / "linked.yaml").symlink_to(tmp_path / "secret.yaml")
    with pytest.raises(SuiteError) as info:
        load_suite(path, registry)
    assert "linked.yaml leaves the suite's folder" in info.value.problems[0]


def test_a_link_inside_the_suite_is_fine(make_suite, registry):
    path = make_suite(BASIC_EVAL, {"shared/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    (path.parent / "tasks").mkdir()
    (path.parent / "tasks" / "t.yaml").symlink_to(path.parent / "shared" / "t.yaml")
    assert [t.id for t in load_suite(path, registry).tasks] == ["t"]


def test_the_cli_says_so_in_one_line(waza, make_suite, tmp_path):
    (tmp_path / "secret.yaml").write_text(SECRET)
    path = make_suite(BASIC_EVAL, {"tasks/ok.yaml": "id: ok\ninputs: {prompt: p}\n"})
    (path.parent / "tasks" / "linked.yaml").symlink_to(tmp_path / "secret.yaml")
    proc = waza("run", str(path), "-o", str(tmp_path / "r.json"))
    no_traceback(proc)
    assert proc.returncode == 2 and b"the secret" not in proc.stdout + proc.stderr
    assert not (tmp_path / "r.json").exists()


def files_suite(make_suite, tmp_path, files_line: str = "files: [{path: id_rsa}]"):
    return make_suite(BASIC_EVAL, {"tasks/t.yaml": f"id: t\ninputs:\n  prompt: p\n  {files_line}\n"})


def test_inputs_files_through_a_linked_fixtures_folder_are_refused(waza, make_suite, tmp_path):
    secret = tmp_path / "home"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY")
    path = files_suite(make_suite, tmp_path)
    (path.parent / "fixtures").symlink_to(secret)
    out = tmp_path / "r.json"
    proc = waza("run", str(path), "-o", str(out))
    no_traceback(proc)
    assert proc.returncode == 2 and b"leaves" in proc.stderr and b"symbolic link" in proc.stderr
    assert b"PRIVATE KEY" not in proc.stdout + proc.stderr and not out.exists()


def test_a_linked_input_file_is_refused_but_a_link_inside_is_fine(waza, make_suite, tmp_path):
    (tmp_path / "secret").write_text("PRIVATE KEY")
    path = files_suite(make_suite, tmp_path, "files: [{path: a.txt}, {path: b.txt}]")
    fixtures = path.parent / "fixtures"
    fixtures.mkdir()
    (fixtures / "real.txt").write_text("fine")
    (fixtures / "a.txt").symlink_to(fixtures / "real.txt")
    (fixtures / "b.txt").symlink_to(tmp_path / "secret")
    proc = waza("validate", str(path))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "'b.txt'" in err and "'a.txt'" not in err


def test_a_fixture_folder_linked_out_of_the_suite_is_refused(waza, make_suite, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("x")
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs:\n  prompt: p\n  context: {fixture: repo}\n"})
    (path.parent / "fixtures").mkdir()
    (path.parent / "fixtures" / "repo").symlink_to(outside)
    proc = waza("validate", str(path))
    assert proc.returncode == 2 and b"inputs.context.fixture 'repo'" in proc.stderr


def test_an_explicit_context_dir_is_the_root(waza, make_suite, tmp_path):
    """--context-dir names the folder on purpose: files inside it are read, links out are not."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "id_rsa").write_text("fixture text")
    path = files_suite(make_suite, tmp_path)
    out = tmp_path / "r.json"
    proc = waza("run", str(path), "--context-dir", str(shared), "-o", str(out))
    assert proc.returncode == 0, proc.stderr


def test_input_files_that_are_fifos_are_refused(waza, make_suite, tmp_path):
    import os

    path = files_suite(make_suite, tmp_path, "files: [{path: pipe}]")
    (path.parent / "fixtures").mkdir()
    os.mkfifo(path.parent / "fixtures" / "pipe")
    proc = waza("validate", str(path), timeout=30)
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


def test_kept_workspaces_are_private(waza, make_suite, tmp_path):
    import os
    import stat

    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs:\n  prompt: p\n  context: {fixture: repo}\n"})
    repo = path.parent / "fixtures" / "repo"
    repo.mkdir(parents=True)
    (repo / "f").write_text("x")
    repo.chmod(0o755)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    proc = waza("run", str(path), "--keep-workspaces", env={"TMPDIR": str(private_tmp)})
    assert proc.returncode == 0, proc.stderr
    [ws] = list(private_tmp.iterdir())
    assert stat.S_IMODE(os.stat(ws).st_mode) == 0o700 and (ws / "f").read_text() == "x"


def test_trigger_tests_through_a_link_out_of_the_suite_are_refused(make_suite, registry, tmp_path):
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("skill: demo\nshould_trigger_prompts: [{prompt: private prompt}]\n")
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"})
    (path.parent / "trigger_tests.yaml").symlink_to(outside)
    with pytest.raises(SuiteError, match="trigger_tests.yaml: the path leaves .* through a symbolic link"):
        load_suite(path, registry)


def test_a_trigger_tests_fifo_is_refused_not_skipped(make_suite, registry):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"})
    os.mkfifo(path.parent / "trigger_tests.yaml")
    with pytest.raises(SuiteError, match="trigger_tests.yaml: cannot read: it is not a regular file"):
        load_suite(path, registry)
