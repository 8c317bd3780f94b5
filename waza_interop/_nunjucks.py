"""The part of Nunjucks (promptfoo's template engine) that renders exactly here.

promptfoo renders prompts, variable values and assertion values with Nunjucks
(autoescape off, undefined variables print nothing). This module renders templates made
of text and ``{{ name }}`` / ``{{ name.field }}`` / ``{{ name[0] }}`` / ``{{ name["key"] }}``
expressions with the filters ``safe``, ``trim``, ``dump``, ``default``, ``join``, ``length``
and ``upper``/``lower`` (ASCII text) taking literal arguments, and raises
:class:`Unrenderable` for everything else (other filters, tags, comments, whitespace
control, ``env``, expressions), so the importer refuses a template it cannot reproduce
instead of guessing. It also reproduces promptfoo's own steps around
Nunjucks: the ``{% raw %}`` wrapping of text with a partial tag, variables that
reference other variables (``resolveVariables``) and the undefined-variable check.
"""

from __future__ import annotations

import re

from waza_interop._js import NotJs, stringify, template_output, to_string

_OPEN = re.compile(r"\{\{|\{%|\{#")
_PATH = re.compile(r"\s*([A-Za-z_$][\w$]*)((?:\.[A-Za-z_$][\w$]*|\[\s*(?:\d+|\"[^\"\\]*\"|'[^'\\]*')\s*\])*)\s*")
_STEP = re.compile(r"\.([A-Za-z_$][\w$]*)|\[\s*(\d+|\"[^\"\\]*\"|'[^'\\]*')\s*\]")
# promptfoo's autoWrapRawIfPartialNunjucks: a tag opened and not closed on its line
_PARTIAL = re.compile(r"(\{%[^%]*$|\{\{[^}]*$|\{#[^#]*$)", re.MULTILINE)
_RAW = (re.compile(r"\{%\s*raw\s*%\}"), re.compile(r"\{%\s*endraw\s*%\}"))
# promptfoo's resolveVariables placeholder
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}", re.ASCII)
# promptfoo's extractVariablesFromTemplate
_VARIABLES = re.compile(r"\{\{[\s]*([^{}\s|]+)[\s]*(?:\|[^}]+)?\}\}|\{%[\s]*(?:if|for)[\s]+([^{}\s]+)[\s]*.*?%\}")
_ROOT = re.compile(r"^([A-Za-z_]\w*)", re.ASCII)
# JavaScript's \s, for the whitespace Nunjucks skips inside a tag
_JS_SPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"


