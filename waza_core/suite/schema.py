"""JSON Schemas shipped with waza, composed with what the plugins register.

The base schemas live in ``waza_core/schemas/*.schema.json``. The eval and task
schemas are completed at run time: each registered grader's ``config_schema`` is
attached to ``graders[].config`` for its ``type``, and each executor's
``config_schema`` to ``config.<config_key>``. Validators are built once per process; a
document the fast check of :mod:`waza_core.suite.fastschema` finds valid is not walked by
jsonschema again.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from typing import Any

from waza_core import plugin_index
from waza_core.suite import fastschema

#: keys that waza (Go) defines and that waza for Python parses but does not support yet,
#: by the JSON path of the object that holds them. They stay errors even where unknown
#: keys are only warnings, so a suite never silently loses a feature.
UNSUPPORTED = {
}


#: the folder of the shipped schemas when waza is installed as files (the usual case)
_SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


def load(name: str) -> dict[str, Any]:
    """A shipped schema by name (``eval``, ``task``, ``results``, ``optimizer-report-1.0`` ...).

    Read from the package folder; through ``importlib.resources`` only when the file is not
    there (a package not installed as files): importing it (and the zipfile module it brings)
    is ~2.5 ms of a ~100 ms ``waza validate``."""
    try:
        with open(os.path.join(_SCHEMA_DIR, f"{name}.schema.json"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        from importlib import resources  # deferred: see above, only when the file is not in the folder

        text = resources.files("waza_core.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


def available() -> list[str]:
    from importlib import resources  # deferred: ~2.5 ms (see load), only to list the schemas

    return sorted(
        p.name[: -len(".schema.json")]
        for p in resources.files("waza_core.schemas").iterdir()
        if p.name.endswith(".schema.json")
    )


def _grader_def(registry) -> dict[str, Any]:
    names = registry.names("grader")
    cases = []
    for name in names:
        cls = registry.get("grader", name)
        cases.append({
            "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
            "then": {"properties": {"config": cls.config_schema}},
        })
    return {"allOf": cases} if cases else {}


def composed(kind: str, registry, grader_configs: bool = True,
             config_keys: frozenset[str] | None = None) -> dict[str, Any]:
    """The ``eval`` or ``task`` schema completed with the registered plugins.

    With ``grader_configs=False`` each grader's ``config`` is left as a plain object:
    the loader checks configs one by one with :func:`config_errors`, which is several
    times faster than an if/then chain over every grader type. ``config_keys``: the keys
    of the one eval ``config`` the schema will check; a built-in executor whose options
    key is not among them is not imported, and its key accepts anything (it is absent).
    """
    schema = copy.deepcopy(load(kind))
    grader = schema["$defs"]["grader"]
    grader["properties"]["type"]["enum"] = registry.names("grader")
    if grader_configs:
        grader.update(_grader_def(registry))
    if kind == "eval":
        cfg = schema["properties"]["config"]["properties"]
        for name in registry.names("executor"):
            if config_keys is not None:
                key = _indexed_config_key(registry, name)
                if key == "":  # a built-in that takes no options
                    continue
                if key is not None and key not in config_keys:
                    cfg[key] = {}  # absent from this eval: any schema accepts it
                    continue
            cls = registry.get("executor", name)
            if cls.config_key:
                cfg[cls.config_key] = cls.config_schema
    return schema


@functools.lru_cache(maxsize=None)
def _validator_for(kind: str, registry: Any):  # a Registry hashes by identity
    # deferred: jsonschema adds ~117.1 ms to importing this module
    from jsonschema import Draft202012Validator

    schema = composed(kind, registry, grader_configs=False)
    if not fastschema.schema_is_valid(schema):  # ~0.2 s of a cold load when asked of jsonschema
        Draft202012Validator.check_schema(schema)  # raises with jsonschema's own message
    return Draft202012Validator(schema)


@functools.lru_cache(maxsize=None)
def _config_validator(cls):
    # deferred: jsonschema adds ~117.1 ms to importing this module
    from jsonschema import Draft202012Validator

    schema = cls.config_schema or {"type": "object"}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@functools.lru_cache(maxsize=None)
def _config_fast(cls):
    return fastschema.checker(cls.config_schema or {"type": "object"})


def _indexed_config_key(registry, name: str) -> str | None:
    """A built-in executor's options key from :mod:`waza_core.plugin_index` (without
    importing it), or None for any other executor."""
    if registry.builtin_module("executor", name) is None:
        return None
    return plugin_index.EXECUTOR_CONFIG_KEYS.get(name)


@functools.lru_cache(maxsize=None)
def _fast_for(kind: str, registry: Any, config_keys: frozenset[str] | None = None):
    return fastschema.checker(composed(kind, registry, grader_configs=False, config_keys=config_keys))


def config_errors(cls, config) -> list:
    """Schema errors of one grader's ``config`` (paths relative to the config)."""
    if _config_fast(cls)(config):  # valid by the fast check: jsonschema would find nothing
        return []
    errors = []
    for err in _config_validator(cls).iter_errors(config):
        errors.extend(_leaves(err))
    return errors


def validator(kind: str, registry):
    return _validator_for(kind, registry)


@functools.lru_cache(maxsize=None)
def plain_validator(name: str):
    """A validator for a shipped schema, used as is (results, optimizer contract)."""
    # deferred: jsonschema adds ~117.1 ms to importing this module
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load(name))


def describe(error, kind: str) -> list[tuple[tuple, str | None, str]]:
    """Turn a jsonschema error into [(path, key, message)]; ``key`` points at a mapping key."""
    return [(path, key, message) for path, key, message, _ in classify(error, kind)]


