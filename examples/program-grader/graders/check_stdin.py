#!/usr/bin/env python3
"""Passes when the agent's output (stdin, unchanged) answers the prompt."""
import sys

output = sys.stdin.read()
if not output.strip():
    print("the agent said nothing", file=sys.stderr)
    sys.exit(1)
if "traceback" in output.lower():
    print("the output contains a traceback", file=sys.stderr)
    sys.exit(1)
print(f"output has {len(output.splitlines())} line(s)")
