"""A toy command-line agent for the triage example: offline, free, deterministic.

It answers from its prompt, with one deliberate flaw per task of the example:
- a prompt with "CRASH" makes it die before answering (exit 3): the harness's problem;
- "as JSON" makes it print a JSON object;
- "2 + 2" makes it answer 5 (its own mistake);
- anything else gets a polite one-line answer.
"""

import json
import sys

prompt = sys.argv[1] if len(sys.argv) > 1 else ""
if "CRASH" in prompt:
    sys.stderr.write("toy-agent: lost the connection to its model before answering\n")
    sys.exit(3)
if "as JSON" in prompt:
    print(json.dumps({"status": "ok", "items": 3}))
elif "2 + 2" in prompt:
    print("2 + 2 = 5")
else:
    print(f"Done: {prompt}")
