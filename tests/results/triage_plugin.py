"""A plugin for the failure-triage tests: a grader that divides by zero (a buggy plugin),
and an executor that fails on the tasks whose prompt says ``CRASH`` (the harness)."""

from __future__ import annotations

from waza_core import ExecutionRequest, Executor, ExecutorError, Grader, RunEvidence, hookimpl


def ratio(done: int, total: int) -> float:
    return done / total


class RatioGrader(Grader):
    """Scores the share of words that are 'ok'; divides by zero on an empty answer."""

    name = "ratio"
    config_schema = {"type": "object"}

    def grade(self, ctx):
        words = [w for w in ctx.evidence.output.split() if w == "zero-words"]
        return self.result(ratio(len(words), len(words)), True, "ratio")


class CrashOnPrompt(Executor):
    """Answers like an agent, but cannot run a task whose prompt says CRASH."""

    name = "crash_on_prompt"
    needs_workspace = False
    paid = False

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        if "CRASH" in request.prompt:
            raise ExecutorError("the agent process exited with code 137 before answering")
        return RunEvidence(output=f"answer: {request.prompt}", transcript=[], tool_calls=[])


@hookimpl
def waza_register_graders(register):
    register(RatioGrader)


@hookimpl
def waza_register_executors(register):
    register(CrashOnPrompt)
