#!/usr/bin/env python3
"""Passes when the run called the inventory server's list_items tool (WAZA_GRADING_CONTEXT)."""
import json
import os
import sys

with open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8") as f:
    calls = json.load(f).get("mcp_invocations")

if calls is None:
    print("no MCP mock evidence recorded", file=sys.stderr)
    sys.exit(1)
used = [c for c in calls if c["server"] == "inventory" and c["tool"] == "list_items"]
if not used:
    print(f"expected a list_items call, got {calls}", file=sys.stderr)
    sys.exit(1)
print(f"{len(calls)} MCP call(s); list_items for {used[0]['arguments'].get('owner')}")
