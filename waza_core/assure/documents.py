"""The label (``waza.grader-reference`` 1.0) and review (``waza.grader-review`` 1.0) documents.

Both are read exactly as waza (Go) ``internal/assurance/reference.go`` reads them: JSON of at
most 1 MiB, one unambiguous object, no property outside the declared ones at any depth, values of
the declared types, then the same validation rules (identifiers, lower-case SHA-256 digests, one
domain per case, a critical-bad case with an intended rejection, ...). waza (Go) answers each
broken rule with one generic sentence; here the sentence is kept and followed by what exactly is
wrong and where (``file:line:col``), and the command exits 2.
"""

from __future__ import annotations

import datetime
import math
import os
import posixpath
import re
import stat
from pathlib import Path
from typing import Any

import attrs

from waza_core.assure import jsonv1
from waza_core.errors import WazaError

REFERENCE_VERSION = "1.0"
REFERENCE_KIND = "waza.grader-reference"
REVIEW_KIND = "waza.grader-review"
AGREEMENT_PROTOCOL = "fixed_corpus_agreement_v1"
MAX_LABEL_BYTES = 1024 * 1024
MAX_REFERENCE_CASES = 1000
CLASSIFICATIONS = ("good", "alternative_valid", "critical_bad")
REVIEW_STATES = ("unreviewed", "submitted", "reviewed", "rejected", "revoked")

# The declared shape of each document: property -> type. A nested dict is an object of that
# shape, a one-item list a list of it; ``"str"``, ``"int"``, ``"num"``, ``"bool"`` scalars
# (null is the zero value, as Go decodes it).
_ORIGIN = {"eval_id": "str", "task_id": "str", "run_number": "int", "attempt_count": "int", "prior_attempts": "str"}
_EVIDENCE = {"origin": _ORIGIN, "artifact_id": "str", "pointer": "str"}
_CHECK = {"requirement_id": "str", "check": {"scope": "str", "grader": "str", "after_turn": "int"},
          "grader_declaration_sha256": "str", "rubric_content_sha256": "str", "expected_passed": "bool",
          "evidence": [_EVIDENCE]}
_CASE = {"id": "str", "scenario_id": "str", "domain": "str", "classification": "str", "task_id": "str",
         "task_declaration_sha256": "str", "snapshot": "str",
         "authored_input": {"path": "str", "document_sha256": "str"}, "manifest_sha256": "str",
         "checks": [_CHECK]}
REFERENCE_SHAPE = {"schema_version": "str", "kind": "str", "id": "str", "version": "str",
                   "eval_source_sha256": "str", "eval_resolved_config_sha256": "str",
                   "implementation_executable_sha256": "str",
                   "domains": [{"id": "str", "minimum_cases": "int", "minimum_agreement": "num"}],
                   "calibration": {"protocol": "str", "model": "str", "max_judge_executions": "int"},
                   "cases": [_CASE]}
REVIEW_SHAPE = {"schema_version": "str", "kind": "str", "source_id": "str", "subject_id": "str",
                "subject_version": "str", "labels_sha256": "str", "state": "str", "reviewer": "str",
                "reviewed_at": "str"}


class DocumentError(WazaError):
    """A label or review document that cannot be admitted (exit 2)."""


@attrs.frozen
class Located:
    """A parsed document and where its text came from, for ``file:line:col`` messages."""

    data: dict
    raw: bytes
    path: Path

    def error(self, where: tuple, message: str) -> DocumentError:
        # deferred: waza_core.suite adds ~7.1 ms to importing this module
        from waza_core.suite import yamlio

        spot = yamlio.locate(self.raw.decode("utf-8", "replace"), where) if where else None
        at = f"{self.path}:{spot[0]}:{spot[1]}" if spot else str(self.path)
        return DocumentError(f"{at}: {message}")


