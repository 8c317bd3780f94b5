"""Helpers for the optimizer tests: small suites on disk and in-process runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.optimize_outcome import Outcome

PLUGINS = ["tests.optimize.plugins"]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def task_yaml(tid: str, tags: list[str], phrase: str, extra: str = "", files: str = "checklist.md") -> str:
    files_block = f"  files:\n    - path: {files}\n" if files else ""
    return (f"id: {tid}\nname: Task {tid}\ntags: [{', '.join(tags)}]\ninputs:\n"
            f"  prompt: Read the checklist.\n{files_block}"
            f"graders:\n  - type: text\n    name: has_phrase\n    config:\n      contains: [\"{phrase}\"]\n{extra}")


class Suite:
    """A suite folder: 2 optimization tasks (alpha, beta), 2 qualification tasks
    (gamma, delta); the default seed mentions alpha and gamma (0.5 on both splits)."""

    def __init__(self, root: Path, executor: str = "mock", config_extra: str = "", eval_extra: str = "",
                 tasks: dict | None = None, skill: str = "example") -> None:
        self.root = root
        self.dir = root / "suite"
        tasks = tasks if tasks is not None else {
            "opt-a": (["optimization"], "alpha"), "opt-b": (["optimization"], "beta"),
            "qual-c": (["qualification"], "gamma"), "qual-d": (["qualification"], "delta"),
        }
        text = (f"name: opt-test\nskill: {skill}\nconfig:\n  trials_per_task: 1\n  timeout_seconds: 30\n"
                f"  executor: {executor}\n  model: mock\n"
                + textwrap.indent(textwrap.dedent(config_extra).strip("\n"), "  ") + "\n"
                + textwrap.dedent(eval_extra).strip("\n") + "\n" + 'tasks:\n  - "tasks/*.yaml"\n')
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "eval.yaml").write_text(text.replace("\n\n", "\n"), encoding="utf-8")
        for tid, spec in tasks.items():
            tags, phrase = spec[0], spec[1]
            extra = spec[2] if len(spec) > 2 else ""
            files = spec[3] if len(spec) > 3 else "checklist.md"
            write(self.dir / "tasks" / f"{tid}.yaml", task_yaml(tid, tags, phrase, extra, files))
        write(self.dir / "fixtures" / "checklist.md", "base\n")
        self.eval = self.dir / "eval.yaml"
        self.seed = root / "seed"
        write(self.seed / "checklist.md", "alpha gamma\n")
        self._n = 0

    def script(self, proposals: list, describe: dict | None = None, name: str = "script.json") -> Path:
        doc = {"version": 1, "proposals": proposals}
        if describe is not None:
            doc["describe"] = describe
        path = self.root / name
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    def run(self, proposals=None, *, adapter: str = "fake", target: str = "context-overlay", describe=None,
            seed: Path | None = None, plugins=None, **kw):
        from waza_core.optimize.adapter import AdapterOptions
        from waza_core.optimize.loop import OptimizeConfig, run_optimizer

        self._n += 1
        out = self.root / f"out{self._n}"
        script = None
        if proposals is not None or describe is not None:
            script = str(self.script(proposals or [], describe, name=f"script{self._n}.json"))
        cfg = OptimizeConfig(
            eval_file=self.eval, target=target, seed=seed or self.seed, optimization_tag="optimization",
            qualification_tag="qualification", adapter=adapter, output_dir=out,
            adapter_options=AdapterOptions.of({"script": kw.pop("fake_script", script)}),
            plugins=list(PLUGINS if plugins is None else plugins), cwd=kw.pop("cwd", self.root), **kw)
        code = run_optimizer(cfg)
        report = json.loads((out / "report.json").read_text("utf-8"))
        from waza_core.suite import schema

        errors = [e.message for e in schema.plain_validator("optimizer-report-1.0").iter_errors(report)]
        assert not errors, f"every report.json must validate: {errors}"
        assert oct((out / "report.json").stat().st_mode & 0o777) == oct(0o600)
        return Outcome(code, report, out)


def files(content: str, path: str = "checklist.md") -> dict:
    return {"files": [{"path": path, "content": content}]}


@pytest.fixture
def suite(tmp_path):
    return Suite(tmp_path)


@pytest.fixture
def make(tmp_path):
    def _make(**kw):
        return Suite(tmp_path, **kw)
    return _make
