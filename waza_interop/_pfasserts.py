"""One promptfoo (or AgentV) assertion -> waza graders, exactly or not at all.

A promptfoo test passes when every assertion passes (no ``threshold``); a waza task
passes when every grader passes. So a test maps exactly when each assertion becomes
graders that pass on exactly the outputs where the assertion passes. :func:`map_assertion`
returns those graders, or a :class:`Refusal` that says why the verdict could differ.
With ``approximate``, a refusal that has a close translation returns it and a note
instead (recorded in the suite and printed by the CLI).

The exact table (the value is rendered with the test's variables first, as promptfoo
does; ``not-X`` is the negation of ``X``):

=====================  ==========================================================
contains               text ``contains_cs`` (``not_contains_cs``)
contains-all           text ``contains_cs`` list (``not-``: code, JavaScript)
contains-any           text ``regex_match`` of the quoted alternatives
starts-with / equals   text ``regex_match`` ``\\A<quoted>`` / ``\\A<quoted>\\z``
regex                  text ``regex_match`` (JavaScript pattern translated to RE2)
icontains[-any|-all]   code (JavaScript): ``toLowerCase`` exactly as promptfoo
is-json (no schema)    code (JavaScript): ``JSON.parse`` exactly as promptfoo
assert-set             its assertions, flattened (no threshold)
=====================  ==========================================================
"""

from __future__ import annotations

import json
import math

import attrs

from waza_interop import _jsassert, _jsregex
from waza_interop._csvsplit import split_values
from waza_interop._js import NotJs, to_string
from waza_interop._nunjucks import Unrenderable, render

LLM_JUDGED = {"llm-rubric", "g-eval", "factuality", "model-graded-closedqa", "model-graded-factuality",
              "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
              "conversation-relevance", "pi", "select-best", "max-score", "search-rubric",
              "is-refusal", "moderation", "classifier", "guardrails", "llm-grader", "agent-rubric",
              "trajectory:goal-success"}

#: why the other types have no exact translation (docs/interop.md repeats this table)
NO_EXACT = {
    "javascript": "runs JavaScript code against the output (a function body, a score or a grading result)",
    "python": "runs Python code with promptfoo's (output, context) interface",
    "ruby": "runs Ruby code", "webhook": "calls a web service",
    "similar": "compares embeddings from a model", "levenshtein": "an edit-distance threshold",
    "rouge-n": "an n-gram score threshold", "bleu": "an n-gram score threshold",
    "gleu": "an n-gram score threshold", "meteor": "an n-gram score threshold",
    "latency": "the provider call's latency", "cost": "the provider call's cost",
    "perplexity": "token log-probabilities", "perplexity-score": "token log-probabilities",
    "finish-reason": "the provider's finish reason", "contains-json": "extracts JSON from the output",
    "is-html": "an HTML parser", "contains-html": "an HTML parser", "is-sql": "an SQL parser",
    "contains-sql": "an SQL parser", "is-xml": "an XML parser", "contains-xml": "an XML parser",
    "word-count": "promptfoo's word splitting", "is-valid-function-call": "the provider's tool schema",
    "is-valid-openai-function-call": "the provider's tool schema",
    "is-valid-openai-tools-call": "the provider's tool schema", "tool-call-f1": "a tool-call F1 score",
    "skill-used": "the agent's skill events, which a promptfoo provider reports differently",
    "trace-span-count": "OpenTelemetry spans", "trace-span-duration": "OpenTelemetry spans",
    "trace-error-spans": "OpenTelemetry spans",
}


@attrs.frozen
class Refusal:
    where: str  # file:line:col inside the assertion
    message: str


@attrs.define
class Mapped:
    graders: list[dict]
    notes: list[str] = attrs.field(factory=list)  # approximations taken


def js_literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)


def code_grader(expression: str) -> dict:
    return {"type": "code", "config": {"language": "javascript", "assertions": [expression]}}


def text_grader(key: str, values: list[str]) -> dict:
    return {"type": "text", "config": {key: values}}


