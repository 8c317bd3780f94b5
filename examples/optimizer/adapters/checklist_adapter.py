#!/usr/bin/env python3
"""A waza optimizer command adapter that completes a checklist. Standard library only.

waza starts this program once per call, writes one request document (JSON) to its
stdin and reads one response document from its stdout (contract 1.0; see
docs/optimizer-adapters.md). Anything written to stderr ends up in the report.

- ``describe``: offer the context-overlay and skill-directory targets and ask for
  per-task feedback (``feedback.task-results``), which holds the failed graders'
  messages.
- ``propose``: every optimization task that failed has text graders saying
  ``Missing expected substring: <phrase>``; add each missing phrase as a checklist
  item to the parent's checklist file, and return the complete file set. With nothing
  missing (or nothing it knows how to fix) it answers ``done``.

It makes no model calls, so it reports measured usage of 0 premium requests. Run it:

    waza optimize run examples/optimizer/eval.yaml --target context-overlay \\
      --seed examples/optimizer/seed --optimization-tag optimization \\
      --qualification-tag qualification --adapter command --adapter-command python3 \\
      --adapter-arg examples/optimizer/adapters/checklist_adapter.py \\
      --allow-paid-calls --output-dir optimize-command
"""

import json
import re
import sys

NAME, VERSION = "checklist-adapter", "1.0"
MISSING = re.compile(r"Missing expected substring(?: \(case-sensitive\))?: (.+?)(?=; (?:Missing|Found) |$)")


def describe(request):
    return {
        "kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "describe",
        "contract_versions": ["1.0"],
        "adapter": {"name": NAME, "version": VERSION},
        "required_capabilities": ["propose.files", "feedback.task-results"],
        "optional_capabilities": ["target.context-overlay", "target.skill-directory",
                                  "feedback.optimization-split", "usage.adapter-reported"],
        "paid_calls": False,
    }


def missing_phrases(feedback):
    """The phrases the failed text graders looked for and did not find, in task order."""
    found = []
    for task in feedback["evaluation"].get("tasks", []):
        if task["status"] != "failed":
            continue
        for grader in task["failed_graders"]:
            text = grader["message"]
            if grader["truncated"]:  # cut at 1000 bytes: its last phrase may be cut too, so skip it
                text = text.rsplit("; ", 1)[0] if "; " in text else ""
            for match in MISSING.finditer(text):
                phrase = match.group(1).strip()
                if phrase and phrase.lower() not in (p.lower() for p in found):
                    found.append(phrase)
    return found


def checklist_file(files):
    """The file to extend: checklist.md, else SKILL.md, else the first Markdown file."""
    paths = [f["path"] for f in files]
    for preferred in ("checklist.md", "SKILL.md"):
        if preferred in paths:
            return preferred
    markdown = [p for p in paths if p.endswith(".md")]
    return markdown[0] if markdown else paths[0]


def propose(request):
    files = [dict(f) for f in request["parent"]["files"]]
    path = checklist_file(files)
    entry = next(f for f in files if f["path"] == path)
    text = entry["content"]
    new_items = [p for p in missing_phrases(request["feedback"]) if p.lower() not in text.lower()]
    reply = {
        "kind": "waza.optimizer-adapter-response", "schema_version": "1.0", "operation": "propose",
        "contract_version": request["contract_version"],
        "parent_id": request["parent"]["candidate_id"],
        "usage": {"status": "measured", "premium_requests": 0},
    }
    if not new_items:
        reply["status"] = "done"
        return reply
    if text and not text.endswith("\n"):
        text += "\n"
    text += "".join(f"- {item[:1].upper()}{item[1:]}\n" for item in new_items)
    entry["content"] = text
    print(f"{NAME}: adding {len(new_items)} item(s) to {path}: {', '.join(new_items)}", file=sys.stderr)
    reply["status"] = "candidate"
    reply["files"] = files
    return reply


def main():
    request = json.load(sys.stdin)
    operation = request.get("operation")
    if operation == "describe":
        reply = describe(request)
    elif operation == "propose":
        reply = propose(request)
    else:
        print(f"{NAME}: unknown operation {operation!r}", file=sys.stderr)
        return 2
    json.dump(reply, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
