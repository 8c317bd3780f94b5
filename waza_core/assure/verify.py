"""The assessment: waza (Go) ``assurance.Verify``, ported rule for rule.

For each case of the labels and each of its checks, the check's grader (a declaration of the
suite, found by scope and name) is run on the case's evidence through the same grading code as
``waza run`` and ``waza grade`` (:func:`waza_core.grading.grade.grade_one`), and its verdict is
compared with the label's ``expected_passed``. Nothing else runs: no agent, no model, no hook.

Each observation, requirement, domain and the report get a ``state`` (``passed``, ``failed``,
``not_assessed``, ``insufficient_evidence``, ``operational_error``, ``invalid``); the report's
is the worst one met, with its ``reason``. It is ``passed`` only when

* every binding holds: the eval file's bytes, the resolved config, the implementation, and per
  observation the grader and task declarations (``verified``; ``missing`` is ``not_assessed``,
  ``mismatch`` is ``invalid``);
* the supplied review is eligible (``--review`` + ``--accept-review-source``, ``reviewed``, of
  exactly these label bytes);
* every task of the suite declares requirements with checks, every check has at least one
  ``good``, one ``alternative_valid`` and two ``critical_bad`` cases observed (one an intended
  rejection), and every observation agreed with its label;
* each domain observed at least ``minimum_cases`` cases in full, with agreement at least
  ``minimum_agreement``.

Differences from waza (Go), by design (docs/assure.md): digests of declarations are the
``json-v1`` digests of the documents as written (waza (Go) digests its Go structs, which Python
cannot reproduce), the implementation digest covers waza for Python's own source files, and
preserved-snapshot cases are ``not_assessed`` (this port writes no evidence snapshots).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib
import os
from pathlib import Path
from typing import Any

import attrs

from waza_core.assure import authored, jsonv1
from waza_core.assure.documents import Located, Review, origin_of, read_bounded
from waza_core.errors import WazaError
from waza_core.grading.base import GraderSetup, GradingContext
from waza_core.grading.build import build_grader, close_graders, start_graders
from waza_core.grading.grade import grade_one
from waza_core.model import GraderSpec, RunEvidence, Suite, TaskSpec

REPORT_KIND = "waza.grader-assurance"
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
#: grader types an authored output can be judged by (waza (Go): text and JSON-schema parameters)
AUTHORED_TYPES = ("text", "json_schema")
#: the packages whose source files make up the implementation digest
IMPLEMENTATION_PACKAGES = ("waza_core", "waza_graders", "waza_adapters", "waza_events", "waza_reporters")
LIMITATIONS = (
    "Agreement applies only to the supplied finite cases, not all possible agent behavior.",
    "Supplied-review eligibility does not authenticate humans or discover withheld revocations.",
    "Executable-byte identity is specific to this exact platform and build.",
    "Historical snapshots do not certify complete output, event, session or checkpoint inputs.",
    "Subset file capture cannot prove absence; unsupported capabilities remain not assessed.",
    "Authored output is evaluator-supplied finite input, not historical execution or observed billing.",
)
_PRIORITY = {"invalid": 5, "operational_error": 4, "failed": 3, "insufficient_evidence": 2, "not_assessed": 1,
             "passed": 0}


class AssureError(WazaError):
    """The assessment cannot be made at all (exit 2)."""


@attrs.define
class Request:
    """What one ``waza assure`` assesses."""

    suite: Suite
    registry: Any
    labels: Located
    eval_source: bytes
    review: Review | None = None
    accepted_source: str = ""
    now: datetime.datetime = attrs.field(factory=lambda: datetime.datetime.now(datetime.timezone.utc))
    calibrate: bool = False


# --- digests ----------------------------------------------------------------------------------


def implementation_sha256() -> str:
    """The identity of this waza for Python: SHA-256 over its packages' ``.py`` and ``.json``
    files (relative path, length, bytes; in path order). waza (Go) hashes its executable."""

    h = hashlib.sha256()
    files: list[tuple[str, Path]] = []
    for name in IMPLEMENTATION_PACKAGES:
        root = Path(importlib.import_module(name).__file__).parent
        for path in root.rglob("*"):
            if path.suffix in (".py", ".json") and "__pycache__" not in path.parts and path.is_file():
                files.append((f"{name}/{path.relative_to(root).as_posix()}", path))
    for rel, path in sorted(files):
        data = path.read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def task_sha256(task: TaskSpec) -> str:
    """``native_task_declaration_json_v1``: the json-v1 digest of the task document as written."""
    return jsonv1.digest(task.raw)


def resolved_config_sha256(suite: Suite) -> str:
    """``eval_resolved_config_json_v1``: the json-v1 digest of the eval document as parsed."""
    return jsonv1.digest(suite.raw)


def bindings_document(suite: Suite, eval_source: bytes) -> dict:
    """Every digest a label file of this suite must carry (``waza assure --bindings``)."""
    tasks = []
    for task in sorted(suite.tasks, key=lambda t: t.id):
        checks = []
        for req in task.requirements:
            for check in req.get("checks") or () if isinstance(req, dict) else ():
                entry = {"requirement_id": req.get("id"), "check": _check_json(check)}
                try:
                    _spec, raw = resolve_grader(check, task, suite)
                    entry["grader_declaration_sha256"] = jsonv1.digest(raw)
                except LookupError as exc:
                    entry["grader_declaration_sha256"] = None
                    entry["problem"] = str(exc)
                checks.append(entry)
        tasks.append({"task_id": task.id, "task_declaration_sha256": task_sha256(task), "checks": checks})
    return {"eval_source_sha256": jsonv1.sha256(eval_source),
            "eval_resolved_config_sha256": resolved_config_sha256(suite),
            "implementation_executable_sha256": implementation_sha256(), "tasks": tasks}


def _check_json(check: dict) -> dict:
    out = {"scope": check.get("scope", ""), "grader": check.get("grader", "")}
    if check.get("after_turn"):
        out["after_turn"] = check["after_turn"]
    return out


# --- declarations ------------------------------------------------------------------------------


def resolve_grader(check: dict, task: TaskSpec, suite: Suite) -> tuple[GraderSpec, dict]:
    """The one declaration a scoped check names: (its spec, its entry as written).

    ``eval`` scope: the eval's ``graders``; ``task``: the task's; ``checkpoint``: the graders of
    the task's checkpoint ``after_turn``. None or several of that name is a :class:`LookupError`."""
    name, scope = check.get("grader") or "", check.get("scope")
    if not str(name).strip():
        raise LookupError("grader reference is empty")
    if scope != "checkpoint" and check.get("after_turn"):
        raise LookupError("after_turn is only valid for checkpoint scope")
    if scope == "eval":
        pairs = list(zip(suite.graders, _entries(suite.raw.get("graders")), strict=False))
    elif scope == "task":
        pairs = list(zip(task.graders, _entries(task.raw.get("graders")), strict=False))
    elif scope == "checkpoint":
        pairs = []
        raw_points = _entries(task.raw.get("checkpoints"))
        for point, raw in zip(task.checkpoints, raw_points, strict=False):
            if point.after_turn == check.get("after_turn"):
                pairs += list(zip(point.graders, _entries(raw.get("graders")), strict=False))
    else:
        raise LookupError(f"unknown reference scope {scope!r}")
    found = [(spec, raw) for spec, raw in pairs if spec.name == name]
    if len(found) != 1:
        raise LookupError(f"{scope} grader {name!r} is {'ambiguous' if found else 'not declared'}")
    return found[0]


