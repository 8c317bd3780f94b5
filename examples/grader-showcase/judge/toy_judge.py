#!/usr/bin/env python3
"""A toy LLM judge for the `prompt` grader: a `cli` judge program that answers with
verdict lines, so the showcase runs offline and free.

It reads the judge prompt (``--prompt-file``) that waza builds and applies one rule: every
line of the criteria of the form ``must mention: <word>`` is a check, passed when the
candidate output contains the word (case-insensitive). A real judge is a model behind the
same protocol: one JSON object per line, ``{"waza_grade": "pass"|"fail", "description",
"reason"}``.
"""

import argparse
import json
import re
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-file", required=True)
    args = ap.parse_args()
    with open(args.prompt_file, encoding="utf-8") as fh:
        prompt = fh.read()
    m = re.search(r"===== BEGIN CANDIDATE OUTPUT =====\n(.*?)\n===== END CANDIDATE OUTPUT =====", prompt, re.S)
    output = (m.group(1) if m else "").lower()
    words = re.findall(r"(?im)^\s*-?\s*must mention:\s*(\S.*)$", prompt)
    print("I compared the candidate output with the criteria.")
    for word in words:
        found = word.strip().lower() in output
        print(json.dumps({"waza_grade": "pass" if found else "fail", "description": f"mentions {word.strip()}",
                          "reason": "found in the output" if found else "not in the output"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
