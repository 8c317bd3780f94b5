"""The ``agentv-68df6d22…-contains-v1`` dialect: one AgentV ``contains`` assertion <-> one
native ``text`` grader with a single ``contains_cs`` check.

Why only this much: AgentV's ``contains`` is a case-sensitive substring test scored 0 or
1, which is exactly a native text grader with one ``contains_cs`` entry. Anything else
on the assertion (weight, required, negate, min_score, other types) changes the result
at AgentV's test level, and several native checks give fractional scores, so those
fail instead of being translated approximately. Only the selected assertion is read:
task inputs, providers, fixtures, sibling assertions, thresholds, suite metadata and
execution settings are neither converted nor validated.
"""

from __future__ import annotations

import hashlib

from waza_core import (
    Conversion,
    Dialect,
    InteropError,
    StrictYamlError,
    describe_yaml_type,
    find_template_marker,
    hookimpl,
    load_strict_yaml,
)
from waza_core import quote_for_message as show
from waza_core import yaml_quote as quote

ADAPTER_ID = "agentv-68df6d2206cea61f721d0445b405efcb5e94aff0-contains-v1"
DEFAULT_METRIC = "agentv-contains"
NOTICE = ("ASSERTION-ONLY PROJECTION: task inputs, providers, fixtures, sibling assertions, "
          "thresholds, suite metadata and execution settings are not converted or validated.")
ASSERTION_KEYS = ("type", "value", "metric")
OTHER_LISTS = ("assertions", "evaluators")  # other AgentV versions read these instead of `assert`


class AgentVContains(Dialect):
    name = ADAPTER_ID
    summary = "AgentV case-sensitive `contains` assertion <-> native text grader with one contains_cs check"

    # ---- import -------------------------------------------------------------------
    def import_assertion(self, source: bytes, test: str, position: int) -> Conversion:
        doc = _load(source)
        test_path, test_map = _select_test(doc, test)
        item_path, item = _select_assertion(doc, test_path, test_map, test, position)
        where = f"assertion {position} of test {show(test)}"

        extra = [k for k in item if k not in ASSERTION_KEYS]
        if extra:
            raise _err(doc, item_path + (extra[0],), f"{where} has unsupported field(s) "
                       f"{', '.join(show(k) for k in extra)}; only type, value and metric can be "
                       "converted without changing the result, so nothing was converted", key=True)
        if "type" not in item:
            raise _err(doc, item_path, f"{where} has no type; only type: contains is supported")
        kind = item["type"]
        if kind != "contains":
            shown = show(kind) if isinstance(kind, str) else _describe(kind)
            raise _err(doc, item_path + ("type",), f"{where} has type {shown}; only type: contains "
                       "(case-sensitive substring) is supported")
        value = _string(doc, item_path, item, "value", where, required=True)
        metric = _string(doc, item_path, item, "metric", where, required=False)
        if metric is not None and not metric.strip():
            raise _err(doc, item_path + ("metric",), f"{where}: metric is blank")
        name = DEFAULT_METRIC if metric is None else metric

        digest = hashlib.sha256(source).hexdigest()
        text = (
            "# waza interop import: ASSERTION-ONLY PROJECTION of one AgentV assertion;\n"
            "# place this mapping in a native eval's graders list.\n"
            f"# adapter: {ADAPTER_ID}\n"
            f"# source-sha256: {digest} (advisory, unverified)\n"
            f"# selected: test {quote(test)}, assertion {position}\n"
            f"name: {quote(name)}\n"
            'type: "text"\n'
            "config:\n"
            "  contains_cs:\n"
            f"    - {quote(value)}\n"
        )
        _verify(text, {"name": name, "type": "text", "config": {"contains_cs": [value]}})
        return Conversion(text.encode("utf-8"), NOTICE)

    # ---- export -------------------------------------------------------------------
    def export_grader(self, source: bytes) -> Conversion:
        doc = _load(source)
        root = doc.data
        if not isinstance(root, dict):
            raise _err(doc, (), f"expected one native grader mapping (name, type, config), "
                       f"found {_describe(root)}")
        extra = [k for k in root if k not in ("name", "type", "config")]
        if extra:
            raise _err(doc, (extra[0],), f"the grader has unsupported field(s) "
                       f"{', '.join(show(k) for k in extra)}; export needs exactly name, type and config",
                       key=True)
        for key in ("name", "type", "config"):
            if key not in root:
                raise _err(doc, (), f"the grader has no {key}; export needs exactly name, type and config")
        if root["type"] != "text":
            kind = root["type"]
            shown = show(kind) if isinstance(kind, str) else _describe(kind)
            raise _err(doc, ("type",), f"the grader has type {shown}; only type: text can be exported")
        name = _string(doc, (), root, "name", "the grader", required=True)
        if not name.strip():
            raise _err(doc, ("name",), "the grader's name is blank")

        config = root["config"]
        if not isinstance(config, dict):
            raise _err(doc, ("config",), f"config must be a mapping, found {_describe(config)}")
        others = [k for k in config if k != "contains_cs"]
        if others:
            raise _err(doc, ("config", others[0]), f"config has check(s) other than contains_cs "
                       f"({', '.join(show(k) for k in others)}); one AgentV contains assertion holds "
                       "exactly one case-sensitive substring", key=True)
        if "contains_cs" not in config:
            raise _err(doc, ("config",), "config has no contains_cs list")
        checks = config["contains_cs"]
        if not isinstance(checks, list):
            raise _err(doc, ("config", "contains_cs"),
                       f"contains_cs must be a list of one string, found {_describe(checks)}")
        if len(checks) != 1:
            raise _err(doc, ("config", "contains_cs"),
                       f"contains_cs has {len(checks)} entries; export needs exactly one, because "
                       "several checks score fractions that one AgentV assertion cannot express")
        value = _string(doc, ("config", "contains_cs"), {0: checks[0]}, 0, "contains_cs", required=True)

        digest = hashlib.sha256(source).hexdigest()
        text = (
            "# waza interop export: one AgentV assertion for a test's assert list (not a suite).\n"
            f"# adapter: {ADAPTER_ID}\n"
            f"# source-sha256: {digest} (advisory, unverified)\n"
            'type: "contains"\n'
            f"value: {quote(value)}\n"
            f"metric: {quote(name)}\n"
        )
        _verify(text, {"type": "contains", "value": value, "metric": name})
        return Conversion(text.encode("utf-8"))