def _entries(value: Any) -> list[dict]:
    return [e if isinstance(e, dict) else {} for e in value] if isinstance(value, list) else []


# --- one observation ------------------------------------------------------------------------------


def binding(domain: str, expected: str | None, actual: str | None) -> dict:
    state = "missing"
    if expected is not None and actual is not None:
        state = "verified" if expected == actual else "mismatch"
    return {"domain": domain, "applicable": True, "state": state, "expected": expected, "actual": actual}


def observe(req: Request, case: dict, check: dict, task: TaskSpec) -> dict:
    """waza (Go) ``verifyFileCase``: one check of one case, graded and compared with its label."""
    obs: dict[str, Any] = {
        "case_id": case["id"], "scenario_id": case["scenario_id"], "domain": case["domain"],
        "classification": case["classification"],
        "source_scope": "authored_finite_output" if "authored_input" in case else "preserved_file_subset",
        "expected_passed": check["expected_passed"], "state": "invalid", "reason": "invalid_declaration",
        "agreement": None, "result": None, "evidence": [_evidence_json(e) for e in check["evidence"]],
        "bindings": None,
    }
    try:
        spec, raw = resolve_grader(check["check"], task, req.suite)
    except LookupError:
        return obs
    if raw.get("ref"):
        return _set(obs, "not_assessed", "unexpanded_grader_reference")
    obs["bindings"] = [
        binding("native_grader_declaration_json_v1", check["grader_declaration_sha256"], jsonv1.digest(raw)),
        binding("native_task_declaration_json_v1", case["task_declaration_sha256"], task_sha256(task)),
        {"domain": "rubric_content_bytes", "applicable": False, "state": "not_applicable", "expected": None,
         "actual": None},
    ]
    if check["check"].get("scope") == "checkpoint":
        return _set(obs, "not_assessed", "checkpoint_inputs_not_preserved")
    if "authored_input" not in case:
        # waza for Python writes no evidence snapshots, so a preserved-file case cannot be checked
        return _set(obs, "not_assessed", "snapshot_capability_not_supported")
    if spec.type not in AUTHORED_TYPES:
        return _set(obs, "not_assessed", "authored_output_capability_not_supported")
    if check.get("rubric_content_sha256") is not None:
        return _set(obs, "invalid", "rubric_not_applicable")
    text = _authored_text(req, case, check, obs)
    if text is None:
        return obs
    if spec.type == "json_schema" and "schema" not in spec.config:
        return _set(obs, "not_assessed", "grader_observation_unavailable")  # a schema file is not confined input
    return _grade(req, spec, task, text, check, obs)


