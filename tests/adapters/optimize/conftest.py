"""Helpers for the adapter tests: a copy of the walkthrough suite, adapter scripts, runs."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.optimize_outcome import Outcome

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "optimizer"
CHECKLIST_ADAPTER = EXAMPLE / "adapters" / "checklist_adapter.py"
PY = sys.executable

#: prepended to every test adapter: read the request, let ``reply(req)`` answer
#: (a dict is sent as JSON, str/bytes verbatim); ``OBS`` is argv[1], a folder for notes
ADAPTER_HEAD = '''
import json, os, sys
OBS = sys.argv[1] if len(sys.argv) > 1 else None
REQ = json.load(sys.stdin)

def note(name, value):
    with open(os.path.join(OBS, name), "w") as fh:
        json.dump(value, fh)

def describe_ok(**over):
    doc = {"kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "describe",
           "contract_versions": ["1.0"], "adapter": {"name": "test-adapter", "version": "0.1"},
           "required_capabilities": ["propose.files"],
           "optional_capabilities": ["target.context-overlay", "target.skill-directory",
                                     "feedback.task-results", "usage.adapter-reported"],
           "paid_calls": False}
    doc.update(over)
    return doc

def propose_ok(req, **over):
    doc = {"kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "propose",
           "contract_version": req["contract_version"], "status": "candidate",
           "parent_id": req["parent"]["candidate_id"],
           "files": [{"path": "checklist.md", "content": "everything\\n"}],
           "usage": {"status": "measured", "premium_requests": 0}}
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}
'''

ADAPTER_TAIL = '''
out = reply(REQ)
if isinstance(out, dict):
    out = json.dumps(out)
if isinstance(out, str):
    out = out.encode("utf-8")
sys.stdout.buffer.write(out)
sys.stdout.flush()
'''


def adapter_script(folder: Path, body: str, name: str = "adapter.py") -> Path:
    """A Python adapter: ``body`` defines ``reply(req)``."""
    path = folder / name
    path.write_text(ADAPTER_HEAD + textwrap.dedent(body) + ADAPTER_TAIL, encoding="utf-8")
    return path


def wait_for(predicate, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


SEED_TEXT = "# Release checklist\n\n- Run the unit tests\n"
PARENT_ID = "a" * 64


def failed_task(task_id: str, message: str, truncated: bool = False) -> dict:
    return {"task_id": task_id, "status": "failed", "score": 0.0,
            "failed_graders": [{"name": "mentions_step", "type": "text", "message": message,
                                "truncated": truncated}]}


def propose_request(tasks=(), files=None, target="context-overlay",
                    capabilities=("feedback.task-results", "propose.files")) -> dict:
    """A propose request as the harness would send it (validated against the request schema)."""
    from waza_core.optimize import contract

    evaluation = {"candidate_id": PARENT_ID, "state": "scored", "score": 0.5, "pass_rate": 0.5}
    if "feedback.task-results" in capabilities:
        evaluation["tasks"] = list(tasks)
    request = {
        "kind": contract.REQUEST_KIND, "schema_version": "1.0", "operation": "propose", "contract_version": "1.0",
        "target": target, "capabilities": sorted(capabilities), "iteration": 1,
        "parent": {"candidate_id": PARENT_ID, "origin": "seed",
                   "files": files or [{"path": "checklist.md", "content": SEED_TEXT}]},
        "feedback": {"split": "optimization", "evaluation": evaluation,
                     "history": [{"candidate_id": PARENT_ID, "iteration": 0, "state": "scored", "score": 0.5,
                                  "pass_rate": 0.5}]},
        "remaining": {},
    }
    contract.validate_request(request)
    return request


class Example:
    """A private copy of examples/optimizer (suite, fixtures, seed) to run the optimizer on."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "suite"
        for part in ("eval.yaml", "tasks", "fixtures"):
            src = EXAMPLE / part
            if src.is_dir():
                shutil.copytree(src, self.dir / part)
            else:
                self.dir.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, self.dir / part)
        self.seed = root / "seed"
        shutil.copytree(EXAMPLE / "seed", self.seed)
        self.obs = root / "obs"
        self.obs.mkdir()
        self._n = 0

    def run(self, *, adapter: str = "command", command: str | None = PY, args=(), env_names=(),
            reflect_model=None, target: str = "context-overlay", seed: Path | None = None,
            allow_paid_calls: bool = True, **kw):
        from waza_core.optimize.adapter import AdapterOptions
        from waza_core.optimize.loop import OptimizeConfig, run_optimizer

        self._n += 1
        out = self.root / f"out{self._n}"
        cfg = OptimizeConfig(
            eval_file=self.dir / "eval.yaml", target=target, seed=seed or self.seed,
            optimization_tag="optimization", qualification_tag="qualification", adapter=adapter,
            output_dir=out, allow_paid_calls=allow_paid_calls,
            adapter_options=AdapterOptions.of({"command": command if adapter == "command" else None,
                                               "arg": [str(a) for a in args], "env": list(env_names),
                                               "model": reflect_model}),
            plugins=[], cwd=self.root, **kw)
        code = run_optimizer(cfg)
        report = json.loads((out / "report.json").read_text("utf-8"))
        return Outcome(code, report, out)


@pytest.fixture
def example(tmp_path):
    return Example(tmp_path)
