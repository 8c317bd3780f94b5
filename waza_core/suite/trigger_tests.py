"""``trigger_tests.yaml``: prompts that should (and should not) trigger the skill.

As in waza (Go) ``internal/trigger``: the file sits next to ``eval.yaml`` and is found
by name. It needs a ``skill`` and at least one prompt; each prompt's ``confidence`` is
``high``, ``medium`` or empty. waza (Go) ignores unknown keys silently; waza for
Python warns about them (a ``shouldTriggerPrompts`` typo otherwise leaves the file
without prompts). A broken file fails the suite when it loads, where waza (Go) failed
the run after all tasks had run.

The checked document is stored on :attr:`Suite.trigger_tests` as
``{"skill", "should_trigger_prompts", "should_not_trigger_prompts", "file"}``.
"""

from __future__ import annotations

import os
from pathlib import Path

from waza_core.paths import PathEscape, display_path, resolve_inside

FILE_NAME = "trigger_tests.yaml"


def load(eval_dir: Path, problems) -> dict | None:
    """The checked trigger tests of a suite folder; None when there is no file (or it is broken).

    Like every file a suite names, it must stay inside the suite's folder once links are
    resolved (a link to a file elsewhere once put that file's prompts into the results),
    and be a regular file (a FIFO is refused unread, not skipped)."""

    # deferred: waza_core.suite adds ~32.7 ms to importing this module
    from waza_core.suite import schema as schemas
    from waza_core.suite.problems import read_yaml

    file = eval_dir / FILE_NAME
    if not os.path.lexists(file):
        return None
    try:
        resolve_inside(eval_dir, FILE_NAME)
    except PathEscape as exc:
        problems.add(file, f"{exc}; keep {FILE_NAME} inside {display_path(eval_dir)}")
        return None
    before = len(problems.items)
    data, text = read_yaml(file, problems)
    if data is None:
        return None
    for err in schemas.plain_validator("trigger-tests").iter_errors(data):
        for path, key, message, category in schemas.classify(err, "trigger-tests"):
            if category == "unknown":
                problems.warn(file, f"{message}; ignored", text, path, key)
            else:
                problems.add(file, message, text, path, key)
    if len(problems.items) > before:
        return None
    positive = data.get("should_trigger_prompts") or []
    negative = data.get("should_not_trigger_prompts") or []
    if not positive and not negative:
        problems.add(file, "trigger tests must define at least one prompt (should_trigger_prompts or "
                     "should_not_trigger_prompts)", text, (), None)
        return None
    return {"file": str(file), "skill": str(data["skill"]),
            "should_trigger_prompts": [dict(p) for p in positive],
            "should_not_trigger_prompts": [dict(p) for p in negative]}
