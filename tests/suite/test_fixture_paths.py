"""inputs.context.fixture as waza (Go) v0.33+ reads it: relative to the suite's folder, a file or a folder."""

from __future__ import annotations

import json
import os
import sys

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

CHECK = """\
import os, sys
ws = os.environ["WAZA_WORKSPACE_DIR"]
sys.exit(0 if all(os.path.exists(os.path.join(ws, p)) for p in sys.argv[1:]) else 1)
"""


def suite(make_suite, fixture: str, files: dict, wants: list[str]):
    args = ", ".join(f'"{w}"' for w in wants)
    grader = (f'{{type: program, name: present, config: {{command: "{sys.executable}", '
              f'args: ["{{suite}}/check.py", {args}]}}}}')
    path = make_suite("name: f\nskill: s\nconfig: {executor: mock}\ntasks: [\"tasks/*.yaml\"]\n",
                      {"tasks/t.yaml": f"id: t\ninputs:\n  prompt: p\n  context: {{fixture: {fixture}}}\n"
                                       "graders: [GRADER]\n"}, {"check.py": CHECK, **files})
    task = path.parent / "tasks" / "t.yaml"
    task.write_text(task.read_text().replace("GRADER", grader.replace("{suite}", str(path.parent))))
    return path


def run(waza, path):
    out = path.parent / "r.json"
    res = waza("run", str(path), "-q", "-o", str(out))
    return res, json.loads(out.read_text()) if out.exists() else None


def test_a_file_relative_to_the_suite_lands_at_the_workspace_root(waza, make_suite):
    """The shape of waza's examples/scenarios/repository: fixture: fixtures/inventory.txt."""
    path = suite(make_suite, "fixtures/inventory.txt", {"fixtures/inventory.txt": "3\n"}, ["inventory.txt"])
    res, doc = run(waza, path)
    assert res.returncode == 0, (res.stderr, doc and doc["tasks"][0]["runs"][0]["validations"])


def test_a_folder_relative_to_the_suite(waza, make_suite):
    path = suite(make_suite, "fixtures/demo", {"fixtures/demo/a/b.txt": "x"}, ["a/b.txt"])
    assert run(waza, path)[0].returncode == 0


def test_a_folder_relative_to_the_fixtures_folder_still_works(waza, make_suite):
    path = suite(make_suite, "repo", {"fixtures/repo/README.md": "x"}, ["README.md"])
    assert run(waza, path)[0].returncode == 0


def test_missing_and_escaping_fixtures(waza, make_suite, tmp_path):
    path = suite(make_suite, "nowhere", {}, ["x"])
    res, _ = run(waza, path)
    assert res.returncode == 2 and b"inputs.context.fixture 'nowhere': no such file or directory" in res.stderr
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    path = suite(make_suite, "link", {}, ["secret.txt"])
    os.symlink(outside, path.parent / "link")
    res, _ = run(waza, path)
    assert res.returncode == 2 and b"through a symbolic link" in res.stderr