def classify(error, kind: str) -> list[tuple[tuple, str | None, str, str]]:
    """Like :func:`describe`, with a category: ``unknown`` (a key the schema does not
    know), ``near_miss`` (an unknown key that misspells a known one: :func:`near_miss`),
    ``unsupported`` (a key of waza Go that waza for Python does not support yet)
    or ``invalid`` (anything else). The loader turns some ``unknown`` into warnings."""
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        out = []
        for key in error.instance:
            if key in error.schema.get("properties", {}):
                continue
            message = _unknown_key(str(key), known, path, kind)
            if "not supported yet" in message:
                category = "unsupported"
            elif str(key) not in KEY_HINTS and near_miss(str(key), known):
                category = "near_miss"
            else:
                category = "unknown"
            out.append((path, str(key), message, category))
        return out
    return [(path, None, _message(error, path), "invalid")]


#: hints for unknown keys that users write for a reason
KEY_HINTS = {
    "agent": "waza (Go) has no agent key: a custom agent is named with skill: (its eval.yaml sits next to "
             "the .agent.md)",
}


#: how close an unknown key must be to a known one to count as a misspelling of it (an error in
#: every mode: ``gradrs``, ``timeout_secs``); looser matches (cutoff 0.6) are only suggested
NEAR_MISS_CUTOFF = 0.8


def near_miss(key: str, known: list[str]) -> str | None:
    """The known key that ``key`` misspells, if any."""
    import difflib  # deferred: only for a message (~1 ms to import)

    close = difflib.get_close_matches(key, known, n=1, cutoff=NEAR_MISS_CUTOFF)
    return close[0] if close else None


def unknown_key_message(key: str, known: list[str]) -> str:
    """``unknown key 'x'`` with the nearest known key, or the list of known keys."""
    msg = f"unknown key {key!r}"
    if key in KEY_HINTS:
        return f"{msg}: {KEY_HINTS[key]}"
    import difflib  # deferred: only for a message

    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        msg += f" (did you mean {close[0]!r}?)"
    elif known:
        msg += f"; expected one of: {', '.join(sorted(known))}"
    return msg


def _unknown_key(key: str, known: list[str], path: tuple, kind: str) -> str:
    if len(key) > QUOTE_LIMIT:
        return f"unknown key {key[:QUOTE_LIMIT - 3]!r}... ({len(key)} characters)"
    holder = None
    if kind == "eval":
        holder = path
    elif kind == "task":
        holder = (path[0],) if path and path[0] in ("inputs", "expected") else (("__task__",) if not path else None)
    if holder is not None and key in UNSUPPORTED.get(holder, set()):
        return f"key {key!r} is recognised but not supported yet by waza for Python; remove it"
    return unknown_key_message(key, known)


def _message(error, path: tuple) -> str:
    v = error.validator
    if v == "required":
        return f"missing required key {error.message.split(chr(39))[1]!r}"
    if v == "enum" and path and path[-1] == "type":
        val = error.instance
        import difflib  # deferred: only for a message

        close = difflib.get_close_matches(str(val), [str(x) for x in error.validator_value], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if val in ("regex", "keyword"):  # folded into text by waza (Go) v0.12
            hint = " (an old kind, now 'text': run waza migrate on the suite's eval.yaml)"
        return f"unknown grader type {val!r}{hint}; known types: {', '.join(error.validator_value)}"
    if v == "type":
        want = error.validator_value
        want = " or ".join(_YAML_NAMES.get(w, w) for w in (want if isinstance(want, list) else [want]))
        return f"{_dotted(path) or 'value'}: expected {want}, got {_kind_of(error.instance)} {_short(error.instance)}"
    if v == "minProperties" and error.validator_value == 1:
        return f"{_dotted(path) or 'config'}: must not be empty"
    return f"{_dotted(path) or 'document'}: {_capped(error)}"


#: longest quotation of a value in a message (the value itself is in the file)
QUOTE_LIMIT = 60


def _capped(error) -> str:
    """jsonschema's message with the offending value's repr cut to :data:`QUOTE_LIMIT`."""
    message = error.message
    try:
        shown = repr(error.instance)
    except Exception:  # a value whose repr fails: show the message as it is, capped below
        shown = ""
    if len(shown) > QUOTE_LIMIT and shown in message:
        message = message.replace(shown, shown[: QUOTE_LIMIT - 3] + "...")
    return message if len(message) <= 300 else message[:297] + "..."


_YAML_NAMES = {"object": "mapping", "array": "list", "number": "number", "integer": "integer",
               "string": "string", "boolean": "boolean", "null": "null"}


def _dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _kind_of(value) -> str:
    return {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer",
            float: "number", type(None): "null"}.get(type(value), type(value).__name__)


def _short(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _config_keys(kind: str, instance) -> frozenset[str] | None:
    """The keys of an eval's ``config`` (None for another kind): which executors' options
    schemas its check needs (see :func:`composed`)."""
    if kind != "eval":
        return None
    config = instance.get("config") if isinstance(instance, dict) else None
    return frozenset(k for k in config if isinstance(k, str)) if isinstance(config, dict) else frozenset()


def iter_errors(kind: str, registry, instance) -> list:
    """All schema errors, deepest first within each branch, without if/then noise."""
    if _fast_for(kind, registry, _config_keys(kind, instance))(instance):  # valid: jsonschema would find nothing
        return []
    errors = []
    for err in validator(kind, registry).iter_errors(instance):
        errors.extend(_leaves(err))
    return errors


def _leaves(err) -> list:
    if err.validator in ("allOf", "anyOf", "oneOf", "if", "then") and err.context:
        out = []
        for sub in err.context:
            out.extend(_leaves(sub))
        return out
    return [err]
