#!/usr/bin/env python3
"""A stand-in agent: prints a recorded event stream, as the real agent printed it.

    python3 replay.py STREAM.jsonl

Swap the `command` of the eval.yaml beside the stream for the real agent's command
(docs/executors.md, "Recipes") and keep `events:` as it is.
"""

import sys

with open(sys.argv[1], "rb") as fh:  # bytes as recorded: a BOM, \r\n and a lone \r stay as they are
    sys.stdout.buffer.write(fh.read())
