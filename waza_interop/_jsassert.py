"""promptfoo ``javascript`` assertions -> one waza ``code`` assertion in JavaScript, exactly.

promptfoo runs the value as the body of ``new Function("output", "context", "process",
body)`` (a one-line value becomes ``return <value>``), then decides: a boolean is the
verdict, a number passes above 0 (or at ``threshold`` and above), a GradingResult object
passes on its ``pass``, anything else or an exception fails; ``not-javascript`` inverts
the first three. waza's code grader evaluates a JavaScript expression in node with
``output`` and a fixed set of JavaScript's built-in objects, so the same code, wrapped in
an expression that applies promptfoo's rules, gives the same verdict on every output.

Exact only when the code uses nothing waza's evaluator lacks: the check below allows
``output``, the built-ins both define, JavaScript keywords and names the code declares
itself (``const``/``let``/``var``, parameters, ``catch``), and refuses ``context``,
``process``, ``require``, timers, ``Date``, ``await`` and every other name (a name in a
comment or a regular expression literal is refused too: the check errs on the safe side).
"""

from __future__ import annotations

import json
import re

from waza_interop._js import number_to_string

BUILTINS = {"output", "Array", "Object", "String", "Number", "Boolean", "Math", "JSON", "RegExp", "parseInt",
            "parseFloat", "isNaN", "isFinite", "undefined", "NaN", "Infinity"}
KEYWORDS = {"true", "false", "null", "typeof", "instanceof", "new", "in", "of", "void", "delete", "try", "catch",
            "finally", "return", "if", "else", "function", "const", "let", "var", "for", "while", "do", "break",
            "continue", "switch", "case", "default", "throw"}
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_TEMPLATE = re.compile(r"`(?:[^`\\]|\\.)*`", re.S)
_PLACEHOLDER = re.compile(r"\$\{([^{}`]*)\}")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_IDENT = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)")
_DECLARED = re.compile(r"\b(?:const|let|var|function)\s+([A-Za-z_$][\w$]*)")
_PARAMS = re.compile(r"\(([^()]*)\)\s*(?:=>|\{)|([A-Za-z_$][\w$]*)\s*=>")
_CATCH = re.compile(r"catch\s*\(\s*([A-Za-z_$][\w$]*)\s*\)")
_OBJECT_KEY = re.compile(r"(?<=[{,])\s*([A-Za-z_$][\w$]*)\s*:")
_DESTRUCTURE = re.compile(r"\b(?:const|let|var)\s*[{\[]([^}\]]*)[}\]]")
IS_GRADING_RESULT = (
    "typeof r === 'object' && r !== null && typeof r.pass === 'boolean' && typeof r.score === 'number' && "
    "typeof r.reason === 'string' && (typeof r.namedScores === 'undefined' || typeof r.namedScores === 'object') "
    "&& (typeof r.namedScoreWeights === 'undefined' || typeof r.namedScoreWeights === 'object') && "
    "(typeof r.tokensUsed === 'undefined' || typeof r.tokensUsed === 'object') && "
    "(typeof r.componentResults === 'undefined' || Array.isArray(r.componentResults)) && "
    "(typeof r.assertion === 'undefined' || r.assertion === null || typeof r.assertion === 'object') && "
    "(typeof r.comment === 'undefined' || typeof r.comment === 'string')")


def unknown_names(code: str) -> set[str]:
    """Names ``code`` uses that waza's evaluator would not define the way promptfoo does."""
    text = _STRING.sub('""', code)
    text = _TEMPLATE.sub(lambda m: "(" + ",".join(_PLACEHOLDER.findall(m.group())) + ")", text)
    text = _COMMENT.sub(" ", text)
    declared = set(_DECLARED.findall(text)) | set(_CATCH.findall(text))
    for m in _PARAMS.finditer(text):
        for part in (m.group(1) or m.group(2) or "").split(","):
            name = part.strip().split("=")[0].strip()
            if re.fullmatch(r"[A-Za-z_$][\w$]*", name):
                declared.add(name)
    for m in _DESTRUCTURE.finditer(text):
        declared.update(p.strip().split(":")[-1].strip() for p in m.group(1).split(",") if p.strip())
    keys = set(_OBJECT_KEY.findall(text))
    used = set(_IDENT.findall(_OBJECT_KEY.sub(lambda m: m.group(0).replace(m.group(1), " " * len(m.group(1))),
                                              text)))
    return used - BUILTINS - KEYWORDS - declared - (keys - used)


def body_of(value: str) -> str | None:
    """promptfoo's function body for ``value`` (after ``trimEnd``), or None for the
    ``const x = ...; expr`` one-line form (its statement splitting is not reproduced)."""
    value = value.rstrip()
    if "\n" in value:
        return value
    trimmed = re.sub(r";+\s*$", "", value.strip())
    if re.match(r"(const|let|var)\s", trimmed):
        return None
    return f"return {trimmed}"


def translate(value: str, inverse: bool, threshold) -> str | str:
    """The waza expression, or a reason (starting with ``!``) why there is none."""
    body = body_of(value)
    if body is None:
        return "!a one-line value that starts with a declaration is split into statements by promptfoo"
    names = unknown_names(body)
    if names:
        shown = ", ".join(sorted(names)[:5])
        return (f"!the code uses {shown}, which waza's JavaScript evaluator does not provide as promptfoo "
                "does (it has output and JavaScript's built-in objects)")
    if "`" in body and "${" in body and _TEMPLATE.sub("", body).count("`"):
        return "!nested template literals"
    inv = "true" if inverse else "false"
    if threshold is None:
        number = "r > 0"
    elif isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
        number = f"r >= {number_to_string(threshold)}"
    else:
        return "!the threshold is not a number"
    return ("(() => { let r; try { r = (function () {\n" + body + "\n})(); } catch (e) { return false; } "
            f"if (typeof r === 'boolean') return r !== {inv}; "
            f"if (typeof r === 'number') return ({number}) !== {inv}; "
            f"if ({IS_GRADING_RESULT}) return r.pass !== {inv}; "
            "return false; })()")


def literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)
