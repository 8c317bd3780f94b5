"""Authored reference inputs: ``waza.grader-reference-input`` envelopes (schemaVersion 2.0).

An authored input is finite output text a person wrote for a reference case (not a recorded
run). waza (Go) ``internal/assurance/authored_output.go`` and ``internal/evidence`` define it:

    {"schemaVersion": "2.0", "kind": "waza.grader-reference-input",
     "payload": {"kind": "waza.grader-reference-input", "schema_version": "1.0",
                 "source_scope": "authored_finite_output", "id": CASE_ID, "output": TEXT or null},
     "evidence": MANIFEST}

The manifest (version ``1.1``) has one artifact ``authored-output`` whose ``content_digest`` is
the ``json-v1`` digest of the payload, an origin ``reference:<labels id>`` / task / ordinal, and
its own ``sha256`` over the rest of it. :func:`new_input` writes one exactly as waza (Go)'s
``NewAuthoredOutput`` does, and :func:`parse_input` admits one from either implementation.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from waza_core.assure import jsonv1

KIND = "waza.grader-reference-input"
PAYLOAD_VERSION = "1.0"
ENVELOPE_VERSION = "2.0"
SCOPE = "authored_finite_output"
MANIFEST_VERSION = "1.1"
DOCUMENT = "supplied-finite-input"
ARTIFACT_ID = "authored-output"
ARTIFACT_KIND = "grader_reference_input"
MAX_BYTES = 1 << 20
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: the runtime block of a reference input: nothing about an execution is claimed
_RUNTIME = {"waza_version": "", "requested_engine": "", "requested_model": "", "execution_mode": "unknown",
            "dependency_mode": "", "requested_policy": "", "verified_enforcement": "", "go_version": "",
            "platform": "", "sdk_version": None, "effective_model_version": None, "no_skills": None,
            "native_skill_control": "unknown"}


class InputProblem(ValueError):
    """The envelope is not an admissible authored input."""


def safe_id(value: Any) -> bool:
    return isinstance(value, str) and _SAFE_ID.fullmatch(value) is not None


@attrs.frozen
class AuthoredInput:
    """An admitted envelope."""

    case_id: str
    output: str | None
    manifest: dict
    #: the payload object (what the content digest covers)
    payload: dict


def new_input(subject_id: str, case_id: str, task_id: str, ordinal: int, output: str | None) -> bytes:
    """The envelope bytes for ``output`` (None: explicitly unavailable), sealed as waza (Go) seals it."""
    if not (safe_id(subject_id) and safe_id(case_id) and safe_id(task_id)) or ordinal < 1:
        raise InputProblem("authored output requires safe subject, case and task identifiers and a positive ordinal")
    if output is not None and len(output.encode("utf-8")) > MAX_BYTES:
        raise InputProblem("authored output must be bounded UTF-8 text")
    payload = {"kind": KIND, "schema_version": PAYLOAD_VERSION, "source_scope": SCOPE, "id": case_id,
               "output": output}
    artifact: dict[str, Any] = {"id": ARTIFACT_ID, "kind": ARTIFACT_KIND, "availability": "unavailable",
                                "completeness": "unknown", "reason": "Authored output was explicitly unavailable."}
    if output is not None:
        artifact = {"id": ARTIFACT_ID, "kind": ARTIFACT_KIND, "availability": "captured", "completeness": "complete",
                    "document": DOCUMENT, "pointer": "/payload",
                    "content_digest": {"sha256": jsonv1.digest(payload), "encoding": "json-v1"}}
    manifest = {"version": MANIFEST_VERSION, "sha256": "",
                "origin": {"eval_id": f"reference:{subject_id}", "task_id": task_id, "run_number": ordinal,
                           "attempt_count": 1, "prior_attempts": "none"},
                "runtime": dict(_RUNTIME), "redaction": {"policy": "none", "match_count": 0, "limitations": None},
                "artifacts": [artifact]}
    manifest["sha256"] = manifest_digest(manifest)
    envelope = {"schemaVersion": ENVELOPE_VERSION, "kind": KIND, "payload": payload, "evidence": manifest}
    data = json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    parse_input(data)  # what is written must be admitted
    return data


def manifest_digest(manifest: dict) -> str:
    """The manifest's identity: the json-v1 digest of everything but its ``sha256``."""
    return jsonv1.digest({k: v for k, v in manifest.items() if k != "sha256"})


