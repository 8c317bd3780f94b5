"""The optimizer loop: negotiate, evaluate the seed, propose and evaluate candidates
within the budgets, qualify seed and best on the held-out split, decide.

Proposal, evaluation and acceptance are separate steps: the adapter only proposes,
the harness evaluates, and only this module decides. Every run that has an output
folder ends with a ``report.json``, whatever happened.
"""

from __future__ import annotations

import math
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from waza_core.errors import SuiteError, WazaError
from waza_core.optimize import contract
from waza_core.optimize import spend as spend_mod
from waza_core.optimize.adapter import AdapterFailure, AdapterOptions
from waza_core.optimize.candidates import Candidate, CandidateStore, Lineage, check_files, load_seed, overlay_problem
from waza_core.optimize.evaluate import EvalRecord, evaluate
from waza_core.optimize.failures import OptimizeFailure
from waza_core.optimize.pin import Admission, SuitePin, cwd_skill, default_context_dir, select_splits
from waza_core.optimize.report import ReportBuilder

RESERVED = contract.RESERVED_QUALIFICATION_EVALUATIONS
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str, flag: str) -> float:
    """Seconds from a Go-style duration (``10m``, ``1h30m``, ``250ms``, ``0``)."""
    s = text.strip()
    if s in ("0", "+0", "-0"):
        return 0.0
    sign = 1.0
    if s[:1] in "+-" and s:
        sign, s = (-1.0 if s[0] == "-" else 1.0), s[1:]
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if not m or m.group(1) in ("", "."):
            raise OptimizeFailure("invalid_config", f"{flag} {text!r} is not a duration; use e.g. 30s, 10m or 1h30m")
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not s:
        raise OptimizeFailure("invalid_config", f"{flag} is empty; use e.g. 30s, 10m or 1h30m")
    return sign * total


#: differences of scores smaller than this are float noise, not improvements
SCORE_EPSILON = 1e-9


def improves(seed_score: float, best_score: float, min_improvement: float) -> bool:
    """Whether best beats seed by *more than* ``min_improvement``.

    Scores are means of task scores, so their difference is inexact (0.8 - 0.7 is
    0.10000000000000009): a tie with the bar must stay a tie, not pass by float noise.
    """
    return best_score - seed_score > min_improvement + SCORE_EPSILON


@attrs.define
class OptimizeConfig:
    eval_file: Path
    target: str
    seed: Path
    optimization_tag: str
    qualification_tag: str
    adapter: str
    output_dir: Path
    max_iterations: int = 5
    max_evaluations: int = 10
    timeout: str | None = None
    adapter_timeout: str = "10m"
    min_improvement: float = 0.0
    allow_paid_calls: bool = False
    adapter_options: AdapterOptions = attrs.field(factory=AdapterOptions)
    plugins: list[str] = attrs.field(factory=list)
    backend: str | None = None  # --backend: where evaluation runs run (as waza run --backend)
    ray_address: str | None = None  # --ray-address
    cwd: Path | None = None
    progress: Any = None  # callable(str) for progress lines on stderr


class Interrupts:
    """Ctrl-C and the ``--timeout`` deadline, turned into one cancel flag.

    The deadline delivers SIGINT to the main thread, so a blocking engine run stops
    the same way it does for Ctrl-C; ``reason`` tells the two apart. Later signals
    are absorbed so the report can still be written."""

    def __init__(self, timeout_s: float | None) -> None:
        self.deadline = time.monotonic() + timeout_s if timeout_s else None
        self.cancel = threading.Event()
        self.reason: str | None = None
        self._old = None
        self._timer: threading.Timer | None = None
        self._main = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> "Interrupts":
        if self._main:
            self._old = signal.signal(signal.SIGINT, self._handler)
            if self.deadline is not None:
                self._timer = threading.Timer(max(0.0, self.deadline - time.monotonic()), self._expire)
                self._timer.daemon = True
                self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer:
            self._timer.cancel()
        if self._main and self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def _handler(self, signum, frame) -> None:
        if self.reason is None:
            self.reason = "cancelled"
        self.cancel.set()
        if not self._raised:  # later signals are absorbed so the report gets written
            self._raised = True
            raise KeyboardInterrupt

    _raised = False

    def _expire(self) -> None:
        if self.reason is None:
            self.reason = "timeout"
            self.cancel.set()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def poll(self) -> str | None:
        """The interruption, if any; also notices a passed deadline without a signal."""
        if self.reason is None and self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = "timeout"
            self.cancel.set()
        return self.reason

    def check(self, where: str) -> None:
        reason = self.poll()
        if reason:
            raise OptimizeFailure(reason, interrupted_message(reason, where))


