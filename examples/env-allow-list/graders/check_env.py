"""Passes when the allow-list did its job: no GITHUB_TOKEN, and DEMO_* present when set."""

import os
import sys

sys.stdin.read()
if "GITHUB_TOKEN" in os.environ:
    print("GITHUB_TOKEN reached the grader", file=sys.stderr)
    sys.exit(1)
shown = sorted(k for k in os.environ if k.startswith("DEMO_"))
print(f"sees {', '.join(shown) or 'no DEMO_ variable'}; no GITHUB_TOKEN")
