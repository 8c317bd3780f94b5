"""One evaluation: a candidate on one split, through the normal runner.

Each evaluation gets a fresh materialization of the candidate in a temporary folder
and a fresh :class:`~waza_core.run.engine.Engine`, so nothing one evaluation did can leak
into the next, and the original suite and fixtures are only ever read.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import WazaError
from waza_core.optimize import spend as spend_mod
from waza_core.optimize.candidates import SKILL_FILE, Candidate, write_tree
from waza_core.optimize.contract import FEEDBACK_MESSAGE_BYTES
from waza_core.optimize.failures import OptimizeFailure
from waza_core.optimize.pin import CANDIDATE_DIR_NAME, skill_name


def truncate_utf8(text: str, limit: int = FEEDBACK_MESSAGE_BYTES) -> tuple[str, bool]:
    """The longest prefix of ``text`` that fits ``limit`` UTF-8 bytes."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", "ignore"), True


def _status(task: dict) -> str:
    s = task.get("status")
    return {"n/a": "skipped"}.get(s, s) if s in ("passed", "failed", "error", "n/a") else "error"


def task_feedback(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per task: status, score and the messages of graders that did not pass."""
    out = []
    for t in results.get("tasks") or []:
        failed: dict[str, dict] = {}
        for run in t.get("runs") or []:
            for ident, v in (run.get("validations") or {}).items():
                if not v.get("passed") and ident not in failed:
                    msg, cut = truncate_utf8(str(v.get("feedback") or ""))
                    failed[ident] = {"name": str(v.get("identifier") or ident), "type": str(v.get("type") or ""),
                                     "message": msg, "truncated": cut}
            if run.get("status") == "error" and not run.get("validations") and run.get("error_msg"):
                msg, cut = truncate_utf8(str(run["error_msg"]))
                failed.setdefault("(run)", {"name": "(run)", "type": "error", "message": msg, "truncated": cut})
        score = (t.get("stats") or {}).get("avg_score", 0.0)
        out.append({"task_id": t.get("test_id", ""), "status": _status(t),
                    "score": min(1.0, max(0.0, float(score or 0.0))), "failed_graders": list(failed.values())})
    return out


def unscorable_reason(results: dict[str, Any]) -> str | None:
    """Why an evaluation cannot be scored, or None when it can: every task must have
    run without errors or skips, and no grader may have recorded an evaluation error."""
    if results.get("incomplete"):
        return "the run did not finish every selected task"
    for t in results.get("tasks") or []:
        for run in t.get("runs") or []:  # the grader's own message says most
            for v in (run.get("validations") or {}).values():
                if v.get("error"):
                    return (f"grader {v.get('identifier')!r} on task {t.get('test_id')!r} could not judge: "
                            f"{v['error'].get('message', '')}")
        if t.get("status") == "error":
            errors = [r.get("error_msg") for r in t.get("runs") or [] if r.get("error_msg")]
            return f"task {t.get('test_id')!r} errored" + (f": {errors[0]}" if errors else "")
        if t.get("status") not in ("passed", "failed"):
            return f"task {t.get('test_id')!r} was skipped ({t.get('status')})"
        for run in t.get("runs") or []:
            if run.get("status") not in ("passed", "failed"):
                return f"task {t.get('test_id')!r} run {run.get('run_number')} is {run.get('status')}"
    return None


@attrs.define
class EvalRecord:
    """One entry of ``report.evaluations``."""

    index: int
    split: str
    candidate_id: str
    role: str
    state: str = "scored"
    score: float | None = None
    pass_rate: float | None = None
    tasks: list = attrs.field(factory=list)
    duration_ms: int = 0
    spend: dict = attrs.field(factory=lambda: dict(spend_mod.UNAVAILABLE))
    evidence: dict | None = None
    reason: str | None = None

    @property
    def scored(self) -> bool:
        return self.state == "scored"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "split": self.split, "candidate_id": self.candidate_id, "role": self.role,
                "state": self.state, "score": self.score, "pass_rate": self.pass_rate,
                "feedback": {"tasks": self.tasks}, "duration_ms": self.duration_ms, "spend": self.spend,
                "evidence": self.evidence, "reason": self.reason}


def _link_or_copy(src: str, dst: str) -> None:
    """Hard-link a base context file, or copy it when linking is not possible.

    Creating files is what a large context directory costs (copying 200 files can take
    10x longer than linking them), and the harness only ever *reads* the base files:
    candidate files replace them by rename (never written through), workspaces are
    separate copies. Anything that did write through a link would change the pinned
    context directory and fail the check after the evaluation (``suite_changed``).
    """
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


class Materialization:
    """A fresh temporary materialization of one candidate, removed when the evaluation ends."""

    def __init__(self, cand: Candidate, target: str, context_dir: Path) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="waza-opt-"))
        try:
            if target == "context-overlay":
                self.dir = self.root / "context"
                if context_dir.is_dir():
                    shutil.copytree(context_dir, self.dir, symlinks=True, copy_function=_link_or_copy)
                else:
                    self.dir.mkdir()
                write_tree(self.dir, cand.files, mode=0o644, dir_mode=0o755)
            else:
                self.dir = self.root / CANDIDATE_DIR_NAME
                self.dir.mkdir()
                write_tree(self.dir, cand.files, mode=0o644, dir_mode=0o755)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def skill_resolution_problem(cand: Candidate, skill: str) -> str | None:
    content = cand.content(SKILL_FILE)
    if content is None:
        return f"the candidate has no {SKILL_FILE}"
    name = skill_name(content)
    if name != skill:
        return f"{SKILL_FILE} frontmatter name is {name!r}, the suite's skill is {skill!r}"
    return None


def run_engine(suite, registry, cand: Candidate, target: str, task_ids: tuple[str, ...],
               context_dir: Path, placement: tuple[str, dict, tuple[str, ...]] = ("local", {}, ())) -> dict[str, Any]:
    """The harness part of an evaluation: fresh materialization, fresh engine.

    ``placement``: (backend, its options, plugin modules) of ``--backend``; the plugin
    modules let a worker elsewhere load the suite again."""
    # deferred: waza_core.run.engine adds ~160.0 ms to importing this module
    from waza_core.run.engine import Engine, RunOptions

    try:
        mat = Materialization(cand, target, context_dir)
    except (OSError, WazaError) as exc:
        raise OptimizeFailure("infrastructure_failure", f"cannot materialize candidate {cand.prefix}: {exc}",
                              candidate_id=cand.id) from None
    try:
        if target == "context-overlay":
            options = RunOptions(task_ids=list(task_ids), context_dir=mat.dir)
        else:
            options = RunOptions(task_ids=list(task_ids), skill_directories=(str(mat.dir),))
        options.backend, options.backend_options, plugins = placement[0], dict(placement[1]), placement[2]
        try:
            engine = Engine(suite, registry, options, plugins=plugins)
        except WazaError as exc:
            raise _EngineSetup(str(exc)) from None
        started, t0 = time.time(), time.perf_counter()
        # deferred: waza_core.results.codec adds ~38.3 ms to importing this module
        from waza_core.results.codec import results_to_json

        try:
            return results_to_json(engine.run())
        except Exception as exc:  # the executor failed to start or to shut down
            # runs that finished before an engine shutdown error still count: their
            # spend and evidence are kept, the evaluation gets no score
            results = (results_to_json(engine.outcome(started, int((time.perf_counter() - t0) * 1000)))
                       if getattr(engine, "finished", None) else None)
            message = str(exc) if isinstance(exc, WazaError) else f"{type(exc).__name__}: {exc}"
            raise _EngineFailed(message, results) from None
    finally:
        mat.close()


class _EngineSetup(Exception):
    """The engine refused the materialized candidate (e.g. a missing input file)."""


class _EngineFailed(Exception):
    """The engine failed while running; ``results`` is the outcome of the runs that
    finished (None when none did, e.g. the executor could not start)."""

    def __init__(self, message: str, results: dict[str, Any] | None) -> None:
        super().__init__(message)
        self.results = results


def write_evidence(out_dir: Path, rec: EvalRecord, results: dict[str, Any]) -> dict[str, str]:
    """Write the full results file under ``evidence/<split>/`` (0600) and reference it."""
    # deferred: waza_core.results.io adds ~25.6 ms to importing this module
    from waza_core.results.io import write_atomic
    from waza_core.results.jsonbytes import dumps

    rel = f"evidence/{rec.split}/{rec.index:03d}-{rec.candidate_id[:16]}.json"
    data = dumps(results)
    try:
        (out_dir / "evidence").mkdir(mode=0o700, exist_ok=True)
        (out_dir / "evidence" / rec.split).mkdir(mode=0o700, exist_ok=True)
        write_atomic(out_dir / rel, data, 0o600)
    except (OSError, WazaError) as exc:
        raise OptimizeFailure("infrastructure_failure", f"cannot write evidence {rel}: {exc}",
                              candidate_id=rec.candidate_id, evaluation_index=rec.index) from None
    return {"path": rel, "sha256": hashlib.sha256(data).hexdigest()}


def evaluate(ctx, rec: EvalRecord, cand: Candidate) -> EvalRecord:
    """Run one evaluation and fill ``rec``. Raises :class:`OptimizeFailure` for a
    run-ending failure after recording it on ``rec`` (state, spend, evidence)."""
    t0 = time.perf_counter()
    try:
        return _evaluate(ctx, rec, cand)
    finally:
        rec.duration_ms = int((time.perf_counter() - t0) * 1000)


def _evaluate(ctx, rec: EvalRecord, cand: Candidate) -> EvalRecord:
    """Check, run, record, then score: an evaluation the harness refuses or cannot score
    is returned ``evaluation_incomplete``; a failure of the run as a whole is raised."""
    task_ids = ctx.splits.ids(rec.split)
    _check_before(ctx, rec)
    if _skill_lost(ctx, rec, cand):
        return rec
    try:
        results = run_engine(ctx.suite, ctx.registry, cand, ctx.target, task_ids, ctx.context_dir,
                             placement=ctx.placement)
        failure: OptimizeFailure | None = None
    except _EngineSetup as exc:
        rec.state, rec.reason = "evaluation_incomplete", f"the harness refused the candidate: {exc}"
        return rec
    except _EngineFailed as exc:
        results = exc.results
        failure = OptimizeFailure("infrastructure_failure", f"evaluation {rec.index}: the harness failed: {exc}")
    failure = _record(ctx, rec, results, failure)
    if failure is None:
        failure = _missing_tasks(rec, results, task_ids)
    if failure is not None:
        rec.state, rec.reason = _state_for(failure.category), failure.message
        failure.context.setdefault("evaluation_index", rec.index)
        failure.context.setdefault("candidate_id", cand.id)
        raise failure
    return _score(rec, results, task_ids)


def _check_before(ctx, rec: EvalRecord) -> None:
    """The suite is still as pinned and the working folder still safe, or the run fails."""
    try:
        ctx.pin.check(f"before evaluation {rec.index}")
        ctx.check_cwd(rec)
    except OptimizeFailure as exc:
        rec.state, rec.reason = _state_for(exc.category), exc.message
        exc.context.setdefault("evaluation_index", rec.index)
        raise


def _skill_lost(ctx, rec: EvalRecord, cand: Candidate) -> bool:
    """A skill-directory candidate that no longer resolves as the suite's skill cannot be
    evaluated: the record says why (``evaluation_incomplete``)."""
    if ctx.target != "skill-directory":
        return False
    problem = skill_resolution_problem(cand, ctx.suite.skill)
    if problem:
        rec.state, rec.reason = ("evaluation_incomplete",
                                 f"the candidate no longer resolves as the suite's skill: {problem}")
    return bool(problem)


def _record(ctx, rec: EvalRecord, results: dict[str, Any] | None,
            failure: OptimizeFailure | None) -> OptimizeFailure | None:
    """Keep what the run produced (spend, task feedback, evidence), also when it failed, and
    return the failure that ends the run, most telling first: a changed suite, then the
    run's own failure, then an evidence write, then an interrupt."""
    if results is not None:
        rec.spend = spend_mod.evaluation_spend(results)
        rec.tasks = task_feedback(results)
    try:
        ctx.pin.check(f"after evaluation {rec.index}")
    except OptimizeFailure as exc:
        failure = exc  # a changed suite says more than anything that followed from it
    if results is not None:
        try:
            rec.evidence = write_evidence(ctx.out_dir, rec, results)
        except OptimizeFailure as exc:
            failure = failure or exc
    interrupted = ctx.interrupted()
    if interrupted and failure is None:
        failure = OptimizeFailure(
            interrupted, f"the run was {'cancelled' if interrupted == 'cancelled' else 'stopped by --timeout'} "
                         f"during evaluation {rec.index}")
    return failure


def _missing_tasks(rec: EvalRecord, results: dict[str, Any], task_ids: tuple[str, ...]) -> OptimizeFailure | None:
    """``missing_evidence`` unless the results hold exactly the split's tasks, once each."""
    got = [t.get("test_id") for t in results.get("tasks") or []]
    if sorted(got) != sorted(task_ids) or len(set(got)) != len(got):
        return OptimizeFailure("missing_evidence", f"evaluation {rec.index}: the harness returned tasks {got}, "
                                                   f"expected {list(task_ids)}")
    return None


def _score(rec: EvalRecord, results: dict[str, Any], task_ids: tuple[str, ...]) -> EvalRecord:
    """The aggregate score and pass rate, unless the results cannot be scored."""
    reason = unscorable_reason(results)
    if reason:
        rec.state, rec.reason = "evaluation_incomplete", reason
        return rec
    summary = results["summary"]
    rec.score = float(summary["aggregate_score"])
    total = summary.get("total_tests") or len(task_ids)
    rec.pass_rate = summary.get("succeeded", 0) / total if total else 0.0
    return rec


def _state_for(category: str) -> str:
    return category if category in ("invalid_suite", "suite_changed", "missing_evidence",
                                    "infrastructure_failure", "cancelled", "timeout") else "evaluation_incomplete"
