"""Results files with planted trial verdicts, written by the project's results writer (typed
model, waza's statistics and summary, the codec, an atomic write): inputs for ``waza noise``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from waza_core.model import GraderResult
from waza_core.results.codec import encode_results
from waza_core.results.io import write_atomic
from waza_core.results.model import ResultsDocument, RunConfig, RunResult, TaskResult
from waza_core.results.stats import summarize, task_stats, task_status


def _run(number: int, passed: bool) -> RunResult:
    grade = GraderResult(identifier="answer", type="text", score=1.0 if passed else 0.0, passed=passed,
                         feedback="ok" if passed else "missing")
    return RunResult(run_number=number, attempts=1, status="passed" if passed else "failed", duration_ms=10,
                     validations={"answer": grade})


def write_results(path: Path, verdicts: np.ndarray, prefix: str = "task") -> Path:
    """``verdicts``: tasks x trials booleans (True: the run passed)."""
    tasks = []
    for i, row in enumerate(np.asarray(verdicts, dtype=bool)):
        runs = [_run(n + 1, bool(v)) for n, v in enumerate(row)]
        tasks.append(TaskResult(test_id=f"{prefix}-{i:03d}", display_name=f"{prefix} {i}",
                                status=task_status(runs), runs=runs, stats=task_stats(runs)))
    doc = ResultsDocument(eval_id="noise", skill="noise", eval_name="noise", timestamp="2026-12-04T00:00:00Z",
                          config=RunConfig(runs_per_test=verdicts.shape[1], model_id="mock-model", engine_type="mock"),
                          summary=summarize(tasks, 10 * verdicts.size), tasks=tasks, waza_version="0.1.0")
    write_atomic(path, encode_results(doc))
    return path


def draw(rng: np.random.Generator, rates: np.ndarray, trials: int, locked: float = 0.0) -> np.ndarray:
    """tasks x trials verdicts at ``rates``; a task is locked (one verdict for all its trials)
    with probability ``locked``."""
    verdict = rng.random(len(rates)) < rates
    free = rng.random((len(rates), trials)) < rates[:, None]
    lock = rng.random(len(rates)) < locked
    return np.where(lock[:, None], verdict[:, None], free)
