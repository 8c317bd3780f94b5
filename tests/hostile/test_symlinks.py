"""Item 8: no file outside the suite is read through a symbolic link (the rule of
``inputs.prompt_file``: after resolving links a file must stay inside its root)."""

from __future__ import annotations

import pytest

from tests.conftest import BASIC_EVAL
from tests.hostile.conftest import no_traceback
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
