"""Grader plugins used by the tests: one that raises, one that sleeps, one that counts."""

import threading
import time

from waza_core.grading.base import Grader
from waza_core.hookspecs import hookimpl


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


@hookimpl
def waza_register_graders(register):
    for cls in (BoomGrader, SleepGrader, WorkspaceSpy, FlipGrader):
        register(cls)
