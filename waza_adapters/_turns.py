"""The turn loop of the offline executors (``mock``, ``echo``): free, deterministic answers.

Each of them only says what its output is after each turn; :func:`answer_turns` runs the
turns the way every executor must: a checkpoint (``request.on_turn``) sees the evidence so
far after each turn and may stop the conversation there. No transcript, tool calls or usage
(usage stays null, never zero).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from waza_core import ExecutionRequest, RunEvidence


def answer_turns(request: ExecutionRequest, executor: str, outputs: Iterable[str]) -> RunEvidence:
    """The evidence of one run whose output after turn N is the N-th of ``outputs``; its
    session id is ``<executor>-session-<task id>-<run>-<attempt>``."""
    start = time.perf_counter()
    session_id = f"{executor}-session-{request.task.id}-{request.run_number}-{request.attempt}"
    output = ""
    for turn, output in enumerate(outputs, 1):
        if request.on_turn is not None and request.on_turn(turn, RunEvidence(
                output=output, transcript=[], tool_calls=[], session_id=session_id,
                duration_ms=int((time.perf_counter() - start) * 1000))):
            break  # a checkpoint asked to stop the conversation here
    return RunEvidence(output=output, transcript=[], tool_calls=[],
                       duration_ms=int((time.perf_counter() - start) * 1000), usage=None, session_id=session_id)