class Unrenderable(ValueError):
    """A template outside the exact subset; ``offset`` is where, in the template."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def has_template(text: str) -> bool:
    return bool(_OPEN.search(text))


def render(template: str, variables: dict) -> str:
    """``nunjucks.renderString(template, variables)`` for the exact subset."""
    if not has_template(template):
        return template
    out: list[str] = []
    pos = 0
    for m in _OPEN.finditer(template):
        if m.start() < pos:
            continue
        out.append(template[pos:m.start()])
        if m.group() != "{{":
            kind = "a tag {% ... %}" if m.group() == "{%" else "a comment {# ... #}"
            raise Unrenderable(f"the template has {kind}, which is not rendered here", m.start())
        end = template.find("}}", m.end())
        if end < 0:
            raise Unrenderable("the template opens {{ without closing it", m.start())
        out.append(_expression(template[m.end():end], variables, m.start()))
        pos = end + 2
    out.append(template[pos:])
    return "".join(out)


def _expression(text: str, variables: dict, offset: int) -> str:
    if text.startswith("-") or text.endswith("-"):
        raise Unrenderable("whitespace control ({{- or -}}) is not rendered here", offset)
    if text.strip(_JS_SPACE) != text.strip():
        raise Unrenderable("unusual white space inside {{ }}", offset)
    path, _, filters = text.partition("|")
    m = _PATH.fullmatch(path)
    if not m:
        raise Unrenderable(f"the expression {{{{{text}}}}} is not a variable with filters (operators "
                           "and calls are not rendered here)", offset)
    name = m.group(1)
    if name == "env":
        raise Unrenderable("{{ env... }} reads the environment of the promptfoo process", offset)
    if name in ("true", "false", "null", "none", "True", "False", "None", "undefined"):
        raise Unrenderable(f"{{{{ {name} }}}} is a literal, not a variable", offset)
    value = variables.get(name, UNDEFINED)
    for step in _STEP.finditer(m.group(2)):
        value = _lookup(None if value is UNDEFINED else value, step, offset)
    if filters:
        value = apply_filters(value, "|" + filters, offset)
    try:
        return template_output(None if value is UNDEFINED else value)
    except NotJs as exc:
        raise Unrenderable(f"cannot print {{{{{text}}}}}: {exc}", offset) from None


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


#: a variable that does not exist (Nunjucks tells it from null in the default filter)
UNDEFINED = _Undefined()
_FILTER = re.compile(r"\s*\|\s*([A-Za-z_]\w*)\s*(?:\(([^()]*)\))?\s*")
_LITERAL = re.compile(r"\s*(?:\"([^\"\\]*)\"|'([^'\\]*)'|(-?\d+(?:\.\d+)?)|(true|false))\s*")


def apply_filters(value, text: str, offset: int):
    """The Nunjucks filters rendered exactly here: safe, trim, dump, default, upper and lower
    (ASCII text), join, length. Others are refused."""
    pos = 0
    while pos < len(text):
        m = _FILTER.match(text, pos)
        if not m:
            raise Unrenderable(f"cannot read the filters {text!r}", offset)
        pos = m.end()
        args = _arguments(m.group(2), offset) if m.group(2) is not None else []
        value = _filter(m.group(1), value, args, offset)
    return value


def _arguments(text: str, offset: int) -> list:
    if not text.strip():
        return []
    out = []
    pos = 0
    while True:
        m = _LITERAL.match(text, pos)
        if not m:
            raise Unrenderable(f"filter arguments other than literals ({text!r}) are not rendered here", offset)
        pos = m.end()
        dq, sq, num, boolean = m.groups()
        if dq is not None or sq is not None:
            out.append(dq if dq is not None else sq)
        elif num is not None:
            out.append(float(num) if "." in num else int(num))
        else:
            out.append(boolean == "true")
        if pos == len(text):
            return out
        if text[pos] != ",":
            raise Unrenderable(f"filter arguments other than literals ({text!r}) are not rendered here", offset)
        pos += 1


def _js_truthy(value) -> bool:
    if value is UNDEFINED or value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == value and value != 0
    if isinstance(value, str):
        return value != ""
    return True


def _filter(name: str, value, args: list, offset: int):
    def need(n: int) -> None:
        if len(args) > n:
            raise Unrenderable(f"the filter {name} takes at most {n} argument(s) here", offset)

    if name == "default":
        if not 1 <= len(args) <= 2:
            raise Unrenderable("default needs a literal value", offset)
        if len(args) == 2 and args[1] is True:
            return value if _js_truthy(value) else args[0]
        return args[0] if value is UNDEFINED else value
    if name == "safe":
        need(0)
        return "" if value is UNDEFINED or value is None else to_string(value)
    if name == "trim":
        need(0)
        if not isinstance(value, str):
            raise Unrenderable("trim of a value that is not text fails in Nunjucks", offset)
        return value.strip(_JS_SPACE)
    if name == "dump":
        need(1)
        if value is UNDEFINED:
            return UNDEFINED
        spaces = args[0] if args else 0
        if not isinstance(spaces, int) or isinstance(spaces, bool) or not 0 <= spaces <= 10:
            raise Unrenderable("dump takes a number of spaces from 0 to 10 here", offset)
        return stringify(value, spaces)
    if name in ("upper", "lower"):
        need(0)
        text = "" if value is UNDEFINED or value is None or value is False else value
        if not isinstance(text, str) or not text.isascii():
            raise Unrenderable(f"{name} is rendered here for ASCII text only (JavaScript's case mapping)", offset)
        return text.upper() if name == "upper" else text.lower()
    if name == "join":
        need(1)
        if not isinstance(value, list) or any(isinstance(v, (dict, list)) for v in value):
            raise Unrenderable("join is rendered here for lists of plain values", offset)
        sep = args[0] if args else ""
        if not isinstance(sep, str):
            raise Unrenderable("join takes a text separator here", offset)
        return sep.join("" if v is None else to_string(v) for v in value)
    if name == "length":
        need(0)
        if isinstance(value, str) and all(ord(c) <= 0xFFFF for c in value):
            return len(value)
        if isinstance(value, (list, dict)):
            return len(value)
        if value is UNDEFINED or value is None or value is False:
            return 0
        raise Unrenderable("length of this value is not rendered here", offset)
    raise Unrenderable(f"the filter {name!r} is not rendered here", offset)


def _lookup(value, step: re.Match, offset: int):
    attr, index = step.group(1), step.group(2)
    if value is None:
        return None
    if attr is not None:
        key = attr
    elif index[0] in "\"'":
        key = index[1:-1]
    else:
        key = int(index)
    if isinstance(value, dict):
        if isinstance(key, int):
            key = str(key)
        return value.get(key)
    if isinstance(value, list):
        if isinstance(key, int):
            return value[key] if key < len(value) else None
        if key == "length":
            return len(value)
        raise Unrenderable(f"cannot look up {key!r} in a list", offset)
    if isinstance(value, str):
        if isinstance(key, int):
            return value[key] if key < len(value) and value.isascii() else None
        if key == "length" and value.isascii():
            return len(value)
    raise Unrenderable(f"cannot look up {key!r} in a {type(value).__name__} value", offset)


def wrap_raw_if_partial(text: str) -> bool:
    """Whether promptfoo wraps ``text`` in ``{% raw %}`` (a partial tag): then it is
    printed as it is, with no rendering at all."""
    return bool(_PARTIAL.search(text)) and not (_RAW[0].search(text) and _RAW[1].search(text))


def render_or_raw(text: str, variables: dict) -> str:
    """promptfoo's ``renderString(autoWrapRawIfPartialNunjucks(text), vars)``."""
    if wrap_raw_if_partial(text):
        if _RAW[0].search(text) or _RAW[1].search(text):
            raise Unrenderable("the text has {% raw %} or {% endraw %} inside a partial tag", 0)
        return text
    return render(text, variables)


