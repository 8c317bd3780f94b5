#!/usr/bin/env python3
import json
import os
import sys

with open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8") as f:
    ctx = json.load(f)

calls = ctx["command_invocations"]
if calls is None:
    print("no command invocation evidence recorded", file=sys.stderr)
    sys.exit(1)

if not any(c["command"] == "az" and c.get("args", [])[:2] == ["account", "show"] for c in calls):
    print("expected 'az account show'", file=sys.stderr)
    sys.exit(1)

print(f"{len(calls)} mocked command call(s) checked")
