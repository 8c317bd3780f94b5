"""Evaluator of the ``code`` grader's Python assertions: run as a script, never imported.

The evaluation context is waza's (``internal/graders/data/eval_wrapper.py``): ``output``,
``outcome``, ``transcript``, ``tool_calls``, ``errors``, ``duration_ms`` and the helpers
``len any all re str int float bool list dict True False``, with no builtins, so nothing
can be imported. Two fixes: the context is the *global* namespace, so a comprehension
or generator inside an assertion sees it too (waza's locals-only context raises
"name 'output' is not defined" there); and an exception with an empty message reports
its class name instead of counting as a pass.

Protocol (one JSON document per line, both ways): each request line holds the run's
payload and its ``assertions``; the evaluator answers ``null`` once the request is
parsed, then one JSON string per assertion: "" (passed), "fail" (falsy), or the error
text. It serves requests until stdin closes, so the parent may keep it warm. argv[1] is
the address-space limit in MiB (0 = none). Must run on any Python 3 a user has.
"""

import json
import re
import sys

MAX_MESSAGE = 4096


def _limit_memory(mib):
    if mib <= 0:
        return
    try:
        # deferred: resource is optional; a missing one is handled here
        import resource

        size = mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    except (ImportError, ValueError, OSError):
        pass


def _is_error(event):
    if not isinstance(event, dict):
        return False
    kind = event.get("type")
    try:
        if kind is not None and "error" in kind:
            return True
    except TypeError:
        pass
    return "error" in str(event.get("content", ""))


def _context(data):
    transcript = data.get("transcript") or []
    return {
        "__builtins__": {},
        "output": data.get("output") or "",
        "outcome": data.get("outcome"),
        "transcript": transcript,
        "tool_calls": data.get("tool_calls"),
        "errors": [t for t in transcript if _is_error(t)],
        "duration_ms": data.get("duration_ms"),
        "len": len, "any": any, "all": all, "re": re, "str": str, "int": int, "float": float,
        "bool": bool, "list": list, "dict": dict, "True": True, "False": False,
    }


def _verdict(expression, context):
    try:
        return "" if eval(expression, context) else "fail"
    except Exception as exc:  # noqa: BLE001 - any error is the assertion's verdict
        message = str(exc) or type(exc).__name__
        return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "..."


def main():
    _limit_memory(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    stdin, stdout = sys.stdin.buffer, sys.stdout
    while True:
        line = stdin.readline()
        if not line:
            return
        data = json.loads(line)
        context = _context(data)
        stdout.write("null\n")
        stdout.flush()
        for expression in data.get("assertions") or []:
            stdout.write(json.dumps(_verdict(expression, context)) + "\n")
            stdout.flush()


if __name__ == "__main__":
    main()