def parse_input(data: bytes) -> AuthoredInput:
    """Admit an envelope, or raise :class:`InputProblem` saying why."""
    if not data or len(data) > MAX_BYTES:
        raise InputProblem("authored envelope must be nonempty and at most 1 MiB")
    try:
        value = jsonv1.parse(data)
    except jsonv1.JsonProblem as exc:
        raise InputProblem(f"authored envelope: {exc}") from None
    if _has_surrogate(value):
        raise InputProblem("unpaired Unicode surrogate")  # json would keep it; the text must be what was sealed
    if not isinstance(value, dict) or set(value) != {"schemaVersion", "kind", "payload", "evidence"}:
        raise InputProblem("authored envelope requires only schemaVersion, kind, payload and evidence")
    if value["schemaVersion"] != ENVELOPE_VERSION:
        raise InputProblem("authored envelope requires schemaVersion 2.0")
    if value["kind"] != KIND:
        raise InputProblem(f"authored envelope requires kind {KIND}")
    payload = value["payload"]
    if not isinstance(payload, dict) or set(payload) != {"kind", "schema_version", "source_scope", "id", "output"}:
        raise InputProblem("authored payload requires explicit metadata and output")
    if payload["kind"] != KIND or payload["schema_version"] != PAYLOAD_VERSION or payload["source_scope"] != SCOPE \
            or not safe_id(payload["id"]) or not (payload["output"] is None or _text(payload["output"])):
        raise InputProblem("unsupported authored payload metadata or case identity")
    manifest = value["evidence"]
    problem = manifest_problem(manifest)
    if problem:
        raise InputProblem(problem)
    artifact = manifest["artifacts"][0]
    if payload["output"] is None:
        if artifact["availability"] != "unavailable":
            raise InputProblem("null authored output must be unavailable")
    elif content_problem(manifest, payload):
        raise InputProblem(content_problem(manifest, payload))
    return AuthoredInput(case_id=payload["id"], output=payload["output"], manifest=manifest, payload=payload)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value)


def _text(v: Any) -> bool:
    return isinstance(v, str) and not isinstance(v, jsonv1.Number)


def manifest_problem(manifest: Any) -> str | None:
    """Why ``manifest`` is not a sealed reference-input manifest (version 1.1), or None."""
    allowed = {"version", "sha256", "source_manifest_sha256", "origin", "runtime", "redaction", "artifacts",
               "diagnostics"}
    if not isinstance(manifest, dict) or manifest.get("version") != MANIFEST_VERSION or not set(manifest) <= allowed:
        return "evidence: unsupported or absent manifest version"
    if manifest_digest(manifest) != manifest.get("sha256"):
        return "evidence: manifest identity does not match its content"
    o = manifest.get("origin")
    if not isinstance(o, dict) or not str(o.get("eval_id", "")).startswith("reference:") or \
            not safe_id(str(o["eval_id"])[len("reference:"):]) or not safe_id(o.get("task_id")) or \
            _int(o.get("run_number")) < 1 or _int(o.get("attempt_count")) != 1 or o.get("prior_attempts") != "none":
        return "evidence: invalid authored input origin"
    redaction = manifest.get("redaction") or {}
    if _runtime(manifest.get("runtime")) != _RUNTIME or manifest.get("source_manifest_sha256") or \
            manifest.get("diagnostics") or redaction.get("policy") != "none" or _int(redaction.get("match_count")) \
            or redaction.get("applied_rules") or redaction.get("limitations"):
        return "evidence: authored input cannot claim runtime history or redaction"
    artifacts = manifest.get("artifacts")
    if not isinstance(artifacts, list) or len(artifacts) != 1 or not isinstance(artifacts[0], dict):
        return "evidence: authored input requires exactly one output artifact"
    a = artifacts[0]
    if a.get("id") != ARTIFACT_ID or a.get("kind") != ARTIFACT_KIND or a.get("source_digest") or a.get("redacted"):
        return "evidence: invalid authored output artifact"
    digest = a.get("content_digest")
    if a.get("availability") == "captured":
        if a.get("document") != DOCUMENT or a.get("pointer") != "/payload" or a.get("completeness") != "complete" \
                or a.get("reason") or not isinstance(digest, dict) or digest.get("encoding") != "json-v1" or \
                re.fullmatch(r"[0-9a-f]{64}", str(digest.get("sha256"))) is None:
            return "evidence: authored output requires a complete raw payload JSON digest and locator"
    elif a.get("availability") == "unavailable":
        if a.get("document") or a.get("pointer") or digest is not None or a.get("completeness") != "unknown" or \
                not a.get("reason"):
            return "evidence: unavailable authored output cannot claim content or a locator"
    else:
        return "evidence: unsupported authored output availability"
    return None


def _runtime(runtime: Any) -> dict:
    """The runtime block when it has exactly the declared keys (waza (Go)'s schema requires each)."""
    return runtime if isinstance(runtime, dict) and set(runtime) == set(_RUNTIME) else {}


def content_problem(manifest: dict, payload: dict, origin: dict | None = None) -> str | None:
    """waza (Go) ``evidence.VerifyContent`` for the authored artifact: the payload's json-v1
    digest is the one sealed, and (for a label's reference) the origin is the manifest's."""
    if origin is not None and jsonv1.canonical(origin) != jsonv1.canonical(_origin(manifest)):
        return "evidence: reference belongs to a different eval/task/run/attempt"
    a = manifest["artifacts"][0]
    if a.get("availability") != "captured" or not a.get("content_digest"):
        return "evidence: required content was not preserved"
    if a.get("completeness") != "complete":
        return "evidence: required content is incomplete or unassessed"
    if jsonv1.digest(payload) != a["content_digest"]["sha256"]:
        return "evidence: preserved content digest mismatch"
    if "output" not in payload:
        return "evidence: referenced JSON value is absent"
    return None


def _origin(manifest: dict) -> dict:
    o = manifest.get("origin") or {}
    return {"eval_id": o.get("eval_id") or "", "task_id": o.get("task_id") or "",
            "run_number": _int(o.get("run_number")), "attempt_count": _int(o.get("attempt_count")),
            "prior_attempts": o.get("prior_attempts") or ""}


def _int(v: Any) -> int:
    try:
        return int(str(v)) if v is not None else 0
    except ValueError:
        return 0
