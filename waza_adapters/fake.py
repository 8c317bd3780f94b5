"""``--adapter fake``: a deterministic adapter that makes no provider calls.

It answers from a script (``--fake-script FILE``), so contract tests and the
walkthrough run offline and repeatably. Without a script it reports ``done`` at once.
Its replies go through the same strict parsing and validation as any adapter's.

Script format (strict JSON: no duplicate keys, NaN, trailing data or unknown keys)::

    {
      "version": 1,
      "describe": {                      # optional: overrides of the describe reply
        "contract_versions": ["1.0"], "required_capabilities": [...],
        "optional_capabilities": [...], "paid_calls": false, "name": "...", "version": "..."
      },                                 # or {"response": {...}} / {"raw": "..."}
      "proposals": [                     # the i-th propose call gets entry i
        {"files": [{"path": "a.md", "content": "..."}], "usage": {...}},
        {"done": true},
        {"response": {...}},             # sent as the reply verbatim (contract tests)
        {"raw": "not json"},             # sent as the reply bytes verbatim
        {"error": "message"}             # the call fails (optimizer_failure)
      ]
    }

Past the last entry the adapter reports ``done``. ``parent_id`` and
``contract_version`` of generated replies are copied from the request.
"""

from __future__ import annotations

import json
from typing import Any

from waza_core import AdapterFailure, AdapterReply, OptimizerAdapter, hookimpl

_STR_LIST = {"type": "array", "items": {"type": "string"}}
_USAGE = {"type": "object"}  # checked by the response schema when the reply is validated
SCRIPT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "proposals"],
    "properties": {
        "version": {"const": 1},
        "describe": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "contract_versions": _STR_LIST,
                "required_capabilities": _STR_LIST,
                "optional_capabilities": _STR_LIST,
                "paid_calls": {"type": "boolean"},
                "name": {"type": "string", "minLength": 1},
                "version": {"type": "string", "minLength": 1},
                "response": {"type": "object"},
                "raw": {"type": "string"},
            },
            "dependentSchemas": {"response": {"maxProperties": 1}, "raw": {"maxProperties": 1}},
        },
        "proposals": {
            "type": "array",
            "items": {
                "oneOf": [
                    {"type": "object", "additionalProperties": False, "required": ["files"],
                     "properties": {
                         "files": {"type": "array", "items": {
                             "type": "object", "additionalProperties": False, "required": ["path", "content"],
                             "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}},
                         "usage": _USAGE}},
                    {"type": "object", "additionalProperties": False, "required": ["done"],
                     "properties": {"done": {"const": True}, "usage": _USAGE}},
                    {"type": "object", "additionalProperties": False, "required": ["response"],
                     "properties": {"response": {"type": "object"}}},
                    {"type": "object", "additionalProperties": False, "required": ["raw"],
                     "properties": {"raw": {"type": "string"}}},
                    {"type": "object", "additionalProperties": False, "required": ["error"],
                     "properties": {"error": {"type": "string", "minLength": 1}}},
                ]
            },
        },
    },
}
DEFAULT_USAGE = {"status": "measured", "premium_requests": 0}


class FakeScriptError(ValueError):
    pass


def parse_script(data: bytes) -> dict[str, Any]:
    """Parse and check a fake script strictly; raise :class:`FakeScriptError`."""
    # deferred: jsonschema adds ~61.7 ms to importing this module
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    # deferred: waza_core adds ~1.0 ms to importing this module
    from waza_core import StrictJSONError
    from waza_core import strict_json_loads as strict_loads

    try:
        doc = strict_loads(data)
    except StrictJSONError as exc:
        raise FakeScriptError(str(exc)) from None
    err = best_match(Draft202012Validator(SCRIPT_SCHEMA).iter_errors(doc))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "document"
        raise FakeScriptError(f"{where}: {err.message}")
    return doc


class FakeAdapter(OptimizerAdapter):
    name = "fake"
    always_paid = False
    option_help = {"script": "Strict JSON file of proposals (--fake-script); without it the adapter reports done."}

    def __init__(self, options) -> None:
        super().__init__(options)
        self.script: dict[str, Any] | None = None
        self.calls = 0
        self._problems: list[str] | None = None

    def check_options(self) -> list[str]:
        if self._problems is None:
            self._problems = []
            path = self.options.get("script")
            flag = self.options.origin("script")
            if path is not None:
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError as exc:
                    self._problems.append(f"{flag} {path}: cannot read: {exc.strerror}")
                    return self._problems
                try:
                    self.script = parse_script(data)
                except FakeScriptError as exc:
                    self._problems.append(f"{flag} {path}: {exc}")
        return self._problems

    def call(self, request, *, timeout, cancel) -> AdapterReply:
        if self.check_options():
            raise AdapterFailure("; ".join(self._problems))
        if request["operation"] == "describe":
            return self._describe(request)
        return self._propose(request)

    def _describe(self, request) -> AdapterReply:
        # deferred: waza_core adds ~1.0 ms to importing this module
        from waza_core import ADAPTER_RESPONSE_KIND as RESPONSE_KIND
        from waza_core import HARNESS_CAPABILITIES, __version__

        over = (self.script or {}).get("describe") or {}
        if "raw" in over:
            return AdapterReply(raw=over["raw"].encode("utf-8"))
        if "response" in over:
            return AdapterReply(raw=_dump(over["response"]))
        doc = {
            "kind": RESPONSE_KIND, "schema_version": "1.0", "operation": "describe",
            "contract_versions": over.get("contract_versions", ["1.0"]),
            "adapter": {"name": over.get("name", "fake"), "version": over.get("version", __version__)},
            "required_capabilities": over.get("required_capabilities", ["propose.files"]),
            "optional_capabilities": over.get("optional_capabilities",
                                              [c for c in HARNESS_CAPABILITIES if c != "propose.files"]),
            "paid_calls": over.get("paid_calls", False),
        }
        return AdapterReply(raw=_dump(doc))

    def _propose(self, request) -> AdapterReply:
        # deferred: waza_core adds ~1.0 ms to importing this module
        from waza_core import ADAPTER_RESPONSE_KIND as RESPONSE_KIND

        entries = (self.script or {}).get("proposals") or []
        entry = entries[self.calls] if self.calls < len(entries) else {"done": True}
        self.calls += 1
        if "error" in entry:
            raise AdapterFailure(f"scripted failure: {entry['error']}")
        if "raw" in entry:
            return AdapterReply(raw=entry["raw"].encode("utf-8"))
        if "response" in entry:
            return AdapterReply(raw=_dump(entry["response"]))
        doc = {"kind": RESPONSE_KIND, "schema_version": "1.0", "operation": "propose",
               "contract_version": request["contract_version"],
               "status": "done" if entry.get("done") else "candidate",
               "parent_id": request["parent"]["candidate_id"]}
        if not entry.get("done"):
            doc["files"] = entry["files"]
        doc["usage"] = entry.get("usage", DEFAULT_USAGE)
        return AdapterReply(raw=_dump(doc))


def _dump(doc: Any) -> bytes:
    return json.dumps(doc).encode("ascii")  # escapes survive, so the core sees what a command adapter would send


@hookimpl
def waza_register_optimizer_adapters(register):
    register(FakeAdapter)
