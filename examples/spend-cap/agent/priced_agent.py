"""A toy command-line agent that reports what each answer cost, as a paid agent does
(Claude Code's JSON output carries total_cost_usd; here it is a fixed 0.25 USD)."""

import json
import sys

prompt = sys.argv[1] if len(sys.argv) > 1 else ""
usage = {"input_tokens": 1200, "output_tokens": 300, "total_cost_usd": 0.25}
print(json.dumps({"result": f"Answer to: {prompt}", "usage": usage}))