def _set(obs: dict, state: str, reason: str) -> dict:
    obs["state"], obs["reason"] = state, reason
    return obs


def _evidence_json(ref: dict) -> dict:
    out = {"origin": origin_of(ref), "artifact_id": ref.get("artifact_id") or ""}
    if ref.get("pointer"):
        out["pointer"] = ref["pointer"]
    return out


def _authored_text(req: Request, case: dict, check: dict, obs: dict) -> str | None:
    """The verified output text of an authored case, or None with the observation's state set."""
    where = case["authored_input"]
    try:
        data = read_confined(req.labels.path.parent, where["path"])
    except FileNotFoundError:
        _set(obs, "insufficient_evidence", "authored_input_unavailable")
        return None
    except OSError:
        _set(obs, "operational_error", "authored_input_read_failed")
        return None
    if jsonv1.sha256(data) != where["document_sha256"]:
        _set(obs, "invalid", "authored_document_binding_invalid")
        return None
    try:
        inp = authored.parse_input(data)
    except authored.InputProblem:
        _set(obs, "invalid", "authored_profile_binding_invalid")
        return None
    if inp.case_id != case["id"] or inp.manifest.get("sha256") != case["manifest_sha256"]:
        _set(obs, "invalid", "authored_profile_binding_invalid")
        return None
    if inp.output is None:
        _set(obs, "insufficient_evidence", "authored_output_unavailable")
        return None
    for ref in check["evidence"]:
        origin = origin_of(ref)
        if origin["eval_id"] != "reference:" + req.labels.data["id"] or origin["task_id"] != case["task_id"] or \
                ref.get("pointer") != "/output":
            _set(obs, "invalid", "authored_reference_invalid")
            return None
        if ref.get("artifact_id") != authored.ARTIFACT_ID or \
                authored.content_problem(inp.manifest, inp.payload, origin) is not None:
            _set(obs, "insufficient_evidence", "authored_content_not_verified")
            return None
    return inp.output


