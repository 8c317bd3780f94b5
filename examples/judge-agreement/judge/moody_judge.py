#!/usr/bin/env python3
"""A stand-in LLM judge whose consistency you choose: for `waza grade --repeat K`.

waza runs it through the `cli` executor as the judge of a `prompt` grader. It reads the
judge prompt (`--prompt-file`) and answers with one waza verdict line
(`{"waza_grade": "pass"|"fail", "description", "reason"}`), as a real judge model does.

  --mode steady   pass when the candidate output contains --word (default "hello"), else
                  fail: the same evidence always gets the same verdict
  --mode coin     a fair coin, seeded: the n-th call (counted in --state) passes when
                  random.Random(f"{seed}:{n}").random() < 0.5, whatever the output says
  --mode script   the n-th call answers the n-th letter of --verdicts (P or F; commas
                  are ignored; it starts again after the last): verdicts known exactly

--state FILE counts the calls (coin and script need it); delete it to start again at 0.
"""

import argparse
import fcntl
import json
import os
import random
import re
import sys


def candidate(prompt: str) -> str:
    m = re.search(r"===== BEGIN CANDIDATE OUTPUT =====\n(.*?)\n===== END CANDIDATE OUTPUT =====", prompt, re.S)
    return m.group(1) if m else ""


def next_call(path: str) -> int:
    """The number of this call (0, 1, ...), counted in ``path`` under a lock."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        text = fh.read().strip()
        n = int(text) if text.isdigit() else 0
        fh.seek(0)
        fh.truncate()
        fh.write(f"{n + 1}\n")
    return n


def verdict(args: argparse.Namespace, prompt: str) -> tuple[bool, str]:
    if args.mode == "steady":
        found = args.word.lower() in candidate(prompt).lower()
        return found, f"{args.word!r} {'found' if found else 'missing'}"
    if not args.state:
        sys.exit(f"moody_judge: --mode {args.mode} needs --state FILE to count its calls")
    n = next_call(args.state)
    if args.mode == "coin":
        return random.Random(f"{args.seed}:{n}").random() < 0.5, f"coin flip {n} (seed {args.seed})"
    letters = [c for c in args.verdicts.upper() if c in "PF"]
    if not letters:
        sys.exit("moody_judge: --verdicts needs letters P and F")
    return letters[n % len(letters)] == "P", f"scripted verdict {n}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-file", required=True)
    ap.add_argument("--mode", choices=["steady", "coin", "script"], default="steady")
    ap.add_argument("--word", default="hello")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--verdicts", default="")
    ap.add_argument("--state")
    args = ap.parse_args()
    with open(args.prompt_file, encoding="utf-8") as fh:
        prompt = fh.read()
    passed, reason = verdict(args, prompt)
    print("I read the output.")
    print(json.dumps({"waza_grade": "pass" if passed else "fail", "description": f"{args.mode} judge",
                      "reason": reason}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
