"""The promptfoo dialect against the real promptfoo (pinned in promptfoo_oracle/).

For every fixture config (real configs from public repositories, see
promptfoo_fixtures/README.md, and one written here to cover every exact feature):

* ``compare`` fixtures: promptfoo runs the config with its echo provider; waza imports it
  and runs the suite with ``--executor echo``; every test must get the same verdict.
  Then the round trip: importing ``export-suite``'s config of the imported suite back gives a
  suite with the same verdicts, and the real promptfoo gives those verdicts on the export
  too (one test for all the exports, see there why).
* ``refused`` fixtures: the import exits 2, writes nothing, and names the position inside
  the offending assertion.

These run the real tools: they fail, never skip, when node, npm or the install is missing.
"""

from __future__ import annotations

import json
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


COMPARED = sorted(k for k, v in MANIFEST.items() if v["expect"] == "compare")


def _import_and_run(config: Path, tmp: Path) -> tuple[Path, dict[str, bool]]:
    suite = tmp / "suite"
    proc = pf.waza("interop", "import-suite", str(config), "-o", str(suite))
    assert proc.returncode == 0, proc.stderr
    return suite, pf.waza_verdicts(suite, tmp)


def _export(suite: Path, to: Path) -> Path:
    exported = to / "promptfooconfig.yaml"
    exported.parent.mkdir(parents=True)
    proc = pf.waza("interop", "export-suite", str(suite), "-o", str(exported))
    assert proc.returncode == 0, proc.stderr
    return exported


@pytest.mark.parametrize("name", COMPARED)
def test_imported_suite_gives_promptfoos_verdicts(name, node, tmp_path):
    config = _copy(name, tmp_path)
    expected = pf.promptfoo_verdicts(node, config, tmp_path)
    suite, got = _import_and_run(config, tmp_path)
    assert pf.compare(expected, got) == []
    assert len(got) == len(expected) > 0
    # both verdicts occur across the fixtures; a fixture where everything passes proves less
    if name == "waza-features":
        assert set(expected.values()) == {True, False}
    # the round trip through waza alone; promptfoo's verdicts on the export are checked below
    back = tmp_path / "back"
    proc = pf.waza("interop", "import-suite", str(_export(suite, tmp_path / "exported")), "-o", str(back))
    assert proc.returncode == 0, proc.stderr
    assert sorted(pf.waza_verdicts(back, tmp_path).values()) == sorted(got.values())


#: what every export holds besides its tests: one prompt, the echo provider (checked below)
EXPORT_FRAME = {"prompts": ["{{prompt}}"], "providers": ["echo"]}


def test_exported_suites_give_the_same_verdicts_in_promptfoo(node, tmp_path):
    """``export-suite`` of each imported suite gives a config on which the real promptfoo gives
    waza's verdicts, test by test in task order.

    Every export has the same frame (one ``{{prompt}}`` prompt, the echo provider; asserted), so
    their tests are evaluated by one ``promptfoo eval`` of a config that lists them all, each
    export's tests in a row: starting promptfoo costs about 2.5 s of CPU, the tests next to
    nothing, and a test's verdict depends only on its own vars and assertions."""
    loader = YAML(typ="safe")
    tests: list = []
    spans: dict[str, tuple[int, list[bool]]] = {}
    for name in COMPARED:
        work = tmp_path / name
        suite, got = _import_and_run(_copy(name, work), work)
        doc = loader.load(_export(suite, work / "exported").read_text(encoding="utf-8"))
        assert set(doc) == {"description", "tests", *EXPORT_FRAME}, name
        assert {k: doc[k] for k in EXPORT_FRAME} == EXPORT_FRAME, name
        # the export has one test per task, in task order
        assert len(doc["tests"]) == len(got), name
        spans[name] = (len(tests), [got[k] for k in sorted(got, key=lambda k: _order(suite, k))])
        tests += doc["tests"]
    merged = tmp_path / "all-exports" / "promptfooconfig.json"
    merged.parent.mkdir()
    merged.write_text(json.dumps({"description": "every export", **EXPORT_FRAME, "tests": tests}), encoding="utf-8")
    again = pf.promptfoo_verdicts(node, merged, merged.parent)
    assert len(again) == len(tests)
    for name, (first, verdicts) in spans.items():
        assert [again[(0, first + j)] for j in range(len(verdicts))] == verdicts, name


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
