#!/usr/bin/env python3
"""Replays a recorded event stream: prints the lines of the file given for this turn.

    replay_agent.py STREAM [STREAM2 ...]   turn N prints STREAM<N> (WAZA_TURN picks it)
    --to FILE                              write the stream to FILE instead (events_from: file)
    --say TEXT                             then print TEXT on stdout
"""

import argparse
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("streams", nargs="+")
    ap.add_argument("--to")
    ap.add_argument("--say")
    args = ap.parse_args()
    turn = int(os.environ.get("WAZA_TURN", "1"))
    with open(args.streams[min(turn, len(args.streams)) - 1], encoding="utf-8") as fh:
        data = fh.read()
    if args.to:
        with open(args.to, "w", encoding="utf-8") as fh:
            fh.write(data)
    else:
        sys.stdout.write(data)
    if args.say:
        print(args.say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
