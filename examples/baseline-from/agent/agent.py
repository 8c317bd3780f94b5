"""A toy agent: it follows the release-notes skill when waza gives it the skill folder."""

import os
import sys

prompt = sys.argv[1]
skills = [d for d in os.environ.get("WAZA_SKILL_DIRECTORIES", "").split(os.pathsep) if d]
if any(os.path.exists(os.path.join(d, "release-notes", "SKILL.md")) for d in skills):
    print(f"## Highlights\n- {prompt}")
else:
    print(f"Notes: {prompt}")
