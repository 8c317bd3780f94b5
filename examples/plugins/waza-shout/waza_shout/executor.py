"""``executor: loud``: answers every prompt with the prompt itself, upper-cased.

A stand-in for an agent: free, offline, deterministic. It also writes its answer to
``answer.txt`` in the run's workspace, as an agent that edits files would.
"""

import os
import time

from waza_core import Executor, ExecutorError, RunEvidence, hookimpl


class LoudExecutor(Executor):
    name = "loud"
    paid = False  # free: `waza optimize` needs no --allow-paid-calls for it
    config_key = "loud"  # its settings live under config.loud in eval.yaml
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"prefix": {"type": "string", "description": "text put before every answer"}},
    }

    def start(self):
        self.prefix = self.options.get("prefix", "")

    def execute(self, request):
        if not request.prompt.strip():
            raise ExecutorError("empty prompt")
        started = time.perf_counter()
        answer = self.prefix + request.prompt.upper()
        with open(os.path.join(request.workspace_dir, "answer.txt"), "w", encoding="utf-8") as fh:
            fh.write(answer + "\n")
        return RunEvidence(
            output=answer,
            transcript=[{"type": "user.message", "content": request.prompt},
                        {"type": "assistant.message", "content": answer}],
            tool_calls=[{"name": "write_file", "arguments": {"path": "answer.txt"}}],
            duration_ms=int((time.perf_counter() - started) * 1000),
            usage=None,  # not measured: never report a fake zero
            session_id=f"loud-{request.task.id}-{request.run_number}-{request.attempt}",
        )

    def shutdown(self):
        pass


@hookimpl
def waza_register_executors(register):
    register(LoudExecutor)
