#!/usr/bin/env python3
"""A fake command-line agent for the ``cli`` executor tests.

It reads its prompt (``--prompt-file F``, ``--prompt P`` or stdin with ``--stdin``)
and obeys one instruction per prompt line, in order:

    write <path>: <text>      write a file (relative to the working directory)
    say <text>                add a line to the answer
    env <NAME>                add "NAME=<value or unset>" to the answer
    spawn-sleeper <pidfile>   start a grandchild that sleeps, write its pid to pidfile
    sleep <seconds>           sleep
    flood <MiB>               print that many MiB of 'x' on stdout
    stderr <text>             print text on stderr
    exit <code>               stop here with that exit code

Then it prints the answer: ``--format text`` as is, ``json`` as one object
``{"result", "usage", "session_id", "messages"}``, ``jsonl`` as a few events.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt")
    ap.add_argument("--prompt-file")
    ap.add_argument("--stdin", action="store_true")
    ap.add_argument("--format", default="json", choices=["text", "json", "jsonl"])
    ap.add_argument("--model", default="")
    ap.add_argument("--resume", default="")
    args = ap.parse_args()
    if args.prompt_file:
        with open(args.prompt_file, encoding="utf-8") as fh:
            prompt = fh.read()
    elif args.stdin:
        prompt = sys.stdin.read()
    else:
        prompt = args.prompt or ""
    answer = []
    if args.resume:
        answer.append(f"resumed {args.resume}")
    for line in prompt.splitlines():
        verb, _, rest = line.strip().partition(" ")
        if verb == "write":
            path, _, text = rest.partition(": ")
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            answer.append(f"wrote {path}")
        elif verb == "say":
            answer.append(rest)
        elif verb == "env":
            answer.append(f"{rest}={os.environ.get(rest, '<unset>')}")
        elif verb == "spawn-sleeper":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            with open(rest, "w") as fh:
                fh.write(str(child.pid))
        elif verb == "sleep":
            time.sleep(float(rest))
        elif verb == "flood":
            chunk = b"x" * (1 << 20)
            for _ in range(int(rest)):
                sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        elif verb == "stderr":
            sys.stderr.write(rest + "\n")
        elif verb == "exit":
            return int(rest)
    text = "\n".join(answer)
    usage = {"input_tokens": len(prompt.split()), "output_tokens": len(text.split()),
             "cache_read_input_tokens": 2}
    session = "fake-" + str(abs(hash(prompt)) % 10000) if not args.resume else args.resume
    if args.format == "text":
        print(text)
    elif args.format == "json":
        print(json.dumps({"type": "result", "result": text, "usage": usage, "session_id": session,
                          "model": args.model,
                          "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": text}]}))
    else:
        print("starting up (a log line, not JSON)")
        print(json.dumps({"type": "system", "session_id": session}))
        print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}))
        print(json.dumps({"type": "result", "result": text, "usage": usage}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
