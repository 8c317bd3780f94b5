#!/usr/bin/env python3
"""A toy command-line "agent" for the cli executor example: offline, free, deterministic.

It understands two kinds of prompt:
  "Create a file named PATH containing: TEXT"  -> writes PATH (in its working directory)
  "What is A + B?"                             -> answers the sum
and prints one JSON object, the shape many real agents use:
  {"result": "<answer>", "session_id": "...", "usage": {"input_tokens": N, "output_tokens": M}}
"""

import argparse
import hashlib
import json
import os
import re
import sys


def answer(prompt: str) -> str:
    made = re.match(r"Create a file named (\S+) containing: (.*)", prompt.strip(), re.S)
    if made:
        path, text = made.groups()
        if os.path.isabs(path) or ".." in path.split("/"):
            return f"I will not write outside my workspace: {path}"
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        return f"Created {path}."
    summed = re.search(r"(-?\d+)\s*\+\s*(-?\d+)", prompt)
    if summed:
        return str(int(summed.group(1)) + int(summed.group(2)))
    return "I do not know how to do that."


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-file", required=True)
    ap.add_argument("--model", default="toy-1")
    ap.add_argument("--resume", default="")
    args = ap.parse_args()
    with open(args.prompt_file, encoding="utf-8") as fh:
        prompt = fh.read()
    text = answer(prompt)
    session = args.resume or "toy-" + hashlib.sha256(prompt.encode()).hexdigest()[:12]
    print(json.dumps({"result": text, "session_id": session, "model": args.model,
                      "usage": {"input_tokens": len(prompt.split()), "output_tokens": len(text.split())}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
