"""A waza suite -> a promptfooconfig.yaml with the same verdicts, or refused.

Each task becomes one test with ``vars: {prompt: <the task's prompt>}`` under the one
prompt ``{{prompt}}``; the suite's global graders go to ``defaultTest.assert``. Only
graders with an exact promptfoo equivalent are written:

* text ``contains_cs`` / ``not_contains_cs`` -> ``contains`` / ``not-contains``;
* text ``regex_match`` / ``regex_not_match`` -> ``regex`` / ``not-regex`` (RE2 rewritten
  as a JavaScript pattern with the same matches, :mod:`waza_interop._re2js`);
* code graders in JavaScript -> ``javascript`` assertions ``Boolean(<expression>)``, when
  the expression uses nothing but ``output`` and the built-in objects both evaluators have.

Everything else is refused with ``file:line:col``: text ``contains`` (Go's lower-casing is
not JavaScript's), Python code, every other grader type, task files and follow-up
prompts, ``expected.*`` checks, trials other than 1, and text that promptfoo would
render as a template (``{{``, ``{%``, ``{#``) or trim (a prompt ending in a newline).
"""

from __future__ import annotations

from pathlib import Path

from waza_core import SuiteError
from waza_core import yaml_quote as quote
from waza_core.plugins import get_registry
from waza_core.suite.load import load_suite
from waza_interop._jsassert import unknown_names
from waza_interop._jsregex import NotRe2
from waza_interop._re2js import to_js

_MARKERS = ("{{", "{%", "{#", "}}")


def export(eval_file: Path) -> bytes:
    suite = load_suite(eval_file, get_registry([]))
    problems: list[str] = []
    if suite.config.trials_per_task != 1:
        problems.append(f"{suite.file}: trials_per_task is {suite.config.trials_per_task}; promptfoo runs "
                        "each test once")
    default = [a for g in suite.graders for a in _assertions(g, problems)]
    tests = []
    for task in suite.tasks:
        where = f"{task.filename}:1:1"
        if task.follow_up_prompts or task.files or task.checkpoints or task.raw.get("expected"):
            problems.append(f"{where}: task {task.id!r} has follow-up prompts, files, checkpoints or "
                            "expected.* checks, which a promptfoo test cannot hold")
            continue
        marker = next((m for m in _MARKERS if m in task.prompt), None)
        if marker:
            problems.append(f"{where}: the prompt of {task.id!r} contains {marker!r}, which promptfoo "
                            "would render as a template")
            continue
        if task.prompt.endswith("\n"):
            problems.append(f"{where}: the prompt of {task.id!r} ends with a newline, which promptfoo "
                            "strips from variables")
            continue
        asserts = [a for g in task.graders for a in _assertions(g, problems)]
        tests.append((task, asserts))
    if problems:
        raise SuiteError(problems)
    lines = [f"# Exported by `waza interop export-suite` from {suite.file.name} ({suite.name}).\n",
             "# The echo provider answers with the prompt; replace it with yours.\n",
             f"description: {quote(suite.description or suite.name)}\n",
             'prompts: ["{{prompt}}"]\n', 'providers: ["echo"]\n']
    if default:
        lines.append("defaultTest:\n  assert:\n")
        lines.extend(_emit(a, "    ") for a in default)
    lines.append("tests:\n")
    for task, asserts in tests:
        lines.append(f"  - description: {quote(task.id)}\n    vars:\n      prompt: {quote(task.prompt)}\n")
        if asserts:
            lines.append("    assert:\n")
            lines.extend(_emit(a, "      ") for a in asserts)
    return "".join(lines).encode("utf-8")


def _emit(a: dict, pad: str) -> str:
    out = f"{pad}- type: {quote(a['type'])}\n{pad}  value: {quote(a['value'])}\n"
    if a.get("weight"):
        out += f"{pad}  weight: {a['weight']!r}\n"
    if a.get("metric"):
        out += f"{pad}  metric: {quote(a['metric'])}\n"
    return out


def _assertions(spec, problems: list[str]) -> list[dict]:
    where = spec.where or "?"
    out: list[dict] = []
    weight = spec.weight if spec.weight and spec.weight > 0 and spec.weight != 1 else None
    if spec.type == "text":
        for key, values in spec.config.items():
            for value in values:
                item = _text(key, value, where, problems)
                if item:
                    out.append(item)
    elif spec.type == "code":
        language = spec.config.get("language", "python")
        if language != "javascript":
            problems.append(f"{where}: grader {spec.name!r}: Python code assertions have no promptfoo "
                            "equivalent with the same context")
            return []
        for expr in spec.config.get("assertions", ()):
            names = unknown_names(expr)
            if names:
                problems.append(f"{where}: grader {spec.name!r}: the assertion {expr[:60]!r} uses "
                                f"{', '.join(sorted(names)[:5])}, which promptfoo's javascript assertion does not "
                                "define as waza does")
                continue
            if any(m in expr for m in _MARKERS):
                problems.append(f"{where}: grader {spec.name!r}: the assertion contains a template marker")
                continue
            # one line: promptfoo adds the return; several: the value is the function body
            value = f"Boolean({expr})" if "\n" not in expr else f"return Boolean(\n{expr}\n);"
            out.append({"type": "javascript", "value": value})
    else:
        problems.append(f"{where}: grader {spec.name!r} has type {spec.type!r}, which has no exact promptfoo "
                        "equivalent")
        return []
    for a in out:
        a["metric"] = spec.name
        if weight:
            a["weight"] = weight
    return out


def _text(key: str, value: str, where: str, problems: list[str]) -> dict | None:
    if any(m in value for m in _MARKERS):
        problems.append(f"{where}: {key} value {value[:60]!r} contains a template marker promptfoo would render")
        return None
    if key in ("contains_cs", "not_contains_cs"):
        if value == "":
            problems.append(f"{where}: an empty {key} value (promptfoo reports an error for it)")
            return None
        return {"type": "contains" if key == "contains_cs" else "not-contains", "value": value}
    if key in ("regex_match", "regex_not_match"):
        try:
            pattern = to_js(value)
        except NotRe2 as exc:
            problems.append(f"{where}: the RE2 pattern {value!r} has no JavaScript equivalent: {exc}")
            return None
        if pattern == "":
            problems.append(f"{where}: an empty pattern (promptfoo reports an error for it)")
            return None
        return {"type": "regex" if key == "regex_match" else "not-regex", "value": pattern}
    problems.append(f"{where}: text {key} compares after Go's lower-casing, which is not JavaScript's "
                    "toLowerCase for every text; no exact promptfoo equivalent")
    return None
