#!/usr/bin/env python3
"""A toy agent for examples/command-mocks: it runs `az` like an agent's shell tool would.

It looks for `az` on PATH (where waza put the mock shims first) and answers from what
the command printed. Real agents (Claude Code, Codex, Copilot) do the same through
their shell tools.
"""

import json
import subprocess
import sys

prompt = sys.argv[1].lower()
lines = []
if "account" in prompt:
    shown = subprocess.run(["az", "account", "show"], capture_output=True, text=True)
    if shown.returncode == 0:
        lines.append(f"You are signed in as {json.loads(shown.stdout)['user']['name']}.")
    else:
        lines.append(f"az account show failed: {shown.stderr.strip()}")
if "delete" in prompt:
    done = subprocess.run(["az", "group", "delete", "--name", "rg-web", "--yes"], capture_output=True, text=True)
    lines.append(f"az group delete: exit {done.returncode}")
print("\n".join(lines) or "Hello! I did not need the Azure CLI for that.")