def read_confined(root: Path, rel: str) -> bytes:
    """A regular file at ``rel`` inside ``root`` (no link leads out), at most 16 MiB."""
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([base, target]) != base:
        raise PermissionError(f"{rel} leads outside the labels' folder")
    return read_bounded(target, MAX_SNAPSHOT_BYTES)


def _grade(req: Request, spec: GraderSpec, task: TaskSpec, text: str, check: dict, obs: dict) -> dict:
    """The declared grader on the authored output, through the run's own grading code."""
    try:
        grader = build_grader(spec, req.suite, req.registry)
        start_graders([grader], GraderSetup(executor=req.suite.config.executor, model=req.suite.config.model))
    except WazaError:
        return _set(obs, "invalid", "grader_observation_unavailable")
    try:
        result = grade_one(grader, GradingContext(task=task, evidence=RunEvidence(output=text), workspace_dir=None,
                                                  suite=req.suite))
    finally:
        close_graders([grader])
    obs["result"] = result.to_json()
    if result.error is not None:
        return _set(obs, "operational_error", "grader_observation_unavailable")
    obs["state"] = "observed"
    obs["agreement"] = result.passed == check["expected_passed"]
    obs["reason"] = "label_agreement" if obs["agreement"] else "label_disagreement"
    return obs


# --- the report ------------------------------------------------------------------------------------


def review_eligibility(req: Request) -> tuple[bool, str, bool]:
    """(eligible, reason, invalid): waza (Go) ``CheckAuthorReview``."""
    labels = req.labels.data
    review = req.review
    source = review.source_id if review else ""
    if not req.accepted_source or req.accepted_source != source:
        return False, "source_not_accepted", False
    if review is None:
        return False, "decision_missing", False
    if review.subject_id != labels["id"]:
        return False, "subject_identity_mismatch", False
    if review.subject_version != labels["version"]:
        return False, "subject_version_mismatch", False
    if review.labels_sha256 != jsonv1.sha256(req.labels.raw):
        return False, "label_digest_mismatch", False
    if review.state != "reviewed":
        return False, "not_reviewed", False
    if not review.reviewer.strip() or review.reviewed_at is None or review.reviewed_at > req.now:
        return False, "invalid_review", True
    return True, "", False


def _worse(holder: dict, state: str, reason: str | None = None, key: str = "state") -> None:
    if _PRIORITY[state] > _PRIORITY[holder[key]]:
        holder[key] = state
        if reason is not None:
            holder["reason"] = reason


def verify(req: Request) -> dict:
    """The ``waza.grader-assurance`` 1.0 report of ``req``."""
    labels = req.labels.data
    report: dict[str, Any] = {
        "kind": REPORT_KIND, "schema_version": "1.0",
        "created_at": _rfc3339nano(req.now),
        "state": "passed", "reason": "corpus_agreement", "labels_sha256": jsonv1.sha256(req.labels.raw),
        "review": {}, "bindings": [], "requirements": [], "domains": [], "calibration": {},
        "cache_policy": "no_reuse", "limitations": list(LIMITATIONS),
    }
    _review_part(req, report)
    _calibration_part(req, report)
    report["bindings"] = [
        binding("eval_source_bytes", labels["eval_source_sha256"], jsonv1.sha256(req.eval_source)),
        binding("eval_resolved_config_json_v1", labels["eval_resolved_config_sha256"],
                resolved_config_sha256(req.suite)),
        binding("implementation_executable_bytes", labels.get("implementation_executable_sha256"),
                implementation_sha256()),
    ]
    for b in report["bindings"]:
        if b["state"] == "mismatch":
            _worse(report, "invalid", "binding_mismatch")
        elif b["state"] == "missing":
            _worse(report, "not_assessed", "provenance_unavailable")
    index = _requirements_part(req, report)
    _cases_part(req, report, index)
    _finish(report)
    return report


def _rfc3339nano(when: datetime.datetime) -> str:
    """UTC time as Go's ``time.Time`` JSON (RFC 3339, fraction without trailing zeros)."""
    text = when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".")
    return text + "Z"


