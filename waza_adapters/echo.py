"""``executor: echo``: the answer is the prompt itself, as promptfoo's ``echo`` provider.

Free, offline and deterministic. Useful on its own for testing graders (the output is
exactly the text you wrote), and the executor of suites imported from promptfoo: a test
run with promptfoo's ``echo`` provider and the imported task run with ``--executor echo``
grade the same text. Each follow-up prompt is answered with itself too; the final output
is the answer of the last turn. No transcript, tool calls or usage (usage stays null).
"""

from __future__ import annotations

import time

from waza_core import ExecutionRequest, Executor, RunEvidence, hookimpl


class EchoExecutor(Executor):
    name = "echo"
    needs_workspace = False
    paid = False
    reports_turns = True

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        start = time.perf_counter()
        session_id = f"echo-session-{request.task.id}-{request.run_number}-{request.attempt}"
        prompts = [request.prompt, *request.task.follow_up_prompts]
        answer = prompts[0]
        for turn, prompt in enumerate(prompts, 1):
            answer = prompt
            if request.on_turn is not None and request.on_turn(turn, RunEvidence(
                    output=answer, transcript=[], tool_calls=[], session_id=session_id,
                    duration_ms=int((time.perf_counter() - start) * 1000))):
                break  # a checkpoint asked to stop the conversation here
        return RunEvidence(output=answer, transcript=[], tool_calls=[],
                           duration_ms=int((time.perf_counter() - start) * 1000), usage=None,
                           session_id=session_id)


@hookimpl
def waza_register_executors(register):
    register(EchoExecutor)
