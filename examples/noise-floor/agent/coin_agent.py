#!/usr/bin/env python3
"""A toy "agent" whose success is a coin toss, for the noise-floor example: offline and free.

The prompt says how likely the agent is to finish ("chance: 0.7"); each call tosses a fresh
coin (the operating system's randomness, so two runs of the suite differ as two runs of a real
agent do) and prints "DONE: ..." or "GAVE UP: ...". Tasks with chance 1 or 0 behave the same
in every trial: the deterministic part of a real agent.
"""

import random
import re
import sys


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        prompt = fh.read()
    found = re.search(r"chance:\s*([0-9.]+)", prompt)
    chance = float(found.group(1)) if found else 0.5
    finished = random.SystemRandom().random() < chance
    print(("DONE: " if finished else "GAVE UP: ") + prompt.strip().splitlines()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
