#!/usr/bin/env python3
"""A fake LLM judge for the prompt grader tests: a `cli` program that returns verdicts.

It reads the judge prompt (``--prompt-file``) and judges by simple rules:

- every line of the criteria of the form ``must mention: <word>`` is one check, passed
  when the candidate output contains the word (case-insensitive); with no such line the
  one check is "the output is not empty";
- pairwise prompts: each output scores one point per word it mentions; the higher score
  wins (``--bias A`` always answers A, to play a judge with position bias).

``--answer`` picks how the verdict comes back:
  lines        prose, then one JSON verdict line per check (default)
  stream-json  a Claude Code stream-json event stream whose tool calls carry the verdicts
  none         prose without any verdict
  echo         the prompt itself, repeated back
  injected     repeats the verdict-looking lines of the candidate output (a fooled judge)
``--record FILE`` appends the prompt, the model and WAZA_SESSION_ID to FILE;
``--exit N`` exits with N after answering.
"""

import argparse
import json
import os
import re
import sys


def section(prompt: str, marker: str) -> str | None:
    m = re.search(rf"===== BEGIN {marker} =====\n(.*?)\n===== END {marker} =====", prompt, re.S)
    return m.group(1) if m else None


def words(prompt: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"(?im)^\s*-?\s*must mention:\s*(\S.*)$", prompt)]


def checks(prompt: str, model: str) -> list[tuple[str, str, str]]:
    output = section(prompt, "CANDIDATE OUTPUT")
    if output is None:
        return [("fail", "output shown", "the prompt shows no candidate output")]
    wanted = words(prompt)
    if not wanted:
        ok = output.strip() and output.strip() != "(the agent produced no output)"
        return [("pass" if ok else "fail", "not empty", f"judged by {model or 'default'}")]
    return [("pass" if w.lower() in output.lower() else "fail", f"mentions {w}",
             f"{'found' if w.lower() in output.lower() else 'missing'} (judged by {model or 'default'})")
            for w in wanted]


def pairwise(prompt: str, bias: str | None) -> dict:
    a, b = section(prompt, "OUTPUT A") or "", section(prompt, "OUTPUT B") or ""
    wanted = words(prompt) or ["the"]
    sa = sum(w.lower() in a.lower() for w in wanted)
    sb = sum(w.lower() in b.lower() for w in wanted)
    if bias:
        return {"waza_winner": bias, "magnitude": "slightly-better", "reasoning": "I always like " + bias}
    winner = "A" if sa > sb else "B" if sb > sa else "tie"
    gap = abs(sa - sb)
    magnitude = "much-better" if gap >= 2 else "slightly-better" if gap == 1 else "equal"
    return {"waza_winner": winner, "magnitude": magnitude, "reasoning": f"A={sa} B={sb}"}


def stream(verdicts: list[dict]) -> None:
    """Claude Code stream-json: init, one assistant message with tool_use blocks, results."""
    emit = lambda doc: print(json.dumps(doc))  # noqa: E731
    emit({"type": "system", "subtype": "init", "session_id": "judge-session", "model": "fake"})
    blocks = [{"type": "text", "text": "Verdict follows."}]
    for i, v in enumerate(verdicts):
        if "waza_winner" in v:
            blocks.append({"type": "tool_use", "id": f"t{i}", "name": "set_pairwise_winner",
                           "input": {"winner": v["waza_winner"], "magnitude": v["magnitude"],
                                     "reasoning": v["reasoning"]}})
        else:
            name = "set_waza_grade_pass" if v["waza_grade"] == "pass" else "set_waza_grade_fail"
            blocks.append({"type": "tool_use", "id": f"t{i}", "name": name,
                           "input": {"description": v["description"], "reason": v["reason"]}})
    emit({"type": "assistant", "session_id": "judge-session", "message": {"role": "assistant", "content": blocks}})
    emit({"type": "user", "session_id": "judge-session", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{i}", "content": "recorded"} for i in range(len(verdicts))]}})
    emit({"type": "result", "subtype": "success", "is_error": False, "session_id": "judge-session",
          "result": "Done judging.", "num_turns": 1, "usage": {"input_tokens": 10, "output_tokens": 5}})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt-file", required=True)
    ap.add_argument("--model", default="")
    ap.add_argument("--answer", default="lines", choices=["lines", "stream-json", "none", "echo", "injected"])
    ap.add_argument("--bias", choices=["A", "B"])
    ap.add_argument("--record")
    ap.add_argument("--exit", type=int, default=0)
    args = ap.parse_args()
    with open(args.prompt_file, encoding="utf-8") as fh:
        prompt = fh.read()
    if args.record:
        with open(args.record, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"prompt": prompt, "model": args.model,
                                 "session": os.environ.get("WAZA_SESSION_ID")}) + "\n")
    if "OUTPUT A =====" in prompt:
        verdicts = [pairwise(prompt, args.bias)]
    else:
        verdicts = [{"waza_grade": v, "description": d, "reason": r} for v, d, r in checks(prompt, args.model)]
    if args.answer == "lines":
        print("I read the output carefully.")
        for v in verdicts:
            print(json.dumps(v))
    elif args.answer == "stream-json":
        stream(verdicts)
    elif args.answer == "none":
        print("Looks fine to me, I think.")
    elif args.answer == "echo":
        print(prompt)
    elif args.answer == "injected":
        for line in (section(prompt, "CANDIDATE OUTPUT") or "").splitlines():
            if "waza_grade" in line:
                print(line)
    sys.stdout.flush()
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
