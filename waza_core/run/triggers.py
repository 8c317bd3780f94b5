"""Trigger tests: does the agent use the skill when it should, and only then?

After the tasks of a suite run, the prompts of ``trigger_tests.yaml`` (see
:mod:`waza_core.suite.trigger_tests`) are scored, as in waza (Go) ``cmd_run.go`` and
``internal/trigger/runner.go``:

* under the ``mock`` executor the results are fabricated as perfect (each prompt
  triggers exactly when it should): the mock cannot use a skill, so this only checks
  that the file is wired in;
* otherwise each prompt runs once through the suite's executor (a fresh workspace,
  the suite's skill folders, ``config.timeout_seconds``), up to ``config.workers`` at a
  time; it *triggered* when the run's ``skill_invocations`` name the file's ``skill``;
  a run that fails counts as an error and as a wrong answer;
* ``trigger_metrics``: confidence-weighted counts (``high`` or empty 1, ``medium``
  0.5), precision, recall, F1 and accuracy rounded to 4 decimals, and the number of
  errors; ``trigger_results``: one entry per prompt;
* a metric named ``trigger_accuracy`` in eval.yaml becomes ``metrics.trigger_accuracy``
  ``{identifier, value (accuracy), threshold, passed, weight}``; ``passed`` is
  ``threshold <= 0 or accuracy >= threshold``, and a failed one makes ``waza run``
  exit 1. Every other metric has no effect, as in waza (Go).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from waza_core.model import RunEvidence, TaskSpec
from waza_core.signals import MAIN_WAIT_SECONDS

if TYPE_CHECKING:
    from waza_core.run.prepared import PreparedSuite

METRIC = "trigger_accuracy"


def prompts_of(spec: dict) -> list[tuple[str, str, bool]]:
    """(prompt, confidence, should_trigger) in file order: positives first."""
    out = [(p["prompt"], p.get("confidence") or "", True) for p in spec.get("should_trigger_prompts") or []]
    out += [(p["prompt"], p.get("confidence") or "", False) for p in spec.get("should_not_trigger_prompts") or []]
    return out


def fabricated(spec: dict) -> list[dict[str, Any]]:
    """The perfect results waza (Go) reports under the mock executor."""
    return [_entry(prompt, conf, should, should) for prompt, conf, should in prompts_of(spec)]


def _entry(prompt: str, confidence: str, should: bool, did: bool, **fields) -> dict[str, Any]:
    out: dict[str, Any] = {"prompt": prompt}
    if confidence:
        out["confidence"] = confidence
    out["should_trigger"] = should
    out["did_trigger"] = did
    out.update({k: v for k, v in fields.items() if v})  # omitempty, as in waza (Go)
    return out


def run_prompts(prepared: PreparedSuite, spec: dict, model: str, workers: int) -> list[dict[str, Any]]:
    """Run every prompt through the prepared (started) executor; one result per prompt."""
    # deferred: waza_core.run.unit adds ~33.2 ms to importing this module
    from waza_core.run.unit import execute

    skill = spec["skill"]
    items = prompts_of(spec)

    def one(index: int) -> dict[str, Any]:

        # deferred: waza_core.run.execution adds ~4.5 ms to importing this module
        from waza_core.run.execution import ExecutionRequest

        prompt, conf, should = items[index]
        task = TaskSpec(id=f"trigger-{index + 1}", name=f"trigger-{index + 1}", prompt=prompt,
                        file=Path(spec["file"]))
        ws = prepared.workspaces.take() if prepared.workspaces is not None else None
        try:
            request = ExecutionRequest(task=task, prompt=prompt, workspace_dir=ws,
                                       timeout_seconds=prepared.suite.config.timeout_seconds or 60, model=model,
                                       skill_directories=tuple(prepared.suite.config.skill_directories))
            evidence: RunEvidence = execute(prepared, request)
        finally:
            if ws is not None and prepared.workspaces is not None:
                prepared.workspaces.remove(ws)
        if evidence.error:
            return _entry(prompt, conf, should, not should, error_msg=evidence.error)
        did = any(isinstance(s, dict) and s.get("name") == skill for s in evidence.skill_invocations or ())
        return _entry(prompt, conf, should, did, final_output=evidence.output, transcript=evidence.transcript,
                      tool_calls=evidence.tool_calls, session_id=evidence.session_id)

    def counted(index: int) -> dict[str, Any]:
        prepared.attempt_started()  # an interrupt's close() waits (bounded) for the prompts in flight
        try:
            return one(index)
        finally:
            prepared.attempt_ended()

    if not items:
        return []
    # deferred: concurrent.futures (and logging) only for a suite with trigger tests (~4 ms of every start)
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as Pending

    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(items))), thread_name_prefix="waza-trigger")
    futures = [pool.submit(counted, i) for i in range(len(items))]
    try:
        results = []
        for fut in futures:
            while True:
                try:  # bounded: a signal is handled here within MAIN_WAIT_SECONDS (signals.py)
                    results.append(fut.result(timeout=MAIN_WAIT_SECONDS))
                    break
                except Pending:
                    continue
    except BaseException:
        # stop now: the caller shuts the executor down (which ends the prompts in flight) and
        # waits for them; waiting for them here first lasted until each one's time limit
        prepared.cancel.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def trigger_metrics(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Confidence-weighted classification metrics (waza Go ``ComputeTriggerMetrics``)."""
    if not results:
        return None
    tp = fp = tn = fn = 0.0
    for r in results:
        w = 0.5 if r.get("confidence") == "medium" else 1.0
        should, did = r["should_trigger"], r["did_trigger"]
        if should and did:
            tp += w
        elif not should and did:
            fp += w
        elif not should and not did:
            tn += w
        else:
            fn += w
    precision = _div(tp, tp + fp)
    recall = _div(tp, tp + fn)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    out: dict[str, Any] = {
        "true_positives": _round_half_away(tp), "false_positives": _round_half_away(fp),
        "true_negatives": _round_half_away(tn), "false_negatives": _round_half_away(fn),
    }
    errors = sum(1 for r in results if r.get("error_msg"))
    if errors:
        out["errors"] = errors
    out.update(precision=_round4(precision), recall=_round4(recall), f1=_round4(f1),
               accuracy=_round4(_div(tp + tn, tp + fp + tn + fn)))
    return out


