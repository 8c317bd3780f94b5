"""Write a suite of N task files, to see the suite cache and load helpers at work.

    python examples/large-suite/make_suite.py N FOLDER

Each task asks the mock executor to explain one item and checks, with a `text` grader, that the
answer names it; every task passes. FOLDER must not exist yet (nothing is written over).
"""

from __future__ import annotations

import sys
from pathlib import Path

EVAL = """name: large-suite-{n}
skill: explain
config: {{executor: mock, trials_per_task: 1}}
tasks: ["tasks/*.yaml"]
"""

TASK = """id: task-{i:06d}
inputs:
  prompt: "Explain item {i}."
graders:
  - type: text
    name: names-the-item
    config: {{contains: ["item {i}"]}}
"""


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit() or int(argv[0]) < 1:
        print("usage: make_suite.py N FOLDER  (N: how many tasks, 1 or more; FOLDER: a new folder)",
              file=sys.stderr)
        return 2
    n, root = int(argv[0]), Path(argv[1])
    try:
        (root / "tasks").mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        print(f"{root}: already exists; name a new folder", file=sys.stderr)
        return 2
    (root / "eval.yaml").write_text(EVAL.format(n=n))
    for i in range(n):
        (root / "tasks" / f"t{i:06d}.yaml").write_text(TASK.format(i=i))
    print(f"{root / 'eval.yaml'}: {n} task(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
