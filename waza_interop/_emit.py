"""A :class:`~waza_interop._pfconfig.SuiteModel` -> the files of a waza suite.

``eval.yaml`` (name, executor, the task glob, comments naming the source, the providers
and every approximation) and one ``tasks/NNNN-<id>.yaml`` per task, numbered in file
order. Every string is written double-quoted (:func:`waza_core.yaml_quote`), collections
in flow style, so any YAML 1.1 or 1.2 reader reads back exactly the same values.
"""

from __future__ import annotations

import math
import re

from waza_core import yaml_quote as quote

HEADER = "# Imported by `waza interop import-suite --dialect {dialect}` from {source}.\n"


def dump(value) -> str:
    """``value`` as one line of flow-style YAML."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("a non-finite number")
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(str(k))}: {dump(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"cannot write a {type(value).__name__}")


def comment(text: str) -> str:
    return "".join(f"# {line}\n" for line in " ".join(text.split("\n")).splitlines() or [""])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "suite"


def suite_files(model, dialect: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    providers = model.providers
    echo_only = bool(providers) and all(p == "echo" for p in providers)
    head = [HEADER.format(dialect=dialect, source=model.source)]
    if providers:
        head.append(comment(f"providers: {', '.join(providers)}"))
        if not echo_only:
            head.append(comment("promptfoo providers are not translated: choose an executor and model with "
                                "`waza run --executor NAME --model MODEL` (`--executor echo` answers with "
                                "the prompt, like promptfoo's echo provider)."))
    if model.notes:
        head.append(comment(f"APPROXIMATIONS ({len(model.notes)}), taken because of --approximate:"))
        head.extend(comment(f"- {n}") for n in model.notes)
    body = [
        f"name: {quote(_slug(model.name))}\n",
        f"description: {quote(model.description or 'Imported from ' + model.source)}\n",
        f"skill: {quote(_slug(model.name))}\n",
        "config:\n",
        "  trials_per_task: 1\n",
        f"  executor: {quote('echo' if echo_only else 'mock')}\n",
        f"  model: {quote(providers[0] if providers else 'echo')}\n",
        'tasks: ["tasks/*.yaml"]\n',
    ]
    files["eval.yaml"] = ("".join(head) + "".join(body)).encode("utf-8")
    width = max(4, len(str(len(model.tasks))))
    for n, task in enumerate(model.tasks, 1):
        lines = [comment(f"from {task.where}")]
        for note in task.notes:
            lines.append(comment(f"APPROXIMATION: {note}"))
        lines += [f"id: {quote(task.id)}\n", f"name: {quote(task.name)}\n", "inputs:\n",
                  f"  prompt: {quote(task.prompt)}\n"]
        if task.notes:
            lines.append("metadata:\n  interop:\n    approximations:\n")
            lines.extend(f"      - {quote(note)}\n" for note in task.notes)
        if task.graders:
            lines.append("graders:\n")
            for g in task.graders:
                lines.append(f"  - type: {quote(g['type'])}\n    name: {quote(g['name'])}\n")
                if "weight" in g:
                    lines.append(f"    weight: {dump(g['weight'])}\n")
                lines.append(f"    config: {dump(g['config'])}\n")
        else:  # waza refuses a task that nothing grades unless the suite says so (docs/suite-format.md)
            lines += [comment("no assertion in the source: this test passed whatever the output; so does this task"),
                      "allow_ungraded: true\n"]
        files[f"tasks/{n:0{width}d}-{task.id}.yaml"] = "".join(lines).encode("utf-8")
    return files
