"""``--adapter append-lines``: an optimizer adapter that appends lines to a file.

Its first proposal is the parent's files with each ``--adapter-option line=TEXT``
appended to one file (``--adapter-option file=PATH``, default: the first file); then
it says it is done. No model, no cost.
"""

import json

from waza_core import (
    ADAPTER_RESPONSE_KIND,
    HARNESS_CAPABILITIES,
    AdapterFailure,
    AdapterReply,
    OptimizerAdapter,
    __version__,
    hookimpl,
)


class AppendLinesAdapter(OptimizerAdapter):
    name = "append-lines"
    always_paid = False
    option_help = {
        "line": "A line to append (repeatable, in order).",
        "file": "The candidate file to extend (default: the first one).",
    }
    repeatable_options = frozenset({"line"})

    def check_options(self):
        return [] if self.options.get_all("line") else ["--adapter append-lines needs --adapter-option line=TEXT"]

    def call(self, request, *, timeout, cancel):
        if cancel.is_set():
            raise AdapterFailure("cancelled before the call")
        if request["operation"] == "describe":
            return self._reply({
                "operation": "describe", "contract_versions": ["1.0"],
                "adapter": {"name": self.name, "version": __version__},
                "required_capabilities": ["propose.files"],
                "optional_capabilities": [c for c in HARNESS_CAPABILITIES if c != "propose.files"],
                "paid_calls": False,
            })
        reply = {"operation": "propose", "contract_version": request["contract_version"],
                 "parent_id": request["parent"]["candidate_id"],
                 "usage": {"status": "measured", "premium_requests": 0}}
        if request["iteration"] > 1:
            return self._reply({**reply, "status": "done"})
        files = [dict(f) for f in request["parent"]["files"]]
        path = self.options.get("file", files[0]["path"])
        target = next((f for f in files if f["path"] == path), None)
        if target is None:
            raise AdapterFailure(f"the candidate has no file {path!r}")
        text = target["content"]
        target["content"] = text + ("" if text.endswith("\n") or not text else "\n") + \
            "".join(line + "\n" for line in self.options.get_all("line"))
        return self._reply({**reply, "status": "candidate", "files": files})

    @staticmethod
    def _reply(doc):
        # the core parses and validates these bytes, as it would a command adapter's stdout
        return AdapterReply(raw=json.dumps({"kind": ADAPTER_RESPONSE_KIND, "schema_version": "1.0", **doc}).encode())


@hookimpl
def waza_register_optimizer_adapters(register):
    register(AppendLinesAdapter)
