"""Contract 1.0 between the harness and optimizer adapters: constants, strict parsing,
validation and negotiation.

Every reply of every adapter goes through :func:`parse_reply`, so ``fake`` and
``copilot-reflect`` are held to exactly what a ``command`` adapter must send. All
field names of the contract live in the four schemas and in this module, so they can
be swapped in one place if upstream publishes different ones.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs

from waza_core._version import __version__
from waza_core.optimize.failures import OptimizeFailure

CONTRACT_VERSIONS = ("1.0",)
SCHEMA_VERSION = "1.0"
REQUEST_KIND = "waza.optimizer-adapter-request"
RESPONSE_KIND = "waza.optimizer-adapter-response"
TARGETS = ("context-overlay", "skill-directory")

#: everything this harness can offer; sorted, as ``waza optimize capabilities`` prints it
HARNESS_CAPABILITIES = (
    "budget.deadline",
    "budget.evaluations",
    "budget.iterations",
    "feedback.optimization-split",
    "feedback.task-results",
    "propose.files",
    "target.context-overlay",
    "target.skill-directory",
    "usage.adapter-reported",
)

ADAPTER_STDOUT_LIMIT = 8 * 1024 * 1024
FEEDBACK_MESSAGE_BYTES = 1000
RESERVED_QUALIFICATION_EVALUATIONS = 2

CAPABILITIES_SCHEMA = "optimizer-capabilities-1.0"
REQUEST_SCHEMA = "optimizer-adapter-request-1.0"
RESPONSE_SCHEMA = "optimizer-adapter-response-1.0"
REPORT_SCHEMA = "optimizer-report-1.0"


class StrictJSONError(ValueError):
    """The bytes are not exactly one JSON document under the strict rules."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"number {text} is out of range")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constants,
                            parse_float=_finite_float)


