"""The promptfoo dialect against the real promptfoo (pinned in promptfoo_oracle/).

For every fixture config (real configs from public repositories, see
promptfoo_fixtures/README.md, and one written here to cover every exact feature):

* ``compare`` fixtures: promptfoo runs the config with its echo provider; waza imports it
  and runs the suite with ``--executor echo``; every test must get the same verdict.
  Then the round trip: ``export-suite`` of the imported suite gives a config on which the
  real promptfoo gives the same verdicts again, and importing that config back gives a
  suite with the same verdicts too.
* ``refused`` fixtures: the import exits 2, writes nothing, and names the position inside
  the offending assertion.

These run the real tools: they fail, never skip, when node, npm or the install is missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.interop import promptfoo_run as pf

MANIFEST = YAML(typ="safe").load((pf.FIXTURES / "fixtures.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def node() -> str:
    return pf.install()


def _copy(name: str, tmp: Path) -> Path:
    work = tmp / name
    shutil.copytree(pf.FIXTURES / name, work)
    return work / "promptfooconfig.yaml"


@pytest.mark.parametrize("name", sorted(k for k, v in MANIFEST.items() if v["expect"] == "compare"))
def test_imported_suite_gives_promptfoos_verdicts(name, node, tmp_path):
    config = _copy(name, tmp_path)
    expected = pf.promptfoo_verdicts(node, config, tmp_path)
    suite = tmp_path / "suite"
    proc = pf.waza("interop", "import-suite", str(config), "-o", str(suite))
    assert proc.returncode == 0, proc.stderr
    got = pf.waza_verdicts(suite, tmp_path)
    assert pf.compare(expected, got) == []
    assert len(got) == len(expected) > 0
    # both verdicts occur across the fixtures; a fixture where everything passes proves less
    if name == "waza-features":
        assert set(expected.values()) == {True, False}

    exported = tmp_path / "exported" / "promptfooconfig.yaml"
    exported.parent.mkdir()
    proc = pf.waza("interop", "export-suite", str(suite), "-o", str(exported))
    assert proc.returncode == 0, proc.stderr
    again = pf.promptfoo_verdicts(node, exported, tmp_path)
    # the export has one prompt and one test per task, in task order
    tasks = sorted(got, key=lambda k: _order(suite, k))
    assert [again[(0, j)] for j in range(len(tasks))] == [got[k] for k in tasks]
    back = tmp_path / "back"
    proc = pf.waza("interop", "import-suite", str(exported), "-o", str(back))
    assert proc.returncode == 0, proc.stderr
    assert sorted(pf.waza_verdicts(back, tmp_path).values()) == sorted(got.values())


def _order(suite: Path, task_id: str) -> str:
    (path,) = [p for p in (suite / "tasks").glob("*.yaml") if p.stem.split("-", 1)[1] == task_id]
    return path.name


@pytest.mark.parametrize("name", sorted(k for k, v in MANIFEST.items() if v["expect"] == "refused"))
def test_config_outside_the_exact_set_is_refused_inside_the_assertion(name, tmp_path):
    config = _copy(name, tmp_path)
    out = tmp_path / "suite"
    proc = pf.waza("interop", "import-suite", str(config), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    assert not out.exists()
    assert [p for p in tmp_path.iterdir() if p.name != name] == []  # no staging folder left
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"waza: error: {config.parent / MANIFEST[name]['at']}: "), first
    assert "Traceback" not in proc.stderr


def test_the_example_folder_behaves_as_its_readme_says(node, tmp_path):
    example = pf.REPO / "examples" / "interop-promptfoo"
    work = tmp_path / "example"
    shutil.copytree(example, work)
    config = work / "promptfooconfig.yaml"
    expected = pf.promptfoo_verdicts(node, config, tmp_path)
    suite = tmp_path / "greeting-suite"
    assert pf.waza("interop", "import-suite", str(config), "-o", str(suite)).returncode == 0
    run = pf.waza("run", str(suite), "--executor", "echo", "-q", "-o", str(tmp_path / "r.json"), cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # t4 fails on purpose
    got = pf.waza_verdicts(suite, tmp_path)
    assert pf.compare(expected, got) == []
    assert got == {"t1": True, "t2": True, "t3": True, "t4": False}
    export = pf.waza("interop", "export-suite", str(suite), "-o", str(suite / "promptfooconfig.yaml"))
    assert export.returncode == 0, export.stderr
