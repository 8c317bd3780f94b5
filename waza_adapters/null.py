"""``executor: null``: the do-nothing agent of ``waza audit``.

It answers every prompt with an empty output, calls no tool, uses no skill and never
touches the workspace, so whatever passes against it passed without any agent work: a
vacuous task or grader. Free and offline. As a judge it does not answer (a prompt
grader under it is "not judged", never a verdict).
"""

from __future__ import annotations

from waza_core import ExecutionRequest, Executor, RunEvidence, hookimpl


class NullExecutor(Executor):
    name = "null"
    needs_workspace = False
    paid = False
    reports_turns = True
    reports_usage = False  # usage is always null: nothing for the price table

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        session_id = f"null-session-{request.task.id}-{request.run_number}-{request.attempt}"
        if request.on_turn is not None:
            request.on_turn(1, RunEvidence(output="", transcript=[], tool_calls=[], session_id=session_id,
                                           duration_ms=0))
        return RunEvidence(output="", transcript=[], tool_calls=[], duration_ms=0, usage=None,
                           session_id=session_id)


@hookimpl
def waza_register_executors(register):
    register(NullExecutor)
