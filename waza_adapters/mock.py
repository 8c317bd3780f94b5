"""``executor: mock``: a deterministic stand-in for an agent, free and offline.

The output is built from the task alone, line by line (a stable format, documented
in docs/executors.md)::

    Mock response for: <prompt>
    Task: <task name>
    Description: <description>          (when set)
    Context:                            (when inputs.context is set; keys sorted)
      <key>: <value>
    Analyzed N file(s):                 (when inputs.files is set)
      - <path>
    <content of each file, first 1024 bytes, then "...(truncated)" when longer>
    Mock response for: <follow-up prompt>   (one line per follow-up prompt)

No transcript, tool calls or usage are produced: usage stays null, never zero.
"""

from __future__ import annotations

import json

from waza_adapters._turns import answer_turns
from waza_core import ExecutionRequest, Executor, RunEvidence, hookimpl

PREVIEW_BYTES = 1024


def mock_turns(request: ExecutionRequest) -> tuple[list[str], list[str]]:
    """(lines of the first turn, one line per follow-up prompt)."""
    task = request.task
    lines = [f"Mock response for: {request.prompt}", f"Task: {task.name}"]
    if task.description:
        lines.append(f"Description: {task.description}")
    if task.context:
        lines.append("Context:")
        for key in sorted(task.context):
            value = task.context[key]
            shown = json.dumps(value, sort_keys=True, default=str) \
                if isinstance(value, (dict, list, bool, int, float, type(None))) else str(value)
            lines.append(f"  {key}: {shown}")
    if request.files:
        lines.append(f"Analyzed {len(request.files)} file(s):")
        lines.extend(f"  - {path}" for path, _ in request.files)
        for _, content in request.files:
            if content:
                data = content.encode("utf-8")
                if len(data) > PREVIEW_BYTES:
                    lines.append(data[:PREVIEW_BYTES].decode("utf-8", "ignore") + "...(truncated)")
                else:
                    lines.append(content)
    follow_ups = task.follow_up_prompts
    return lines, [f"Mock response for: {p}" for p in follow_ups] if follow_ups else []


class MockExecutor(Executor):
    name = "mock"
    needs_workspace = False
    paid = False
    reports_turns = True
    reports_usage = False  # usage is always null: nothing for the price table

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        first, follow_ups = mock_turns(request)
        # one turn (most tasks): its one output, without the generator of the turns
        outputs = _outputs(first, follow_ups) if follow_ups else ("\n".join(first),)
        return answer_turns(request, "mock", outputs)


def _outputs(first: list[str], follow_ups: list[str]):
    """The output after each turn: the first turn's lines, then one more line a turn."""
    lines = list(first)
    yield "\n".join(lines)
    for line in follow_ups:
        lines.append(line)
        yield "\n".join(lines)


@hookimpl
def waza_register_executors(register):
    register(MockExecutor)