def strict_loads(data: bytes | str) -> Any:
    """One JSON document: UTF-8, no duplicate keys, no NaN/Infinity, nothing but
    whitespace after it. Python's ``json`` accepts all of those; the contract does not."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not UTF-8 (byte {exc.start})") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise StrictJSONError("starts with a byte-order mark")
    try:
        doc, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip(" \t\r\n")))
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise StrictJSONError("invalid JSON: nested too deeply") from None
    if text[end:].strip(" \t\r\n"):
        raise StrictJSONError(f"trailing data after the JSON document at offset {end}")
    return doc


def _first_error(schema_name: str, doc: Any) -> str | None:
    # deferred: jsonschema.exceptions adds ~142.8 ms to importing this module
    from jsonschema.exceptions import best_match

    # deferred: waza_core.suite adds ~20.1 ms to importing this module
    from waza_core.suite import schema as schemas

    err = best_match(schemas.plain_validator(schema_name).iter_errors(doc))
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "document"
    return f"{where}: {err.message}"


def validate_request(doc: dict[str, Any]) -> None:
    """Requests are built by the harness; one failing the schema is a harness bug,
    reported as ``infrastructure_failure`` instead of being sent."""
    problem = _first_error(REQUEST_SCHEMA, doc)
    if problem:
        raise OptimizeFailure("infrastructure_failure", f"internal error: request violates {REQUEST_SCHEMA}: {problem}")


def validate_report(doc: dict[str, Any]) -> str | None:
    return _first_error(REPORT_SCHEMA, doc)


def parse_reply(raw: bytes, operation: str, versions: tuple[str, ...]) -> dict[str, Any]:
    """Decode and check one adapter reply for ``operation``.

    Order: strict JSON (``malformed_proposal``), then the contract version
    (``unsupported_version``: a newer adapter should be told so, not that its fields are
    unknown), then the schema for the operation (``malformed_proposal``).
    """
    if len(raw) > ADAPTER_STDOUT_LIMIT:
        raise OptimizeFailure("optimizer_failure", f"adapter reply exceeds the {ADAPTER_STDOUT_LIMIT}-byte limit")
    try:
        doc = strict_loads(raw)
    except StrictJSONError as exc:
        raise OptimizeFailure("malformed_proposal", f"{operation} reply: {exc}") from None
    if not isinstance(doc, dict):
        raise OptimizeFailure("malformed_proposal", f"{operation} reply: expected a JSON object")
    if doc.get("operation") != operation:
        raise OptimizeFailure("malformed_proposal",
                              f"{operation} reply: operation is {doc.get('operation')!r}, expected {operation!r}")
    if operation == "describe":
        offered = doc.get("contract_versions")
        if isinstance(offered, list) and offered and all(isinstance(v, str) for v in offered) \
                and not set(offered) & set(versions):
            raise OptimizeFailure("unsupported_version",
                                  f"adapter supports contract versions {', '.join(offered)}; "
                                  f"this waza supports {', '.join(versions)}")
    else:
        version = doc.get("contract_version")
        if isinstance(version, str) and version not in versions:
            raise OptimizeFailure("unsupported_version",
                                  f"propose reply uses contract version {version!r}; negotiated {versions[0]!r}")
    problem = _first_error(RESPONSE_SCHEMA, doc)
    if problem:
        raise OptimizeFailure("malformed_proposal", f"{operation} reply violates {RESPONSE_SCHEMA}: {problem}")
    return doc


@attrs.frozen
class Negotiation:
    contract_version: str
    adapter_name: str
    adapter_version: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    selected: tuple[str, ...]
    unavailable: tuple[str, ...]
    paid_calls: bool

    def has(self, capability: str) -> bool:
        return capability in self.selected


def negotiate(reply: dict[str, Any], target: str) -> Negotiation:
    """Apply the seed's negotiation rules to a validated describe reply."""
    shared = [v for v in CONTRACT_VERSIONS if v in reply["contract_versions"]]
    if not shared:  # parse_reply already checks; kept so negotiate() stands alone
        raise OptimizeFailure("unsupported_version", "no shared contract version")
    required = tuple(reply["required_capabilities"])
    optional = tuple(reply["optional_capabilities"])
    both = sorted(set(required) & set(optional))
    if both:
        raise OptimizeFailure("incompatible_capability",
                              f"capabilities listed as both required and optional: {', '.join(both)}")
    unknown = sorted(set(required) - set(HARNESS_CAPABILITIES))
    if unknown:
        raise OptimizeFailure("incompatible_capability",
                              f"adapter requires capabilities this waza does not have: {', '.join(unknown)}")
    wanted = f"target.{target}"
    other = f"target.{'skill-directory' if target == 'context-overlay' else 'context-overlay'}"
    if other in required:
        raise OptimizeFailure("incompatible_capability", f"adapter requires {other}, but the target is {target}")
    if wanted not in required and wanted not in optional:
        raise OptimizeFailure("incompatible_capability", f"adapter does not offer {wanted}")
    if "propose.files" not in required and "propose.files" not in optional:
        raise OptimizeFailure("incompatible_capability",
                              "adapter does not offer propose.files, the only proposal mode of contract 1.0")
    offered = set(required) | set(optional)
    selected = tuple(sorted((offered & set(HARNESS_CAPABILITIES)) - {other}))
    unavailable = tuple(sorted(set(optional) - set(HARNESS_CAPABILITIES)))
    return Negotiation(
        contract_version=max(shared, key=lambda v: tuple(int(p) for p in v.split("."))),
        adapter_name=reply["adapter"]["name"], adapter_version=reply["adapter"]["version"],
        required=required, optional=optional, selected=selected, unavailable=unavailable,
        paid_calls=bool(reply["paid_calls"]),
    )


def capabilities_document(adapters: list[str]) -> dict[str, Any]:
    """What ``waza optimize capabilities`` prints (``optimizer-capabilities-1.0``)."""

    return {
        "kind": "waza.optimizer-capabilities",
        "schema_version": SCHEMA_VERSION,
        "waza_version": __version__,
        "contract_versions": list(CONTRACT_VERSIONS),
        "capabilities": list(HARNESS_CAPABILITIES),
        "targets": list(TARGETS),
        "adapters": sorted(adapters),
        "limits": {
            "adapter_stdout_bytes": ADAPTER_STDOUT_LIMIT,
            "feedback_message_bytes": FEEDBACK_MESSAGE_BYTES,
            "reserved_qualification_evaluations": RESERVED_QUALIFICATION_EVALUATIONS,
        },
    }


def describe_request(target: str) -> dict[str, Any]:

    return {
        "kind": REQUEST_KIND, "schema_version": SCHEMA_VERSION, "operation": "describe",
        "contract_versions": list(CONTRACT_VERSIONS), "capabilities": list(HARNESS_CAPABILITIES),
        "target": target, "waza_version": __version__,
    }