def interrupted_message(reason: str, where: str) -> str:
    return f"{'cancelled (Ctrl-C)' if reason == 'cancelled' else 'the --timeout deadline passed'} {where}"


class OptimizerRun:
    """State of one ``waza optimize run``; :meth:`execute` returns the exit code."""

    def __init__(self, cfg: OptimizeConfig, registry=None) -> None:
        self.cfg = cfg
        self.registry = registry
        self.out_dir = cfg.output_dir
        self.target = cfg.target
        self.report = ReportBuilder(cfg.target, cfg.adapter)
        self.adapter = None
        self.negotiation = None
        self.store = CandidateStore(self.out_dir / "candidates")
        self.intr: Interrupts | None = None
        self.current: EvalRecord | None = None
        self.cwd = cfg.cwd or Path(os.getcwd())
        #: (backend, its options, plugin modules) of every evaluation (``--backend``; set up in _setup)
        self.placement: tuple[str, dict, tuple[str, ...]] = ("local", {}, ())

    # -- helpers used by evaluate() ------------------------------------------------
    def interrupted(self) -> str | None:
        return self.intr.poll() if self.intr else None

    def check_cwd(self, rec: EvalRecord) -> None:
        if self.target == "skill-directory":
            found = cwd_skill(self.suite.skill, self.cwd)
            if found:
                raise OptimizeFailure("invalid_suite", f"a skill named {self.suite.skill!r} can now be found from "
                                                       f"the working directory ({found}); the runner would use it "
                                                       "instead of the candidate")

    def say(self, text: str) -> None:
        if self.cfg.progress:
            self.cfg.progress(text)

    # -- the run --------------------------------------------------------------------
    def execute(self) -> int:
        failure = None
        outcome = None
        timeout_s = None
        try:
            timeout_s = self._check_flags()
            self.intr = Interrupts(timeout_s)
            with self.intr:
                try:
                    outcome = self._run()
                except KeyboardInterrupt:
                    reason = self.intr.reason or "cancelled"
                    if self.current is not None and self.current.state == "scored" and self.current.score is None:
                        self.current.state, self.current.reason = (
                            reason, interrupted_message(reason, "during the evaluation"))
                    failure = OptimizeFailure(reason, interrupted_message(reason, "while the optimizer was running"))
        except OptimizeFailure as exc:
            failure = exc
            if self.current is not None and self.current.state == "scored" and self.current.score is None:
                self.current.state = (exc.category if exc.category in ("cancelled", "timeout")
                                      else "infrastructure_failure")
                self.current.reason = exc.message
        finally:
            if self.adapter is not None:
                try:
                    self.adapter.close()
                except Exception:  # closing must not hide the run's real outcome
                    pass
        doc = self.report.finish(outcome, failure)
        self.report.write(self.out_dir)
        self.say(f"outcome: {doc['outcome']} ({doc['stop_reason']})"
                 + (f" - {doc['failure']['category']}: {doc['failure']['message']}" if doc["failure"] else ""))
        return doc["exit_code"]

    def _check_flags(self) -> float | None:
        cfg, b = self.cfg, self.report.doc["budget"]
        b["max_iterations"], b["max_evaluations"] = cfg.max_iterations, cfg.max_evaluations
        b["min_improvement"] = cfg.min_improvement if math.isfinite(cfg.min_improvement) else None
        self.report.doc["consent"]["allow_paid_calls"] = cfg.allow_paid_calls
        problems = []
        if cfg.target not in contract.TARGETS:
            problems.append(f"--target must be one of {', '.join(contract.TARGETS)}")
        if cfg.max_iterations < 0:
            problems.append("--max-iterations must not be negative")
        if cfg.max_evaluations < 1 + RESERVED:
            problems.append(f"--max-evaluations must be at least {1 + RESERVED} (the seed and "
                            f"{RESERVED} reserved for qualification)")
        if not math.isfinite(cfg.min_improvement) or cfg.min_improvement < 0:
            problems.append("--min-improvement must be a number >= 0")
        if not cfg.optimization_tag or not cfg.qualification_tag:
            problems.append("--optimization-tag and --qualification-tag must not be empty")
        timeout_s = None
        if cfg.timeout is not None:
            timeout_s = parse_duration(cfg.timeout, "--timeout")
            if timeout_s < 0:
                problems.append("--timeout must not be negative")
            b["timeout_ms"] = int(max(timeout_s, 0) * 1000) if timeout_s else None
        adapter_timeout = parse_duration(cfg.adapter_timeout, "--adapter-timeout")
        if adapter_timeout <= 0:
            problems.append("--adapter-timeout must be positive")
        else:
            b["adapter_timeout_ms"] = int(adapter_timeout * 1000)
        if problems:
            raise OptimizeFailure("invalid_config", "; ".join(problems))
        self.adapter_timeout = adapter_timeout
        return timeout_s or None

    def _setup(self) -> Candidate:
        # deferred: waza_core.plugins adds ~16.4 ms to importing this module
        from waza_core.plugins import get_registry
        from waza_core.suite.load import load_suite

        cfg = self.cfg
        try:
            self.registry = self.registry or get_registry(cfg.plugins)
            self.registry.check_conflicts()
        except WazaError as exc:
            raise OptimizeFailure("invalid_config", str(exc)) from None
        adapter_cls = self.registry.get("optimizer_adapter", cfg.adapter)
        if adapter_cls is None:
            raise OptimizeFailure("invalid_config",
                                  f"--adapter: {self.registry.unknown('optimizer_adapter', cfg.adapter)}")
        try:
            self.suite = load_suite(cfg.eval_file, self.registry)
        except SuiteError as exc:
            raise OptimizeFailure("invalid_suite", "the suite does not load:\n  " + "\n  ".join(exc.problems)) from None
        except WazaError as exc:
            raise OptimizeFailure("invalid_suite", str(exc)) from None
        try:
            # deferred: waza_core.run.command adds ~198.2 ms to importing this module
            from waza_core.run.command import requested_plugins, resolve_backend

            backend, backend_options = resolve_backend(cfg.backend, cfg.ray_address, None, self.suite)
        except WazaError as exc:
            raise OptimizeFailure("invalid_config", str(exc)) from None
        self.placement = (backend, backend_options, tuple(requested_plugins(cfg.plugins)))
        unknown = adapter_cls.option_problems(cfg.adapter_options)
        if unknown:
            raise OptimizeFailure("invalid_config", "; ".join(unknown))
        options = attrs.evolve(cfg.adapter_options, timeout_seconds=self.adapter_timeout,
                               eval_model=self.suite.config.model, eval_executor=self.suite.config.executor)
        try:
            self.adapter = adapter_cls(options)
            problems = self.adapter.check_options()
        except AdapterFailure as exc:
            raise OptimizeFailure("invalid_config", str(exc)) from None
        if problems:
            raise OptimizeFailure("invalid_config", "; ".join(problems))
        seed = load_seed(cfg.seed, self.target)
        self.context_dir = default_context_dir(self.suite)
        if self.target == "context-overlay":
            problem = overlay_problem((p for p, _ in seed.files), self.context_dir)
            if problem:
                raise OptimizeFailure("unsafe_candidate_path", f"seed: {problem}")
        self.splits = select_splits(self.suite, cfg.optimization_tag, cfg.qualification_tag)
        exclude = [self.out_dir]
        Admission(self.suite, self.target, self.splits, self.context_dir).check(exclude, self.cwd)
        self.pin = SuitePin(self.suite, self.splits, self.context_dir, exclude)
        self.report.doc["suite_pin"] = self.pin.doc
        # consent, before the adapter is described
        reasons = []
        if adapter_cls.always_paid:
            reasons.append("adapter")
        executor_cls = self.registry.get("executor", self.suite.config.executor)
        if executor_cls is None or getattr(executor_cls, "paid", True):  # mock declares paid = False
            reasons.append("executor")
        self._consent(reasons, "before describe")
        return seed

    def _consent(self, reasons: list[str], when: str) -> None:
        consent = self.report.doc["consent"]
        consent["reasons"] = list(dict.fromkeys(consent["reasons"] + reasons))
        consent["required"] = bool(consent["reasons"])
        if consent["required"] and not self.cfg.allow_paid_calls:
            why = {"adapter": f"the {self.cfg.adapter} adapter may make paid calls",
                   "executor": f"executor {self.suite.config.executor!r} may make paid calls (it is not mock)",
                   "paid_calls": "the adapter's describe reply says paid_calls: true"}
            raise OptimizeFailure("consent_required",
                                  f"paid calls are possible ({'; '.join(why[r] for r in reasons)}), "
                                  f"checked {when}; pass --allow-paid-calls to allow them")

    def _call(self, request: dict[str, Any], operation: str, versions: tuple[str, ...]):
        """One adapter call: validated request, bounded time, strictly parsed reply.
        Returns (doc, spend, stderr_tail); raises OptimizeFailure with the spend kept."""
        contract.validate_request(request)
        timeout = self.adapter_timeout
        remaining = self.intr.remaining()
        if remaining is not None:
            timeout = min(timeout, remaining)
        self.intr.check(f"before the {operation} call")
        adapter_reported = bool(self.negotiation and self.negotiation.has("usage.adapter-reported"))
        try:
            reply = self.adapter.call(request, timeout=timeout, cancel=self.intr.cancel)
        except AdapterFailure as exc:
            reason = self.intr.poll()
            spend = spend_mod.proposal_spend(None, exc.usage, adapter_reported)
            category = reason or exc.category
            if category not in ("optimizer_failure", "malformed_proposal", "unsupported_version",
                                "cancelled", "timeout"):
                category = "optimizer_failure"
            raise _CallFailed(OptimizeFailure(category, f"{operation}: {exc}"), spend, exc.stderr_tail) from None
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            raise _CallFailed(OptimizeFailure("optimizer_failure", f"{operation}: adapter crashed: "
                                              f"{type(exc).__name__}: {exc}"),
                              dict(spend_mod.UNAVAILABLE), None) from None
        measured = reply.usage
        if not isinstance(reply.raw, (bytes, bytearray)):
            raise _CallFailed(OptimizeFailure("optimizer_failure", f"{operation}: adapter returned no bytes"),
                              spend_mod.proposal_spend(None, measured, adapter_reported), reply.stderr_tail)
        try:
            doc = contract.parse_reply(bytes(reply.raw), operation, versions)
        except OptimizeFailure as exc:
            raise _CallFailed(exc, spend_mod.proposal_spend(None, measured, adapter_reported),
                              reply.stderr_tail) from None
        return doc, spend_mod.proposal_spend(doc.get("usage"), measured, adapter_reported), reply.stderr_tail

    def _describe(self) -> None:
        try:
            doc, _, _ = self._call(contract.describe_request(self.target), "describe", contract.CONTRACT_VERSIONS)
        except _CallFailed as exc:
            raise exc.failure from None
        self.negotiation = neg = contract.negotiate(doc, self.target)
        self.report.set_negotiation(neg)
        self._consent(["paid_calls"] if neg.paid_calls else [], "after describe")

    def _evaluate(self, cand: Candidate, split: str, role: str) -> EvalRecord:
        self.intr.check(f"before evaluating {cand.prefix} on the {split} split")
        rec = EvalRecord(index=len(self.report.eval_records), split=split, candidate_id=cand.id, role=role)
        self.report.add_evaluation(rec)
        self.current = rec
        self.say(f"evaluating {role} {cand.prefix} on the {split} split ...")
        evaluate(self, rec, cand)
        self.current = None
        self.say(f"  {rec.state}" + (f", score {rec.score:.3f}" if rec.score is not None else f": {rec.reason}"))
        return rec

    def _run(self) -> str:
        seed = self._setup()
        self._describe()
        self.report.doc["seed_candidate_id"] = seed.id
        self.store.save(seed, Lineage(None, "seed", None, None, 0))
        self.report.doc["candidates"].append(self.store.records[seed.id])
        seed_rec = self._evaluate(seed, "optimization", "seed")
        if not seed_rec.scored:
            raise OptimizeFailure("evaluation_incomplete", f"the seed could not be scored: {seed_rec.reason}",
                                  candidate_id=seed.id, evaluation_index=seed_rec.index)
        best, best_rec = self._loop(seed, seed_rec)
        return self._decide(seed, seed_rec, best, best_rec)

    def _loop(self, seed: Candidate, seed_rec: EvalRecord) -> tuple[Candidate, EvalRecord]:
        cfg, neg, doc = self.cfg, self.negotiation, self.report.doc
        incumbent, inc_rec = seed, seed_rec
        history = [seed_rec]
        lineage = {seed.id: None}
        iterations = {seed.id: 0}
        opt_budget = cfg.max_evaluations - RESERVED
        self.report.stop_reason = None
        while True:
            if doc["budget"]["iterations_used"] >= cfg.max_iterations:
                self.report.stop_reason = "iteration_budget"
                break
            opt_used = sum(1 for r in self.report.eval_records if r.split == "optimization")
            if opt_used >= opt_budget:
                self.report.stop_reason = "evaluation_budget"
                break
            self.intr.check("before the next proposal")
            doc["budget"]["iterations_used"] += 1
            iteration = doc["budget"]["iterations_used"]
            request = self._propose_request(iteration, incumbent, inc_rec, history, lineage, iterations,
                                            opt_budget - opt_used)
            t0 = time.perf_counter()
            entry = {"iteration": iteration, "parent_id": incumbent.id, "result": "failed", "candidate_id": None,
                     "duration_ms": 0, "spend": dict(spend_mod.UNAVAILABLE), "failure": None, "stderr_tail": None}
            doc["proposals"].append(entry)
            try:
                reply, spend, tail = self._call(request, "propose", (neg.contract_version,))
            except _CallFailed as exc:
                entry.update(duration_ms=int((time.perf_counter() - t0) * 1000), spend=exc.spend,
                             stderr_tail=exc.stderr_tail,
                             failure={"category": exc.failure.category, "message": exc.failure.message})
                exc.failure.context.setdefault("iteration", iteration)
                raise exc.failure from None
            entry.update(duration_ms=int((time.perf_counter() - t0) * 1000), spend=spend, stderr_tail=tail)
            try:
                cand = self._accept_reply(reply, incumbent)
            except OptimizeFailure as exc:
                entry["failure"] = {"category": exc.category, "message": exc.message}
                exc.context.setdefault("iteration", iteration)
                raise
            if cand is None:
                entry["result"] = "done"
                self.report.stop_reason = "adapter_done"
                break
            entry["candidate_id"] = cand.id
            if cand.id in self.store.records:
                entry["result"] = "duplicate"
                self.say(f"iteration {iteration}: duplicate of {cand.prefix}, not evaluated")
                continue
            entry["result"] = "candidate"
            self.store.save(cand, Lineage(incumbent.id, "proposal", neg.adapter_name, neg.adapter_version, iteration))
            doc["candidates"].append(self.store.records[cand.id])
            lineage[cand.id], iterations[cand.id] = incumbent.id, iteration
            rec = self._evaluate(cand, "optimization", "candidate")
            history.append(rec)
            if rec.scored and rec.score > inc_rec.score:
                incumbent, inc_rec = cand, rec
        doc["best_candidate_id"] = incumbent.id
        return incumbent, inc_rec

    def _accept_reply(self, reply: dict[str, Any], parent: Candidate) -> Candidate | None:
        if reply["parent_id"] != parent.id:
            raise OptimizeFailure("malformed_proposal", f"propose reply names parent {reply['parent_id'][:16]}, "
                                                        f"the request's parent is {parent.prefix}")
        if reply["status"] == "done":
            return None
        files = check_files(reply["files"], self.target)
        if self.target == "context-overlay":
            problem = overlay_problem((p for p, _ in files), self.context_dir)
            if problem:
                raise OptimizeFailure("unsafe_candidate_path", f"candidate: {problem}")
        return Candidate(self.target, files)

    def _propose_request(self, iteration, parent, parent_rec, history, lineage, iterations, evals_left) -> dict:
        neg = self.negotiation
        evaluation = _eval_summary(parent_rec)
        if neg.has("feedback.task-results"):
            evaluation["tasks"] = parent_rec.tasks
        remaining: dict[str, int] = {}
        if neg.has("budget.iterations"):
            remaining["iterations"] = self.cfg.max_iterations - iteration + 1
        if neg.has("budget.evaluations"):
            remaining["evaluations"] = max(0, evals_left)
        if neg.has("budget.deadline") and self.intr.remaining() is not None:
            remaining["deadline_ms"] = int(self.intr.remaining() * 1000)
        hist = []
        for r in history:  # optimization split only, by construction
            h = _eval_summary(r)
            h["iteration"] = iterations[r.candidate_id]
            if lineage.get(r.candidate_id):
                h["parent_id"] = lineage[r.candidate_id]
            hist.append(h)
        return {
            "kind": contract.REQUEST_KIND, "schema_version": contract.SCHEMA_VERSION, "operation": "propose",
            "contract_version": neg.contract_version, "target": self.target,
            "capabilities": list(neg.selected), "iteration": iteration,
            "parent": {"candidate_id": parent.id, "origin": "seed" if lineage.get(parent.id) is None else "proposal",
                       "files": parent.file_dicts()},
            "feedback": {"split": "optimization", "evaluation": evaluation, "history": hist},
            "remaining": remaining,
        }

    def _decide(self, seed, seed_rec, best, best_rec) -> str:
        q = self.report.doc["qualification"]
        improvement = best_rec.score - seed_rec.score
        q.update(min_improvement=self.cfg.min_improvement, optimization_seed_score=seed_rec.score,
                 optimization_best_score=best_rec.score, improvement=improvement)
        if best.id == seed.id or not improves(seed_rec.score, best_rec.score, self.cfg.min_improvement):
            q.update(status="skipped", reason="no_improvement")
            return "no_improvement"
        q_seed = self._evaluate(seed, "qualification", "qualification-seed")
        q["seed_evaluation_index"], q["seed_score"] = q_seed.index, q_seed.score
        q_best = self._evaluate(best, "qualification", "qualification-candidate")
        q["candidate_evaluation_index"], q["candidate_score"] = q_best.index, q_best.score
        if not (q_seed.scored and q_best.scored):
            which = [r.role for r in (q_seed, q_best) if not r.scored]
            q.update(status="unscorable", reason=f"could not score: {', '.join(which)}")
            return "not_qualified"
        decision = "accepted" if q_best.score >= q_seed.score else "rejected"
        q.update(status="completed", decision=decision,
                 reason="no regression on the held-out split" if decision == "accepted"
                 else "the candidate scores lower than the seed on the held-out split")
        return decision


