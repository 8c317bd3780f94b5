#!/usr/bin/env python3
"""Passes when the run recorded an unmatched `az` call: exit 127, response_index -1."""
import json
import os
import sys

with open(os.environ["WAZA_GRADING_CONTEXT"], encoding="utf-8") as f:
    calls = json.load(f)["command_invocations"] or []

missed = [c for c in calls if c["response_index"] == -1]
if not missed or any(c["exit_code"] != 127 for c in missed):
    print(f"expected an unmatched call that exited 127, got {calls}", file=sys.stderr)
    sys.exit(1)
print(f"unmatched: az {' '.join(missed[0].get('args', []))}")
