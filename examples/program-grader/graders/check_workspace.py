#!/usr/bin/env python3
"""Passes when every file named on the command line exists in the run's workspace."""
import os
import sys

workspace = os.environ.get("WAZA_WORKSPACE_DIR", "")
missing = [name for name in sys.argv[1:] if not os.path.isfile(os.path.join(workspace, name))]
if missing:
    print(f"not found in the workspace: {', '.join(missing)}", file=sys.stderr)
    sys.exit(1)
print(f"found {', '.join(sys.argv[1:])}")