def map_assertion(item, where, variables: dict, approximate: bool, label: str) -> Mapped | Refusal:
    """``item`` is the assertion mapping; ``where(path, key=False)`` gives ``file:line:col``
    of a node inside it; ``variables`` are the test's resolved variables."""
    if not isinstance(item, dict):
        return Refusal(where(()), f"{label} must be a mapping with a type")
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        return Refusal(where(("type",) if "type" in item else ()), f"{label} has no type")
    for key in ("transform", "contextTransform"):
        if key in item:
            return _refuse_or(approximate, where((key,), True),
                              f"{label} has {key}: promptfoo grades a transformed output, waza the output itself",
                              lambda key=key: _strip(item, key, where, variables, label))
    weight = item.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
        return Refusal(where(("weight",)), f"{label}: weight must be a number")
    if weight == 0:
        return _refuse_or(approximate, where(("weight",)),
                          f"{label} has weight: 0, which promptfoo counts as always passing; waza has no "
                          "always-passing grader (a weight of 0 means 1 there)",
                          lambda: Mapped([], [f"{label}: weight 0 (always passes in promptfoo): left out"]))
    inverse = kind.startswith("not-")
    base = kind[4:] if inverse else kind
    if base == "assert-set":
        return Refusal(where(("type",)), f"{label}: assert-set is flattened by the caller")  # pragma: no cover
    handler = _EXACT.get(base)
    if handler is None:
        reason = "an LLM judges it" if base in LLM_JUDGED else NO_EXACT.get(base, "waza has no grader with "
                                                                              "the same verdicts")
        return _refuse_or(approximate, where(("type",)),
                          f"{label} has type {kind!r}, which has no exact waza equivalent: {reason}",
                          lambda: _approximate_other(item, base, inverse, where, variables, label))
    value = item.get("value")
    try:
        value = _render_value(value, variables)
    except Unrenderable as exc:
        return Refusal(where(("value",)), f"{label}: the value is a template that cannot be rendered "
                       f"exactly: {exc}")
    except NotJs as exc:
        return Refusal(where(("value",)), f"{label}: {exc}")
    if isinstance(value, str) and value.startswith("file://"):
        return Refusal(where(("value",)), f"{label}: the value is read from a file (file://); inline it")
    result = handler(value, inverse, item.get("threshold")) if base == "javascript" else handler(value, inverse)
    if isinstance(result, str):
        return _refuse_or(approximate, where(("value",) if "value" in item else ("type",)),
                          f"{label} ({kind}): {result}",
                          lambda: _approximate_other(item, base, inverse, where, variables, label))
    if weight > 0 and weight != 1:
        for g in result:
            g["weight"] = weight
    return Mapped(result)


def _render_value(value, variables):
    if isinstance(value, str):
        return render(value, variables)
    if isinstance(value, list):
        return [render(v, variables) if isinstance(v, str) else v for v in value]
    return value


def _refuse_or(approximate: bool, where: str, message: str, approx):
    if not approximate:
        return Refusal(where, message)
    result = approx()
    if isinstance(result, Mapped):  # one note per approximation: where, why, and what was done
        result.notes[:] = [f"{where}: {message}; " + "; ".join(_without_label(n) for n in result.notes)]
    return result


def _without_label(note: str) -> str:
    return note.split(": ", 1)[1] if note.startswith("assertion ") and ": " in note else note


def _strip(item, key, where, variables, label):
    rest = {k: v for k, v in item.items() if k != key}
    result = map_assertion(rest, where, variables, True, label)
    if isinstance(result, Mapped):
        result.notes.append(f"{label}: {key} dropped; the output is graded untransformed")
    return result


def _approximate_other(item, base, inverse, where, variables, label) -> Mapped | Refusal:
    value = item.get("value")
    if base == "javascript" and isinstance(value, str) and not value.startswith("file://"):
        body = value if "\n" in value else f"return {value}"
        expr = f"(function () {{ const r = (function () {{ {body} }})(); " \
               "return typeof r === 'object' && r !== null ? !!r.pass : (typeof r === 'number' ? r > 0 : !!r); })()"
        if inverse:
            expr = f"!{expr}"
        return Mapped([code_grader(expr)], [f"{label}: javascript evaluated as a waza code assertion "
                                            "(pass = truthy result, a number passes when > 0; no context)"])
    if base in LLM_JUDGED and isinstance(value, str) and value.strip():
        return Mapped([{"type": "prompt", "config": {"prompt": value}}],
                      [f"{label}: {base} judged by waza's prompt grader (binary verdict from the judge, "
                       "no score threshold)"])
    if base == "is-json":
        schema = value if isinstance(value, dict) else None
        if schema is not None:
            return Mapped([{"type": "json_schema", "config": {"schema": schema}}],
                          [f"{label}: is-json schema checked by waza's json_schema grader (its JSON Schema "
                           "draft, not ajv's)"])
    return Mapped([], [f"{label}: type {base!r} has no waza equivalent: left out"])


