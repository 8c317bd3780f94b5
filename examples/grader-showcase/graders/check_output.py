#!/usr/bin/env python3
"""A program grader: the answer (stdin) must be one JSON object with a "total" above 0."""

import json
import sys

try:
    answer = json.loads(sys.stdin.read())
except ValueError as exc:
    print(f"the answer is not JSON: {exc}", file=sys.stderr)
    sys.exit(1)
if not isinstance(answer, dict) or not isinstance(answer.get("total"), (int, float)) or answer["total"] <= 0:
    print("the answer has no positive total", file=sys.stderr)
    sys.exit(1)
print(f"total is {answer['total']}")
