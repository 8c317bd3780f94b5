"""A test executor whose runs block until the executor is shut down, as an agent that never
answers does until waza kills it: it writes ``$WAZA_TEST_BLOCKED`` when a run is blocked."""

from __future__ import annotations

import os
import threading

from waza_core import ExecutionRequest, Executor, RunEvidence, hookimpl


class BlockingExecutor(Executor):
    name = "blocking"
    needs_workspace = False
    paid = False

    def __init__(self, suite, options) -> None:
        super().__init__(suite, options)
        self.stopped = threading.Event()

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        if not request.task.id.startswith("trigger-"):
            return RunEvidence(output=request.prompt)  # the tasks pass at once; the trigger prompts block
        marker = os.environ.get("WAZA_TEST_BLOCKED")
        if marker:
            with open(marker, "a", encoding="utf-8") as fh:
                fh.write("blocked\n")
        self.stopped.wait(request.timeout_seconds)
        return RunEvidence(error="stopped" if self.stopped.is_set() else "timed out")

    def shutdown(self) -> None:
        self.stopped.set()


@hookimpl
def waza_register_executors(register):
    register(BlockingExecutor)
