#!/usr/bin/env python3
"""A toy command-line agent that speaks Claude Code's stream-json, so the `cli`
executor records its tool calls, skill invocations and usage (`events: claude-stream-json`).

It does not think: it obeys one instruction per line of its prompt, in order.

    say <text>                    a line of the final answer
    write <path>: <text>          write a file in the working directory (a "Write" tool call)
    tool <Name> <json-object>     record a tool call with that input, which succeeds
    fail-tool <Name> <json>       record a tool call that fails
    skill <name>                  invoke a skill (a "Skill" tool call)
    usage <input> <output>        report that many tokens

Other lines are ignored. ``--format text`` prints only the answer, without events.
"""

import argparse
import hashlib
import json
import os
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-file", required=True)
    ap.add_argument("--model", default="toy-1")
    ap.add_argument("--format", default="stream-json", choices=["stream-json", "text"])
    args = ap.parse_args()
    with open(args.prompt_file, encoding="utf-8") as fh:
        prompt = fh.read()
    answer, blocks, results = [], [], []
    usage = {"input_tokens": 0, "output_tokens": 0}

    def call(name: str, tool_input: dict, ok: bool = True, result: str = "ok") -> None:
        tool_id = f"toolu_{len(blocks) + 1:02d}"
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        results.append({"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": not ok})

    for line in prompt.splitlines():
        verb, _, rest = line.strip().partition(" ")
        if verb == "say":
            answer.append(rest)
        elif verb == "write":
            path, _, text = rest.partition(": ")
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text + "\n")
            call("Write", {"file_path": path, "content": text + "\n"})
        elif verb in ("tool", "fail-tool"):
            name, _, raw = rest.partition(" ")
            call(name, json.loads(raw or "{}"), ok=verb == "tool", result="ok" if verb == "tool" else "denied")
        elif verb == "skill":
            call("Skill", {"skill": rest})
        elif verb == "usage":
            tokens_in, tokens_out = rest.split()
            usage = {"input_tokens": int(tokens_in), "output_tokens": int(tokens_out)}
    text = "\n".join(answer)
    if args.format == "text":
        print(text)
        return 0
    session = "toy-" + hashlib.sha1(prompt.encode()).hexdigest()[:8]

    def emit(doc: dict) -> None:
        print(json.dumps(doc))

    emit({"type": "system", "subtype": "init", "session_id": session, "model": args.model, "tools": ["Write"]})
    if blocks:
        emit({"type": "assistant", "session_id": session, "message": {"role": "assistant", "content": blocks}})
        emit({"type": "user", "session_id": session, "message": {"role": "user", "content": results}})
    emit({"type": "assistant", "session_id": session,
          "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}})
    emit({"type": "result", "subtype": "success", "is_error": False, "session_id": session, "result": text,
          "num_turns": 1 + bool(blocks), "usage": usage,
          "modelUsage": {args.model: {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"],
                                      "costUSD": 0}}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
