#!/usr/bin/env python3
"""Reads the grading context file named by WAZA_GRADING_CONTEXT.

null means "no evidence recorded" (the mock executor records no command mocks, for
example); [] means "recorded, and empty". Treat the file as read-only: waza deletes
it, and its directory, after this program exits.
"""
import json
import os
import sys

with open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8") as f:
    ctx = json.load(f)

if ctx["version"] != 1:
    print(f"unknown context version {ctx['version']}", file=sys.stderr)
    sys.exit(1)
if ctx["output"] != sys.stdin.read():
    print("context output differs from stdin", file=sys.stderr)
    sys.exit(1)

notes = [f"{len(ctx['transcript'])} transcript event(s)", f"{len(ctx['tool_calls'])} tool call(s)"]
for key in ("tool_events", "command_invocations", "user_input_requests"):
    value = ctx[key]
    notes.append(f"{key}: " + ("not recorded" if value is None else f"{len(value)} recorded"))
print("; ".join(notes))
