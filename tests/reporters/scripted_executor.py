"""A test executor whose output depends on the trial: flaky tasks, errors and rich evidence.

A task's ``inputs.context`` drives it: ``outputs`` (one string per trial, cycled),
``errors`` (trial numbers that fail to execute) and ``hostile: true`` (append text
that tries to break every report format). Each run records a transcript, tool
events and token usage, so reports have every kind of evidence to show.
"""

from __future__ import annotations

from waza_core import ExecutionRequest, Executor, ExecutorError, RunEvidence, hookimpl

HOSTILE = ("</script><script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">"
           " | pipe `tick` **bold** [link](https://example.invalid/x.png) @octocat\n"
           "<!-- comment --> & ]]> \x1b[31mred\x1b[0m bell\x07 nul\x00 end")


class ScriptedExecutor(Executor):
    name = "scripted"
    needs_workspace = False
    paid = False

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        ctx = request.task.context
        if request.run_number in ctx.get("errors", []):
            raise ExecutorError(f"scripted failure of trial {request.run_number}")
        outputs = ctx.get("outputs") or [f"answer to {request.prompt}"]
        output = outputs[(request.run_number - 1) % len(outputs)]
        if ctx.get("hostile"):
            output += HOSTILE
        return RunEvidence(
            output=output,
            transcript=[{"role": "user", "content": request.prompt}, {"role": "assistant", "content": output}],
            tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}],
            tool_events=[{"turn": 1, "sequence": 1, "tool_call_id": "c1", "tool_name": "read_file",
                          "args": {"path": "notes.txt"}, "result": "contents", "success": True, "duration_ms": 3}],
            duration_ms=10 * request.run_number,
            usage={"input_tokens": 100, "output_tokens": 20 * request.run_number},
            session_id=f"scripted-{request.task.id}-{request.run_number}",
        )


@hookimpl
def waza_register_executors(register):
    register(ScriptedExecutor)