def _review_part(req: Request, report: dict) -> None:
    eligible, reason, invalid = review_eligibility(req)
    source = req.review.source_id if req.review else ""
    report["review"] = {"source_id": source,
                        "current_source_accepted": bool(req.accepted_source) and req.accepted_source == source,
                        "declared_state": req.review.state if req.review else "", "eligible": eligible}
    if reason:
        report["review"]["reason"] = reason
    if invalid:
        _worse(report, "invalid", "invalid_review")
    elif not eligible:
        _worse(report, "not_assessed", "review_not_eligible")


def _calibration_part(req: Request, report: dict) -> None:
    plan = req.labels.data.get("calibration")
    cal: dict[str, Any] = {"state": "not_assessed", "reason": "calibration_not_selected"}
    if plan:
        cal.update(protocol=plan["protocol"], model=plan["model"])
    cal.update(max_judge_executions=int(plan["max_judge_executions"]) if plan else 0, executions=0,
               billable_calls_bounded=False, cost_bounded=False, samples=0, confidence_supported=False,
               usage=None, credits=None)
    if req.calibrate:
        cal["reason"] = "calibration_plan_missing" if not plan else "calibration_executor_unavailable"
        _worse(report, "not_assessed", cal["reason"])
    report["calibration"] = cal


def _requirements_part(req: Request, report: dict) -> dict[tuple, int]:
    index: dict[tuple, int] = {}
    tasks: dict[str, TaskSpec] = {}
    for task in req.suite.tasks:
        if task.id in tasks:
            raise AssureError("assurance native task IDs are duplicated")
        tasks[task.id] = task
    for task_id in sorted(tasks):
        task = tasks[task_id]
        if not task.requirements:
            _worse(report, "not_assessed", "requirement_uncovered")
        seen: set[str] = set()
        for requirement in task.requirements:
            rid = requirement.get("id") if isinstance(requirement, dict) else None
            if not isinstance(rid, str) or not rid or rid != rid.strip() or rid in seen:
                raise AssureError(f"{task.filename}: assurance: native requirement identity is invalid or repeated "
                                  f"(task {task_id!r}, requirement {rid!r})")
            seen.add(rid)
            checks = requirement.get("checks") or []
            if not checks:
                _worse(report, "not_assessed", "requirement_uncovered")
            for check in checks:
                key = (task_id, rid, _key(check))
                if key in index:
                    raise AssureError(f"{task.filename}: assurance: native requirement repeats a scoped check "
                                      f"(task {task_id!r}, requirement {rid!r})")
                index[key] = len(report["requirements"])
                report["requirements"].append({
                    "task_id": task_id, "requirement_id": rid, "check": _check_json(check), "state": "passed",
                    "reason": "corpus_agreement", "declared_coverage": _coverage(), "observed_coverage": _coverage(),
                    "observations": []})
    if not report["requirements"]:
        _worse(report, "not_assessed", "requirement_uncovered")
    report["_tasks"] = tasks
    return index


def _key(check: dict) -> tuple:
    return (check.get("scope"), check.get("grader"), int(str(check.get("after_turn") or 0)))


def _coverage() -> dict:
    return {"good": 0, "alternative_valid": 0, "critical_bad": 0, "intended_negative": 0}


def _add_coverage(cov: dict, classification: str, expected: bool) -> None:
    cov[classification] += 1
    if classification == "critical_bad" and not expected:
        cov["intended_negative"] += 1


