"""``executor: echo``: the answer is the prompt itself, as promptfoo's ``echo`` provider.

Free, offline and deterministic. Useful on its own for testing graders (the output is
exactly the text you wrote), and the executor of suites imported from promptfoo: a test
run with promptfoo's ``echo`` provider and the imported task run with ``--executor echo``
grade the same text. Each follow-up prompt is answered with itself too; the final output
is the answer of the last turn. No transcript, tool calls or usage (usage stays null).
"""

from __future__ import annotations

from waza_adapters._turns import answer_turns
from waza_core import ExecutionRequest, Executor, RunEvidence, hookimpl


class EchoExecutor(Executor):
    name = "echo"
    needs_workspace = False
    paid = False
    reports_turns = True
    reports_usage = False  # usage is always null: nothing for the price table

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        return answer_turns(request, "echo", [request.prompt, *request.task.follow_up_prompts])


@hookimpl
def waza_register_executors(register):
    register(EchoExecutor)