def references_undefined(template: str, variables: dict) -> bool:
    """promptfoo's ``referencesUndefinedVariables``."""
    stripped = re.sub(r"\{#[\s\S]*?#\}", "", template)
    for m in _VARIABLES.finditer(stripped):
        name = m.group(1) or m.group(2)
        root = _ROOT.match(name or "")
        if root and root.group(1) != "env" and root.group(1) not in variables:
            return True
    return False


def resolve_variables(variables: dict) -> dict:
    """promptfoo's ``resolveVariables``: up to 5 passes, each replacing, in every string
    variable, the first ``{{ name }}`` whose variable is defined (JavaScript's
    ``String.prototype.replace`` with a string pattern, ``$`` patterns included)."""
    out = dict(variables)
    for _ in range(5):
        resolved = True
        for key in list(out):
            value = out[key]
            if not isinstance(value, str):
                continue
            m = _PLACEHOLDER.search(value)
            if not m:
                continue
            name = m.group(1)
            if name not in out:
                continue
            try:
                replacement = to_string(out[name])
            except NotJs as exc:
                raise Unrenderable(f"variable {key!r} references {name!r}: {exc}") from None
            out[key] = value[:m.start()] + _js_replacement(replacement, value, m) + value[m.end():]
            resolved = False
        if resolved:
            break
    return out


def _js_replacement(replacement: str, subject: str, m: re.Match) -> str:
    """The ``$$``, ``$&``, ``$``` and ``$'`` patterns of a JavaScript replacement string."""
    if "$" not in replacement:
        return replacement
    out = []
    i = 0
    while i < len(replacement):
        ch = replacement[i]
        nxt = replacement[i + 1] if i + 1 < len(replacement) else ""
        if ch == "$" and nxt == "$":
            out.append("$")
            i += 2
        elif ch == "$" and nxt == "&":
            out.append(m.group())
            i += 2
        elif ch == "$" and nxt == "`":
            out.append(subject[:m.start()])
            i += 2
        elif ch == "$" and nxt == "'":
            out.append(subject[m.end():])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)
