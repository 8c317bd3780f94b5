"""The numeric limits waza enforces on what users and suites ask for, in one place.

Each is generous for real use and small enough that a typo (``1e300``, ``.inf``,
``--trials 10000000``) is refused at load time with a file:line (or as a usage
error) instead of crashing or hanging a run. docs/safety.md lists them all; the
JSON Schemas repeat the numbers, and a test keeps both in step.
"""

from __future__ import annotations

#: timeouts of a run (``timeout_seconds``) and of a program grader (``timeout``,
#: ``.waza.yaml`` ``graders.programTimeout``): 7 days
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600
#: ``trials_per_task`` and ``--trials``
MAX_TRIALS = 1000
#: ``workers`` / ``max_workers`` and ``--workers``
MAX_WORKERS = 256
#: ``max_attempts``
MAX_ATTEMPTS = 100
#: a grader's or metric's ``weight``
MAX_WEIGHT = 1_000_000
#: every grader gets at most this long (seconds) when it sets no time limit of its own
DEFAULT_GRADER_TIMEOUT_SECONDS = 300.0
#: a prompt rendered from a ``tasks_from`` template (characters): a template that
#: repeats a large variable is refused at its row instead of exhausting memory
MAX_RENDERED_PROMPT_CHARS = 16 * 1024 * 1024
#: all the prompts a ``tasks_from`` file renders together: at most this many times the
#: file's size plus :data:`TEMPLATE_SLACK_CHARS` characters (the eval's ``inputs`` are
#: repeated in every row, so some growth is normal: a 1 MiB document used once in each of
#: 200 rows passes; a multiplication does not)
TEMPLATE_GROWTH = 64
TEMPLATE_SLACK_CHARS = 256 * 1024 * 1024