def read_bounded(path: str | Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; an ``OSError`` otherwise (a FIFO
    or a folder is refused before it is opened, so nothing blocks)."""

    if not stat.S_ISREG(os.stat(path).st_mode):
        raise IsADirectoryError(f"{path} is not a regular file")
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path} exceeds {limit} bytes")
    return data


def read_document(path: Path, what: str) -> bytes:
    """A local label, review or eval document of at most 1 MiB."""
    try:
        data = read_bounded(path, MAX_LABEL_BYTES)
    except IsADirectoryError:
        raise DocumentError(f"{path}: {what} must be a regular file") from None
    except OSError as exc:
        if exc.strerror is None:  # too large
            data = b""
        else:
            raise DocumentError(f"{path}: {what} is unreadable ({exc.strerror}); supply an existing local "
                                "document") from None
    if not data:
        raise DocumentError(f"{path}: {what}: empty or oversized input (at most {MAX_LABEL_BYTES} bytes)")
    return data


def _decode(raw: bytes, path: Path, shape: dict) -> Located:
    try:
        data = jsonv1.parse(raw)
    except jsonv1.JsonProblem as exc:
        raise DocumentError(f"{path}: reference document: ambiguous or malformed JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DocumentError(f"{path}: reference document: expected an object")
    doc = Located(data, raw, path)
    _check_shape(doc, data, shape, ())
    return doc


def _check_shape(doc: Located, value: Any, shape: Any, where: tuple) -> None:
    if value is None:
        return  # Go leaves the zero value
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise doc.error(where, f"reference document: unsupported fields or value types ({_dotted(where)} "
                                   "must be an object)")
        for key, child in value.items():
            if key not in shape:
                raise doc.error(where + (key,), f"reference document: unsupported property names "
                                                f"({_dotted(where + (key,))} is not a property)")
            _check_shape(doc, child, shape[key], where + (key,))
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise doc.error(where, f"reference document: unsupported fields or value types ({_dotted(where)} "
                                   "must be a list)")
        for i, item in enumerate(value):
            _check_shape(doc, item, shape[0], where + (i,))
    elif not _scalar_ok(value, shape):
        kind = {"str": "a string", "bool": "a boolean", "int": "an integer"}.get(shape, "a number")
        raise doc.error(where, f"reference document: unsupported fields or value types ({_dotted(where)} must "
                               f"be {kind})")


def _scalar_ok(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str) and not isinstance(value, jsonv1.Number)
    if kind == "bool":
        return isinstance(value, bool)
    if not isinstance(value, jsonv1.Number):
        return False
    if kind == "int":
        return re.fullmatch(r"-?\d+", value) is not None
    return True


def _dotted(where: tuple) -> str:
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the document"


# --- the label document -------------------------------------------------------------------


def _admit(path: Path, what: str, shape: dict, kind: str) -> Located:
    """A document of ``shape`` whose ``kind`` and ``schema_version`` are the expected ones."""
    doc = _decode(read_document(path, what), path, shape)
    if doc.data.get("schema_version") != REFERENCE_VERSION or doc.data.get("kind") != kind:
        raise doc.error(("kind",), f"{what}: unsupported document kind or version (want kind {kind!r}, "
                                   f"schema_version {REFERENCE_VERSION!r})")
    return doc


def parse_references(path: Path) -> Located:
    """The admitted label document (bytes kept: the review binds them)."""
    doc = _admit(path, "reference labels", REFERENCE_SHAPE, REFERENCE_KIND)
    _validate_references(doc)
    return doc


def _validate_references(doc: Located) -> None:
    d = doc.data
    for key in ("id", "version"):
        if not identifier(d.get(key)):
            raise doc.error((key,), f"reference labels: invalid subject or digest binding ({key} must be a "
                                    "non-empty identifier without padding or control characters)")
    for key in ("eval_source_sha256", "eval_resolved_config_sha256"):
        if not valid_sha256(d.get(key)):
            raise doc.error((key,), f"reference labels: invalid subject or digest binding ({key} must be 64 "
                                    "lower-case hex digits)")
    impl = d.get("implementation_executable_sha256")
    if impl is not None and not valid_sha256(impl):
        raise doc.error(("implementation_executable_sha256",), "reference labels: invalid subject or digest "
                        "binding (implementation_executable_sha256 must be null or 64 lower-case hex digits)")
    domains, cases = d.get("domains") or [], d.get("cases") or []
    if not 0 < len(domains) <= 100 or not 0 < len(cases) <= MAX_REFERENCE_CASES:
        raise doc.error(("cases",) if domains else ("domains",), "reference labels: invalid domain or case count "
                        f"(1 to 100 domains and 1 to {MAX_REFERENCE_CASES} cases)")
    seen_domains = _validate_domains(doc, domains)
    plan = d.get("calibration")
    if plan is not None:
        n = _int(plan.get("max_judge_executions"))
        if plan.get("protocol") != AGREEMENT_PROTOCOL or not identifier(plan.get("model")) or \
                not 1 <= n <= MAX_REFERENCE_CASES * 100:
            raise doc.error(("calibration",), "reference labels: unsupported calibration plan (protocol "
                                              f"{AGREEMENT_PROTOCOL!r}, a model, 1 to 100000 judge executions)")
    ids: set[str] = set()
    manifests: set[str] = set()
    for i, case in enumerate(cases):
        _validate_case(doc, i, case or {}, seen_domains, ids, manifests)


def _validate_domains(doc: Located, domains: list) -> set[str]:
    seen: set[str] = set()
    for i, domain in enumerate(domains):
        domain = domain or {}
        agreement = _num(domain.get("minimum_agreement"))
        if not identifier(domain.get("id")) or domain.get("id") in seen or \
                not 1 <= _int(domain.get("minimum_cases")) <= MAX_REFERENCE_CASES or \
                not math.isfinite(agreement) or not 0 < agreement <= 1:
            raise doc.error(("domains", i), "reference labels: invalid or duplicate domain criteria (a unique id, "
                                            f"minimum_cases 1 to {MAX_REFERENCE_CASES}, minimum_agreement in (0, 1])")
        seen.add(domain["id"])
    return seen


def _validate_case(doc: Located, i: int, case: dict, domains: set[str], ids: set[str], manifests: set[str]) -> None:
    at = ("cases", i)
    problem = None
    if not identifier(case.get("id")) or case.get("id") in ids:
        problem = "id missing, invalid or repeated"
    elif not identifier(case.get("scenario_id")):
        problem = "scenario_id missing or invalid"
    elif case.get("domain") not in domains:
        problem = f"domain {case.get('domain')!r} is not one of the declared domains"
    elif not identifier(case.get("task_id")):
        problem = "task_id missing or invalid"
    elif not valid_sha256(case.get("task_declaration_sha256")):
        problem = "task_declaration_sha256 must be 64 lower-case hex digits"
    elif not valid_sha256(case.get("manifest_sha256")) or case.get("manifest_sha256") in manifests:
        problem = "manifest_sha256 missing, invalid or repeated"
    elif not 0 < len(case.get("checks") or []) <= 100:
        problem = "1 to 100 checks"
    if problem:
        raise doc.error(at, f"reference labels: invalid or repeated case binding ({problem})")
    ids.add(case["id"])
    manifests.add(case["manifest_sha256"])
    if case.get("classification") not in CLASSIFICATIONS:
        raise doc.error(at + ("classification",), "reference labels: unsupported case classification (one of "
                                                  f"{', '.join(CLASSIFICATIONS)})")
    has_snapshot, authored = "snapshot" in case, case.get("authored_input")
    if has_snapshot == ("authored_input" in case) or (has_snapshot and not safe_path(case.get("snapshot"))) or \
            ("authored_input" in case and (authored is None or not safe_path(authored.get("path"))
                                           or not valid_sha256(authored.get("document_sha256")))):
        raise doc.error(at, "reference labels: exactly one valid historical or authored source is required "
                            "(snapshot, or authored_input {path, document_sha256}, with a relative path)")
    _validate_checks(doc, at, case)


def _validate_checks(doc: Located, at: tuple, case: dict) -> None:
    seen: set[tuple] = set()
    rejection = False
    origin = None
    for j, check in enumerate(case["checks"]):
        check = check or {}
        where = at + ("checks", j)
        scoped = check.get("check") or {}
        identity = (check.get("requirement_id"), scoped.get("scope"), scoped.get("grader"),
                    _int(scoped.get("after_turn")))
        rubric = check.get("rubric_content_sha256")
        evidence = check.get("evidence") or []
        if not identifier(check.get("requirement_id")) or not identifier(scoped.get("grader")) or identity in seen \
                or not valid_sha256(check.get("grader_declaration_sha256")) or \
                (rubric is not None and not valid_sha256(rubric)) or check.get("expected_passed") is None or \
                not 0 < len(evidence) <= 256:
            raise doc.error(where, "reference labels: invalid or duplicate check (requirement_id, check.grader, "
                                   "grader_declaration_sha256, expected_passed and 1 to 256 evidence references "
                                   "are required; a scoped check once per case)")
        seen.add(identity)
        scope = scoped.get("scope")
        if scope in ("eval", "task"):
            if "after_turn" in scoped:
                raise doc.error(where + ("check",), "reference labels: after_turn must be absent outside "
                                                    "checkpoint scope")
        elif scope == "checkpoint":
            if "after_turn" not in scoped or _int(scoped.get("after_turn")) < 1:
                raise doc.error(where + ("check",), "reference labels: checkpoint requires a positive after_turn")
        else:
            raise doc.error(where + ("check",), f"reference labels: unsupported check scope {scope!r} (eval, task "
                                                "or checkpoint)")
        if check["expected_passed"] is False:
            rejection = True
            if case["classification"] != "critical_bad":
                raise doc.error(where, "reference labels: valid cases cannot expect a rejected check")
        origin = _validate_evidence(doc, where, case, evidence, origin)
    if case["classification"] == "critical_bad" and not rejection:
        raise doc.error(at, "reference labels: critical bad case requires an intended rejection "
                            "(a check with expected_passed false)")


def _validate_evidence(doc: Located, where: tuple, case: dict, evidence: list, origin: Any) -> Any:
    refs: set[str] = set()
    for k, ref in enumerate(evidence):
        ref = ref or {}
        o = ref.get("origin") or {}
        key = jsonv1.canonical(ref).decode()
        if not complete_origin(o) or not identifier(o.get("eval_id")) or o.get("task_id") != case["task_id"] or \
                not identifier(ref.get("artifact_id")) or key in refs or not relative_pointer(ref.get("pointer", "")):
            raise doc.error(where + ("evidence", k), "reference labels: invalid or duplicate evidence reference "
                                                     "(a complete origin of the case's task, an artifact_id, a "
                                                     "pointer starting with /)")
        refs.add(key)
        canon = jsonv1.canonical(_origin_value(o))
        if origin is None:
            origin = canon
        elif origin != canon:
            raise doc.error(where + ("evidence", k), "reference labels: case references require one exact origin")
    return origin


def _origin_value(o: dict) -> dict:
    return {"eval_id": o.get("eval_id") or "", "task_id": o.get("task_id") or "",
            "run_number": _int(o.get("run_number")), "attempt_count": _int(o.get("attempt_count")),
            "prior_attempts": o.get("prior_attempts") or ""}


def origin_of(ref: dict) -> dict:
    """A reference's origin with Go's zero values filled in (for exact comparison)."""
    return _origin_value(ref.get("origin") or {})


# --- the review document -------------------------------------------------------------------


@attrs.frozen
class Review:
    """A supplied review declaration (never inferred from the labels)."""

    source_id: str
    subject_id: str
    subject_version: str
    labels_sha256: str
    state: str
    reviewer: str
    reviewed_at: datetime.datetime | None


def parse_review(path: Path) -> Review:
    doc = _admit(path, "reference review", REVIEW_SHAPE, REVIEW_KIND)
    d = doc.data
    for key in ("source_id", "subject_id", "subject_version"):
        if not identifier(d.get(key)):
            raise doc.error((key,), f"reference review: invalid identity ({key})")
    if not valid_sha256(d.get("labels_sha256")):
        raise doc.error(("labels_sha256",), "reference review: invalid label byte digest")
    when = None
    if d.get("reviewed_at"):
        when = _rfc3339(d["reviewed_at"])
        if when is None:
            raise doc.error(("reviewed_at",), "reference review: reviewed_at must be an RFC 3339 time")
    state = d.get("state")
    if state in ("reviewed", "rejected", "revoked"):
        if not identifier(d.get("reviewer")) or when is None:
            raise doc.error(("state",), "reference review: a decision requires reviewer and decision time")
    elif state not in ("unreviewed", "submitted"):
        raise doc.error(("state",), f"reference review: unsupported review state {state!r} (one of "
                                    f"{', '.join(REVIEW_STATES)})")
    return Review(source_id=d["source_id"], subject_id=d["subject_id"], subject_version=d["subject_version"],
                  labels_sha256=d["labels_sha256"], state=state, reviewer=d.get("reviewer") or "", reviewed_at=when)


def _rfc3339(text: str) -> datetime.datetime | None:
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text)
    if not m:
        return None
    frac = (m.group(3) or "")[:7].ljust(7, "0") if m.group(3) else ""
    zone = "+00:00" if m.group(4) in ("Z", "z") else m.group(4)
    try:
        return datetime.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{frac}{zone}")
    except ValueError:
        return None


# --- the small rules -------------------------------------------------------------------------


def identifier(value: Any) -> bool:
    """waza (Go) ``referenceIdentifier``: 1 to 256 characters, unpadded, no control character."""
    return isinstance(value, str) and not isinstance(value, jsonv1.Number) and 0 < len(value) <= 256 and \
        value == value.strip() and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


def valid_sha256(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def safe_path(value: Any) -> bool:
    """A relative, clean, slash-separated path inside the labels' folder."""
    if not identifier(value) or len(value) > 1024 or value.startswith("/") or "\\" in value or ":" in value:
        return False
    if posixpath.normpath(value) != value:
        return False
    return all(part not in ("", ".", "..") for part in value.split("/"))


def relative_pointer(value: Any) -> bool:
    """An empty or ``/``-rooted JSON pointer with valid ``~0``/``~1`` escapes."""
    if value == "":
        return True
    if not isinstance(value, str) or not value.startswith("/") or len(value) > 1024 or \
            any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return False
    return re.search(r"~(?![01])", value) is None


def complete_origin(o: dict) -> bool:
    return bool(o.get("eval_id")) and bool(o.get("task_id")) and _int(o.get("run_number")) > 0 and \
        _int(o.get("attempt_count")) > 0


def _int(v: Any) -> int:
    try:
        return int(str(v)) if v is not None else 0
    except ValueError:
        return 0


def _num(v: Any) -> float:
    try:
        return float(str(v)) if v is not None else 0.0
    except ValueError:
        return float("nan")
