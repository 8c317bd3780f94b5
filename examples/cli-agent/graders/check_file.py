#!/usr/bin/env python3
"""Passes when the agent left FILE with exactly TEXT in its workspace.

Usage: check_file.py FILE TEXT   (waza sets WAZA_WORKSPACE_DIR to the run's workspace)
"""
import os
import sys

path = os.path.join(os.environ["WAZA_WORKSPACE_DIR"], sys.argv[1])
if not os.path.isfile(path):
    print(f"{sys.argv[1]} was not created", file=sys.stderr)
    sys.exit(1)
with open(path, encoding="utf-8") as fh:
    content = fh.read()
if content.strip() != sys.argv[2]:
    print(f"{sys.argv[1]} holds {content!r}, expected {sys.argv[2]!r}", file=sys.stderr)
    sys.exit(1)
print(f"{sys.argv[1]} is right")