def accuracy_metric(metrics: tuple[dict, ...], measured: dict[str, Any]) -> dict[str, Any] | None:
    """``metrics.trigger_accuracy`` when the eval declares that metric."""
    for m in metrics:
        if m.get("name") == METRIC:
            threshold = float(m.get("threshold", 0) or 0)
            value = measured["accuracy"]
            return {"identifier": METRIC, "value": value, "threshold": threshold,
                    "passed": threshold <= 0 or value >= threshold, "weight": float(m.get("weight", 0) or 0)}
    return None


def attach(doc, suite, results: list[dict[str, Any]] | None) -> None:
    """Put ``trigger_results``, ``trigger_metrics`` and ``metrics.trigger_accuracy`` on ``doc``."""
    if results is None:
        return
    measured = trigger_metrics(results)
    if measured is None:
        return
    doc.extra["trigger_metrics"] = measured
    doc.extra["trigger_results"] = results
    metric = accuracy_metric(suite.metrics, measured)
    if metric is not None:
        doc.metrics[METRIC] = metric


def _div(num: float, den: float) -> float:
    return num / den if den else 0.0


def _round4(v: float) -> float:
    """Go's ``math.Round(v*10000)/10000``: halves round away from zero."""
    return math.floor(v * 10000 + 0.5) / 10000 if v >= 0 else -math.floor(-v * 10000 + 0.5) / 10000


def _round_half_away(v: float) -> int:
    """Go ``int(math.Round(v))``: halves away from zero (0.5 -> 1, 1.5 -> 2)."""
    return int(math.floor(v + 0.5))