# ---- the exact handlers: (rendered value, inverse) -> graders, or a reason ---------------
def _contains_value(value) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return to_string(value)
    return None


def _contains(value, inverse):
    text = _contains_value(value)
    if text is None:
        return "needs a non-empty string or number value (promptfoo reports an error otherwise)"
    return [text_grader("not_contains_cs" if inverse else "contains_cs", [text])]


def _icontains(value, inverse):
    text = _contains_value(value)
    if text is None:
        return "needs a non-empty string or number value (promptfoo reports an error otherwise)"
    expr = f"output.toLowerCase().includes({js_literal(text)}.toLowerCase())"
    return [code_grader(f"!({expr})" if inverse else expr)]


def _list_value(value):
    if isinstance(value, str):
        try:
            value = split_values(value)
        except ValueError as exc:
            return f"{exc} (promptfoo reports an error)"
    if not value or not isinstance(value, list):
        return "needs a non-empty list (or comma-separated string) value"
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            return "every entry must be a string or a number"
        out.append(to_string(v))
    return out


def _contains_all(value, inverse):
    values = _list_value(value)
    if isinstance(values, str):
        return values
    if not inverse:
        return [text_grader("contains_cs", values)]
    return [code_grader(f"!{js_literal_list(values)}.every((v) => output.includes(v))")]


def _contains_any(value, inverse):
    values = _list_value(value)
    if isinstance(values, str):
        return values
    pattern = "(?:" + "|".join(_jsregex.quote(v) for v in values) + ")"
    return [text_grader("regex_not_match" if inverse else "regex_match", [pattern])]


def _icontains_list(every: bool):
    def handler(value, inverse):
        values = _list_value(value)
        if isinstance(values, str):
            return values
        method = "every" if every else "some"
        expr = f"{js_literal_list(values)}.{method}((v) => output.toLowerCase().includes(v.toLowerCase()))"
        return [code_grader(f"!{expr}" if inverse else expr)]
    return handler


def js_literal_list(values: list[str]) -> str:
    return "[" + ", ".join(js_literal(v) for v in values) + "]"


def _starts_with(value, inverse):
    if not isinstance(value, str) or not value:
        return "needs a non-empty string value (promptfoo reports an error otherwise)"
    return [text_grader("regex_not_match" if inverse else "regex_match", ["\\A" + _jsregex.quote(value)])]


def _equals(value, inverse):
    if isinstance(value, (dict, list)):
        return "an object or list value is compared with the output parsed as JSON (deep equality)"
    if value is None:
        return "needs a value"
    try:
        text = to_string(value)
    except NotJs as exc:
        return str(exc)
    return [text_grader("regex_not_match" if inverse else "regex_match", ["\\A" + _jsregex.quote(text) + "\\z"])]


def _regex(value, inverse):
    if not isinstance(value, str) or not value:
        return "needs a non-empty string pattern (promptfoo reports an error otherwise)"
    try:
        pattern = _jsregex.translate(value)
    except _jsregex.NotRe2 as exc:
        return f"the JavaScript pattern {value!r} has no RE2 translation with the same matches: {exc}"
    return [text_grader("regex_not_match" if inverse else "regex_match", [pattern])]


IS_JSON = "(() => { try { JSON.parse(output); return true; } catch (e) { return false; } })()"


def _is_json(value, inverse):
    falsy = value is None or value is False or value == "" or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and (value == 0 or math.isnan(value)))
    if not falsy and value != {}:  # promptfoo checks a schema only for a truthy value; {} accepts all
        return "a JSON schema is checked with ajv, whose drafts and formats differ from waza's json_schema"
    return [code_grader(f"!{IS_JSON}" if inverse else IS_JSON)]


def _javascript(value, inverse, threshold=None):
    if not isinstance(value, str) or not value.strip():
        return "needs JavaScript code as a string value"
    result = _jsassert.translate(value, inverse, threshold)
    if result.startswith("!"):
        return result[1:]
    return [code_grader(result)]


_EXACT = {
    "javascript": _javascript,
    "contains": _contains, "icontains": _icontains, "contains-all": _contains_all,
    "contains-any": _contains_any, "icontains-any": _icontains_list(False),
    "icontains-all": _icontains_list(True), "starts-with": _starts_with, "equals": _equals,
    "regex": _regex, "is-json": _is_json,
}
