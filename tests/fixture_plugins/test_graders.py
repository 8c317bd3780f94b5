"""Plugins used by the tests: graders that raise, sleep, count or report their setup, and an
executor that answers with what it was asked."""

import threading
import time

from waza_core.grading.base import Grader
from waza_core.hookspecs import hookimpl
from waza_core.model import RunEvidence
from waza_core.run.execution import Executor


class BoomGrader(Grader):
    name = "boom"
    config_schema = {"type": "object"}

    def grade(self, ctx):
        raise RuntimeError("kaboom from a buggy grader")


class SleepGrader(Grader):
    name = "sleep"
    config_schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}

    def grade(self, ctx):
        deadline = time.monotonic() + self.spec.config.get("seconds", 1)
        while time.monotonic() < deadline:
            if ctx.cancel is not None and ctx.cancel.is_set():
                break
            time.sleep(0.01)
        return self.result(1.0, True, "slept")


class WorkspaceSpy(Grader):
    """Records which workspace each run saw and what was in it."""

    name = "workspace_spy"
    config_schema = {"type": "object"}
    seen: list = []
    lock = threading.Lock()

    def grade(self, ctx):
        import os

        listing = sorted(os.listdir(ctx.workspace_dir))
        with self.lock:
            WorkspaceSpy.seen.append((ctx.task.id, ctx.workspace_dir, listing))
        time.sleep(0.02)
        return self.result(1.0, True, ",".join(listing))


class FlipGrader(Grader):
    """Fails the first attempt of each task, passes afterwards (for max_attempts)."""

    name = "flip"
    config_schema = {"type": "object"}
    calls: dict = {}

    def grade(self, ctx):
        n = FlipGrader.calls.get(ctx.task.id, 0) + 1
        FlipGrader.calls[ctx.task.id] = n
        return self.result(1.0 if n > 1 else 0.0, n > 1, f"call {n}")


class SetupProbe(Grader):
    """Passes, with the judge model it was started with as feedback; counts start/close."""

    name = "setup_probe"
    config_schema = {"type": "object"}
    needs_workspace = False
    events: list = []

    def start(self, setup):
        self.judge = setup.judge_model
        SetupProbe.events.append(("start", setup.judge_model))

    def close(self):
        SetupProbe.events.append(("close", self.spec.name))

    def grade(self, ctx):
        return self.result(1.0, True, f"judge={self.judge}")


class RequestProbe(Executor):
    """Answers with the parts of the ExecutionRequest that run preparers may set."""

    name = "request_probe"
    paid = False
    needs_workspace = False

    def execute(self, request):
        import json

        seen = {"environment": dict(request.environment), "path_prepend": list(request.path_prepend),
                "mcp_servers": dict(request.mcp_servers), "workdir": request.workdir}
        return RunEvidence(output=json.dumps(seen, sort_keys=True))


@hookimpl
def waza_register_graders(register):
    for cls in (BoomGrader, SleepGrader, WorkspaceSpy, FlipGrader, SetupProbe):
        register(cls)


@hookimpl
def waza_register_executors(register):
    register(RequestProbe)
