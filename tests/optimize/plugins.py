"""Test-only plugins for the optimizer tests (loaded with ``-p tests.optimize.plugins``).

A grader that cannot judge, and executors that echo the skill, report usage, sleep, or
interrupt the run. The graders the seed's admission rules talk about (diff,
json_schema, prompt, trigger) are the real ones.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from waza_core.errors import GraderError, WazaError
from waza_core.grading.base import Grader
from waza_core.hookspecs import hookimpl
from waza_core.model import RunEvidence
from waza_core.run.execution import Executor


class BoomGrader(Grader):
    """Could not judge: an evaluation error, not a failed assertion."""

    name = "boom"
    config_schema = {"type": "object"}

    def grade(self, ctx):
        if "BOOM" in (ctx.evidence.output or ""):
            raise GraderError("the judge could not start", kind="start_failed")
        return self.result(1.0, True, "ok")


class SkillEcho(Executor):
    """Outputs the SKILL.md of the first skill directory, so graders see the candidate."""

    name = "skillecho"
    paid = False
    seen: list = []

    def execute(self, request):
        SkillEcho.seen.append(tuple(request.skill_directories))
        text = ""
        for d in request.skill_directories:
            p = Path(d) / "SKILL.md"
            if p.is_file():
                text = p.read_text("utf-8")
                break
        files = "\n".join(c for _, c in request.files)
        return RunEvidence(output=f"{text}\n{files}", usage=None)


class UsageEcho(Executor):
    """Free executor reporting the usage written in the task's context (``usage``)."""

    name = "usageecho"
    paid = False

    def execute(self, request):
        files = "\n".join(c for _, c in request.files)
        usage = request.task.context.get("usage")
        return RunEvidence(output=files, usage=dict(usage) if usage else None)


class Sleepy(Executor):
    name = "sleepy"
    paid = False

    def execute(self, request):
        time.sleep(float(os.environ.get("WAZA_TEST_SLEEP", "5")))
        return RunEvidence(output="slept")


class CtrlC(Executor):
    """Delivers SIGINT to the process mid-run, like a user pressing Ctrl-C."""

    name = "ctrlc"
    paid = False

    def execute(self, request):
        signal.raise_signal(signal.SIGINT)
        time.sleep(0.05)
        return RunEvidence(output="interrupted")


class Mutator(Executor):
    """Edits a file of the pinned suite during the run (what suite_changed guards)."""

    name = "mutator"
    paid = False

    def execute(self, request):
        target = Path(request.task.file).parent.parent / "data.csv"
        if os.environ.get("WAZA_TEST_MUTATE") == "1":
            target.write_text(target.read_text() + "x\n")
        files = "\n".join(c for _, c in request.files)
        return RunEvidence(output=files)


class PaidExec(Executor):
    name = "paidexec"
    paid = True

    def execute(self, request):
        return RunEvidence(output="\n".join(c for _, c in request.files))


class StartFails(Executor):
    """Cannot start (e.g. the agent is not logged in): no run ever happens."""

    name = "startfails"
    paid = False

    def start(self):
        raise WazaError("the agent is not logged in")

    def execute(self, request):  # pragma: no cover - never reached
        return RunEvidence(output="")


class ShutdownFails(Executor):
    """Runs every task (reporting usage), then fails to shut down."""

    name = "shutdownfails"
    paid = False

    def execute(self, request):
        return RunEvidence(output="\n".join(c for _, c in request.files), usage={"premium_requests": 1})

    def shutdown(self):
        raise RuntimeError("engine shutdown failed")


@hookimpl
def waza_register_graders(register):
    register(BoomGrader)


@hookimpl
def waza_register_executors(register):
    for cls in (SkillEcho, UsageEcho, Sleepy, CtrlC, Mutator, PaidExec, StartFails, ShutdownFails):
        register(cls)


from waza_adapters.fake import FakeAdapter  # noqa: E402


class RecordingFake(FakeAdapter):
    """The fake adapter, keeping every request and raw reply for contract checks."""

    name = "recfake"
    log: list = []

    def call(self, request, *, timeout, cancel):
        reply = super().call(request, timeout=timeout, cancel=cancel)
        RecordingFake.log.append((request, reply.raw))
        return reply


class PaidFake(FakeAdapter):
    """Stands in for command/copilot-reflect: always needs --allow-paid-calls."""

    name = "paidfake"
    always_paid = True
    described = 0

    def call(self, request, *, timeout, cancel):
        if request["operation"] == "describe":
            PaidFake.described += 1
        return super().call(request, timeout=timeout, cancel=cancel)


class CrashingAdapter(FakeAdapter):
    name = "crashing"

    def call(self, request, *, timeout, cancel):
        if request["operation"] == "propose":
            raise RuntimeError("segfault-ish")
        return super().call(request, timeout=timeout, cancel=cancel)


class MeasuredFailure(FakeAdapter):
    """Fails a propose call but keeps the usage the engine reported."""

    name = "measuredfail"

    def call(self, request, *, timeout, cancel):
        from waza_core.optimize.adapter import AdapterFailure

        if request["operation"] == "propose":
            raise AdapterFailure("model call failed", usage={"status": "measured", "premium_requests": 0.33})
        return super().call(request, timeout=timeout, cancel=cancel)


@hookimpl
def waza_register_optimizer_adapters(register):
    for cls in (RecordingFake, PaidFake, CrashingAdapter, MeasuredFailure):
        register(cls)
