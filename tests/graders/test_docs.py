"""The examples of docs/graders/*.md run as written and give the verdicts the pages show.

A page marks each file of its example with ``<!-- example: PATH -->`` before a fenced block,
and each verdict it shows with ``<!-- example-result: TASK/GRADER -->`` before a JSON block.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.conftest import REPO
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)

PAGES = ["text", "code", "file", "diff", "json_schema", "trigger"]
BLOCK = re.compile(r"<!-- (example|example-result): (\S+) -->\n```[a-z]*\n(.*?)```", re.S)


def blocks(page: str) -> tuple[dict[str, str], dict[str, dict]]:
    text = (REPO / "docs" / "graders" / f"{page}.md").read_text("utf-8")
    files, results = {}, {}
    for kind, target, body in BLOCK.findall(text):
        if kind == "example":
            files[target] = body
        else:
            results[target] = json.loads(body)
    return files, results


@pytest.mark.parametrize("page", PAGES)
def test_page_example_runs_and_gives_the_verdicts_shown(page, tmp_path, waza):
    if page == "code" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    files, results = blocks(page)
    assert "eval.yaml" in files and results, f"docs/graders/{page}.md has no marked example"
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    proc = waza("run", "eval.yaml", "-o", "results.json", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    doc = json.loads((tmp_path / "results.json").read_text())
    got = {f"{t['test_id']}/{name}": v for t in doc["tasks"] for name, v in t["runs"][0]["validations"].items()}
    for key, want in results.items():
        assert {k: got[key][k] for k in want} == want, key


def test_every_grader_page_is_linked_from_the_index():
    index = (REPO / "docs" / "index.md").read_text("utf-8")
    for page in PAGES:
        assert f"graders/{page}.md" in index