# ---- selection --------------------------------------------------------------------
def _select_test(doc, test: str):
    root = doc.data
    if not isinstance(root, dict):
        raise _err(doc, (), f"expected an AgentV suite (a mapping with tests), found {_describe(root)}")
    if "tests" not in root:
        raise _err(doc, (), "the suite has no tests list")
    tests = root["tests"]
    if isinstance(tests, str):
        raise _err(doc, ("tests",), "tests is a string (a reference to other files); referenced files "
                   "are never read, so write the test inline")
    if not isinstance(tests, list):
        raise _err(doc, ("tests",), f"tests must be a list, found {_describe(tests)}")
    hits = [i for i, t in enumerate(tests) if isinstance(t, dict) and t.get("id") == test]
    if not hits:
        ids = [t["id"] for t in tests if isinstance(t, dict) and isinstance(t.get("id"), str)]
        known = ", ".join(show(i, 30) for i in ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise _err(doc, ("tests",), f"no test has id {show(test)}" + (f" (ids: {known})" if ids else ""))
    if len(hits) > 1:
        lines = ", ".join(str((doc.position(("tests", i)) or ("?",))[0]) for i in hits)
        raise _err(doc, ("tests", hits[1]), f"{len(hits)} tests have id {show(test)} (lines {lines}); "
                   "the selection is ambiguous")
    return ("tests", hits[0]), tests[hits[0]]


def _select_assertion(doc, test_path, test_map, test: str, position: int):
    others = [k for k in OTHER_LISTS if k in test_map]
    if "assert" not in test_map:
        extra = f" (it has {show(others[0])}, which this dialect does not read)" if others else ""
        raise _err(doc, test_path, f"test {show(test)} has no assert list{extra}")
    if others:
        raise _err(doc, test_path + (others[0],), f"test {show(test)} has both assert and {others[0]}; "
                   "AgentV versions disagree on which list counts, so the position is ambiguous", key=True)
    items = test_map["assert"]
    if not isinstance(items, list):
        raise _err(doc, test_path + ("assert",), f"assert of test {show(test)} must be a list, "
                   f"found {_describe(items)}")
    if position > len(items):
        raise _err(doc, test_path + ("assert",), f"assertion {position} is past the end: test "
                   f"{show(test)} has {len(items)} assertion(s)")
    path = test_path + ("assert", position - 1)
    item = items[position - 1]
    if isinstance(item, str):
        raise _err(doc, path, f"assertion {position} of test {show(test)} is a string criterion "
                   "(an LLM rubric), not a contains assertion")
    if isinstance(item, dict) and set(item) == {"include"}:
        raise _err(doc, path, f"assertion {position} of test {show(test)} includes another file; "
                   "referenced files are never read")
    if not isinstance(item, dict):
        raise _err(doc, path, f"assertion {position} of test {show(test)} must be a mapping, "
                   f"found {_describe(item)}")
    return path, item


# ---- helpers ----------------------------------------------------------------------
def _load(source: bytes):

    return load_strict_yaml(source)


def _string(doc, base: tuple, mapping: dict, key, where: str, required: bool) -> str | None:
    """A selected string: present when required, a string, not empty, no template marker."""
    path = base + (key,)
    label = f"{where} {key}" if isinstance(key, str) else f"{where} entry"
    if key not in mapping:
        if required:
            raise _err(doc, base, f"{where} has no {key}")
        return None
    value = mapping[key]
    if not isinstance(value, str):
        raise _err(doc, path, f"{label} must be a string, found {_describe(value)}; "
                   "quote it to keep it as text")
    if value == "":
        raise _err(doc, path, f"{label} is empty")
    marker = find_template_marker(value)
    if marker:
        raise _err(doc, path, f"{label} contains {quote(marker)}, which AgentV would interpolate "
                   "instead of reading literally")
    return value


def _describe(value) -> str:

    return describe_yaml_type(value)


def _err(doc, path: tuple, message: str, key: bool = False) -> InteropError:

    pos = doc.position(path, key=key) or doc.position(path)
    line, col = pos if pos else (None, None)
    err = StrictYamlError(message, line, col)
    return InteropError(str(err))


def _verify(text: str, expected: dict) -> None:
    """Read the output back with the strict loader: it must mean exactly ``expected``."""

    try:
        back = load_strict_yaml(text.encode("utf-8"), source="<output>").data
    except StrictYamlError as exc:  # pragma: no cover - a bug in the emitter
        raise InteropError(f"internal error: the output does not read back ({exc}); "
                           "please report it") from None
    if back != expected:  # pragma: no cover - a bug in the emitter
        raise InteropError("internal error: the output reads back differently; please report it")


@hookimpl
def waza_register_interop_dialects(register):
    register(AgentVContains)
