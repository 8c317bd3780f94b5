#!/usr/bin/env python3
"""Passes when the agent answered something, without a traceback (the answer is on stdin)."""
import sys

output = sys.stdin.read()
if not output.strip():
    print("the agent said nothing", file=sys.stderr)
    sys.exit(1)
if "traceback" in output.lower():
    print("the answer contains a traceback", file=sys.stderr)
    sys.exit(1)
print("ok")