def _eval_summary(rec: EvalRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"candidate_id": rec.candidate_id, "state": rec.state}
    if rec.scored:
        out["score"], out["pass_rate"] = rec.score, rec.pass_rate
    return out


class _CallFailed(Exception):
    def __init__(self, failure: OptimizeFailure, spend: dict, stderr_tail: str | None) -> None:
        super().__init__(failure.message)
        self.failure, self.spend, self.stderr_tail = failure, spend, stderr_tail


def prepare_output_dir(path: Path) -> None:
    """The output folder must be new or empty: a report must never mix two runs.
    Raised as a plain WazaError (exit 2) because no report can be written there."""

    if path.exists():
        if not path.is_dir():
            raise WazaError(f"--output-dir {path}: exists and is not a folder")
        try:
            if any(path.iterdir()):
                raise WazaError(f"--output-dir {path}: the folder is not empty; choose a new one")
            os.chmod(path, 0o700)
        except OSError as exc:
            raise WazaError(f"--output-dir {path}: cannot use it: {exc.strerror}") from None
        return
    try:
        path.mkdir(mode=0o700, parents=True)
        os.chmod(path, 0o700)
    except OSError as exc:
        raise WazaError(f"--output-dir {path}: cannot create it: {exc.strerror}") from None


def run_optimizer(cfg: OptimizeConfig, registry=None) -> int:
    """Run the optimizer; ``report.json`` is written in ``cfg.output_dir``. Returns the exit code."""
    prepare_output_dir(cfg.output_dir)
    return OptimizerRun(cfg, registry).execute()