def _cases_part(req: Request, report: dict, index: dict[tuple, int]) -> None:
    labels = req.labels.data
    tasks: dict[str, TaskSpec] = report.pop("_tasks")
    domains: dict[str, dict] = {}
    for criteria in labels["domains"]:
        domains[criteria["id"]] = {
            "id": criteria["id"], "minimum_cases": int(criteria["minimum_cases"]),
            "minimum_agreement": float(criteria["minimum_agreement"]), "declared_cases": 0, "observed_cases": 0,
            "expected_checks": 0, "observed_checks": 0, "agreements": 0, "agreement": None, "state": "passed"}
        report["domains"].append(domains[criteria["id"]])
    for ci, case in enumerate(labels["cases"]):
        domain = domains[case["domain"]]
        domain["declared_cases"] += 1
        all_observed = True
        for check in case["checks"]:
            at = index.get((case["task_id"], check["requirement_id"], _key(check["check"])))
            if at is None:
                raise req.labels.error(("cases", ci), "assurance: labels select an undeclared scoped requirement "
                                                      f"check (task {case['task_id']!r}, requirement "
                                                      f"{check['requirement_id']!r}, grader "
                                                      f"{check['check'].get('grader')!r})")
            assessment = report["requirements"][at]
            _add_coverage(assessment["declared_coverage"], case["classification"], check["expected_passed"])
            domain["expected_checks"] += 1
            obs = observe(req, case, check, tasks[case["task_id"]])
            assessment["observations"].append(obs)
            if any(b["applicable"] and b["state"] == "mismatch" for b in obs["bindings"] or ()):
                assessment["state"], assessment["reason"] = "invalid", "binding_mismatch"
                domain["state"] = "invalid"
                _worse(report, "invalid", "binding_mismatch")
            if obs["state"] == "observed" and obs["agreement"] is not None:
                _observed(report, assessment, domain, case, check, obs)
            else:
                all_observed = False
                state = obs["state"] if obs["state"] in _PRIORITY else "not_assessed"
                _worse(domain, state)
                _worse(assessment, state, obs["reason"])
                _worse(report, state, obs["reason"])
        if all_observed:
            domain["observed_cases"] += 1


def _observed(report: dict, assessment: dict, domain: dict, case: dict, check: dict, obs: dict) -> None:
    _add_coverage(assessment["observed_coverage"], case["classification"], check["expected_passed"])
    domain["observed_checks"] += 1
    if obs["agreement"]:
        domain["agreements"] += 1
        return
    _worse(assessment, "failed", "label_disagreement")
    _worse(domain, "failed")
    if case["classification"] == "critical_bad" and not check["expected_passed"] and obs["result"]["passed"]:
        if assessment["state"] == "failed":
            assessment["reason"] = "critical_false_acceptance"
        _worse(report, "failed", "critical_false_acceptance")
    _worse(report, "failed", assessment["reason"])


def _finish(report: dict) -> None:
    eligible = report["review"]["eligible"]
    for a in report["requirements"]:
        cov = a["observed_coverage"]
        if a["state"] == "passed" and (cov["good"] < 1 or cov["alternative_valid"] < 1 or cov["critical_bad"] < 2
                                       or cov["intended_negative"] < 1):
            a["state"], a["reason"] = "not_assessed", "challenge_coverage_missing"
            _worse(report, "not_assessed", "challenge_coverage_missing")
        if a["state"] == "passed" and not eligible:
            a["state"], a["reason"] = "not_assessed", "review_not_eligible"
        for b in report["bindings"]:
            if a["state"] == "passed" and b["state"] != "verified":
                a["state"], a["reason"] = ("invalid", "binding_mismatch") if b["state"] == "mismatch" else \
                    ("not_assessed", "provenance_unavailable")
    for d in report["domains"]:
        if d["observed_checks"] > 0:
            d["agreement"] = d["agreements"] / d["observed_checks"]
        if d["observed_cases"] < d["minimum_cases"] or d["observed_checks"] != d["expected_checks"]:
            _worse(d, "insufficient_evidence")
            _worse(report, "insufficient_evidence", "domain_samples_unavailable")
        elif d["agreement"] is None or d["agreement"] < d["minimum_agreement"]:
            _worse(d, "failed")
            _worse(report, "failed", "domain_criterion_failed")
        if d["state"] == "passed" and not eligible:
            d["state"] = "not_assessed"
        for b in report["bindings"]:
            if d["state"] == "passed" and b["state"] != "verified":
                d["state"] = "invalid" if b["state"] == "mismatch" else "not_assessed"
