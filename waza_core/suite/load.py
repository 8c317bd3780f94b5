"""Loading an eval suite: ``eval.yaml`` plus its task files, checked all at once.

Every problem becomes one ``file:line:col: message`` line and all of them are raised
together as a :class:`~waza_core.errors.SuiteError`, so a user fixes a suite in one
pass. Grader configs are checked by each grader's own schema at load time.

The unknown-key policy follows waza (Go):

* a legacy eval (``schemaVersion`` 1.x, no ``scenario``) reads unknown keys as
  *warnings* (``file:line:col: warning: ...``), kept on :attr:`Suite.warnings` and
  printed by the CLI; ``load_suite(..., strict=True)`` (``waza validate --strict``)
  makes them errors;
* a scenario eval (``schemaVersion: "2.0"``) refuses unknown keys;
* unknown top-level keys of an eval grader entry only warn, in both kinds of eval;
  a grader's ``config`` is always strict (its own schema);
* task files are unversioned: an unknown key (a ``schemaVersion`` too) only warns, as in
  waza (Go)'s compatibility contract (``TestCompatibilityTaskContract``), whatever the
  eval's version; a task grader's ``config`` stays strict;
* keys that waza (Go) defines but waza for Python does not support yet are errors
  everywhere, so a suite never silently loses a feature.
"""

from __future__ import annotations

import functools
import gc
import os
import re
from array import array
from pathlib import Path
from typing import Any

from waza_core import cache_json
from waza_core.errors import SuiteError
from waza_core.model import (CheckpointSpec, FileInput, GraderSpec, Suite, SuiteConfig, TaskFileInodes, TaskSpec,
                             make_grader_spec, make_task_spec, share_tags)
from waza_core.paths import display_path
from waza_core.suite import globs, prefetch, project_config, script_paths, snapshot, ungraded, versions, yamlio
from waza_core.suite import mocks as mock_checks
from waza_core.suite import schema as schemas
from waza_core.suite.cache import SuiteCache, folded_inode, stat_key
from waza_core.suite.problems import Problems, read_yaml

#: ``config`` keys that become the :class:`SuiteConfig` field of that name as they are
_CONFIG_AS_IS = ("trials_per_task", "timeout_seconds", "parallel", "executor", "model", "judge_model", "fail_fast",
                 "backend", "first_event_timeout_seconds", "reasoning_effort", "judge_reasoning_effort",
                 "inject_skill_body", "trigger_skill_routing")
#: ``config`` keys that become a tuple field
_CONFIG_TUPLES = ("required_skills", "disabled_skills", "instruction_files", "models")


def _suite_config(cfg: dict, known, file: Path) -> SuiteConfig:
    """The suite's :class:`SuiteConfig`: only the keys the eval sets; every default is the
    field's own (written once, in :mod:`waza_core.model`)."""
    given: dict[str, Any] = {k: cfg[k] for k in _CONFIG_AS_IS if k in cfg}
    given.update({k: tuple(cfg[k]) for k in _CONFIG_TUPLES if k in cfg})
    if "workers" in cfg or "max_workers" in cfg:
        given["workers"] = cfg["workers"] if "workers" in cfg else cfg["max_workers"]
    if "max_attempts" in cfg:
        given["max_attempts"] = max(1, cfg["max_attempts"])
    if "skill_directories" in cfg:
        given["skill_directories"] = tuple(_resolve_dirs(file.parent, cfg["skill_directories"]))
    if cfg.get("group_by") in ("model", "tags"):
        given["group_by"] = cfg["group_by"]
    return SuiteConfig(extra={k: v for k, v in cfg.items() if k not in known}, **given)


def _lenient_unknown(kind: str, path: tuple, legacy: bool) -> bool:
    """Whether an unknown key at ``path`` is only a warning (see the module doc)."""
    if kind == "task":  # waza (Go): "unknown task fields warn and are ignored"; a grader's config is strict
        return not any(path[i] == "config" and path[i - 2] == "graders" for i in range(2, len(path)))
    if kind != "eval":
        return False
    if len(path) == 2 and path[0] == "graders":  # a grader entry's own keys: warn in every eval
        return True
    if len(path) >= 3 and path[0] == "graders" and path[2] == "config":
        return False  # a grader's config: its own schema, always strict
    if len(path) >= 2 and path[0] == "config" and path[1] not in _base_config_keys():
        return False  # an executor's own options (config.cli, config.copilot): its schema, always strict
    return legacy


@functools.lru_cache(maxsize=1)
def _base_config_keys() -> frozenset:
    return frozenset(schemas.load("eval")["properties"]["config"]["properties"])


def _check_schema(kind: str, data: dict, text: str, file: Path, registry, problems: Problems,
                  legacy: bool = False) -> bool:
    errors = schemas.iter_errors(kind, registry, data)
    seen = set()
    for err in errors:
        for path, key, message, category in schemas.classify(err, kind):
            if message.startswith("unknown grader type"):
                message += registry.unavailable_note("grader", str(_value_at(data, path)))
            elif message.startswith("unknown key") and path == ("config",) and key:
                message += registry.config_key_note(key)
            if (path, key, message) in seen:
                continue
            seen.add((path, key, message))
            if category == "near_miss":
                problems.add(file, f"{message}; a near miss of a known key is an error in every mode "
                             "(ignored, it would silently drop what it sets)", text, path, key)
            elif category == "unknown" and _lenient_unknown(kind, path, legacy):
                problems.warn(file, f"{message}; ignored", text, path, key)
            else:
                problems.add(file, message, text, path, key)
    return not errors


def grader_names(entries: Any) -> list[str | None]:
    """The name of each grader entry: its ``name``, else its ``type`` (``type_N`` when
    that is taken in the list). waza (Go) keys a nameless grader by ``""``, so two
    of them overwrite each other's result; naming them keeps both."""
    entries = entries if isinstance(entries, list) else []
    names: list[str | None] = []
    for e in entries:
        name = e.get("name") if type(e) is dict else None
        if type(name) is not str:
            break
        names.append(name)
    else:
        return names  # every entry named (the usual case)
    taken = {e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)}
    names = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            names.append(None)
        elif isinstance(e.get("name"), str):
            names.append(e["name"])
        elif isinstance(e.get("type"), str) and e["type"]:
            name = e["type"] if e["type"] not in taken else f"{e['type']}_{i + 1}"
            taken.add(name)
            names.append(name)
        else:
            names.append(None)
    return names
def _value_at(data: Any, path: tuple) -> Any:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _check_graders(entries: Any, base_path: tuple, text: str, file: Path, registry,
                   problems: Problems, task: bool = False) -> None:
    """Run each grader's own config schema and load-time checks.

    Entries the document schema already rejected are skipped (their problem is reported),
    and so are ``ref`` entries: they are checked once resolved (:func:`_expand_refs`).
    """
    names: dict[str, int] = {}
    for i, (entry, name) in enumerate(zip(entries if isinstance(entries, list) else [], grader_names(entries),
                                          strict=True)):
        if name is None or "ref" in entry:
            continue
        if "name" not in entry:
            problems.warn(file, f"grader without a name; it is named {name!r} (its results are keyed by name)",
                          text, base_path + (i,), None)
        cls = registry.get("grader", entry.get("type")) if isinstance(entry.get("type"), str) else None
        config = entry.get("config") or {}
        if cls is not None and isinstance(config, dict):
            checks = entry.get("assertions")
            if checks is not None and not (isinstance(checks, list) and all(isinstance(c, str) for c in checks)):
                continue  # the document schema reported it
            config, problem = _entry_assertions(entry, config) if task else (config, None)
            if problem:
                problems.add(file, f"grader {name!r}: {problem}", text, base_path + (i,), "assertions")
                continue
            _check_grader_config(cls, name, config, base_path + (i, "config"), text, file, problems,
                                 entry_path=base_path + (i,) if entry.get("assertions") else None)
        if name in names:
            problems.add(file, f"duplicate grader name {name!r} (also entry {names[name] + 1})",
                         text, base_path + (i, "name") if "name" in entry else base_path + (i,))
        names[name] = i


def _check_grader_config(cls, name: str, config: dict, config_path: tuple, text: str, file: Path,
                         problems: Problems, entry_path: tuple | None = None) -> None:
    """A grader's config against its own schema, then its own load-time check. ``entry_path``:
    the entry, when its ``assertions`` list came from the entry rather than from config."""
    schema_errors = schemas.config_errors(cls, config)
    for err in schema_errors:
        for path, key, message in schemas.describe(err, "config"):
            where = config_path + path
            if entry_path is not None and path[:1] == ("assertions",):
                where = entry_path + path  # the list came from the entry, not from config
            problems.add(file, f"grader {name!r}: {message}", text, where, key)
    try:
        checks = [] if schema_errors else cls.check_config(config)
    except Exception as exc:  # a plugin's check itself failed: report, don't crash
        checks = [((), f"config check failed: {type(exc).__name__}: {exc}")]
    for sub_path, message in checks:
        problems.add(file, f"grader {name!r}: {message}", text, config_path + tuple(sub_path))


def _entry_assertions(entry: dict, config: dict) -> tuple[dict, str | None]:
    """A task grader's own ``assertions:`` list becomes its ``config.assertions``, as in waza.

    waza (Go) copies a non-empty entry list over ``config.assertions`` (any grader type;
    only ``code`` reads it). Setting both, or the list on another type, is a mistake
    waza passes over silently; here it is a load error.
    """
    checks = entry.get("assertions")
    if not checks:
        return config, None
    if entry.get("type") != "code":
        return config, "assertions: only a code grader takes assertions"
    if "assertions" in config:
        return config, "set assertions on the grader entry or in config.assertions, not both"
    return dict(config, assertions=list(checks)), None


def _weight(value: Any) -> float:
    """waza (Go) ``EffectiveWeight``: a missing, zero or negative weight counts as 1."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 1.0


def _grader_specs(entries: list, file: Path | str, base: str = "graders", shown: str | None = None,
                  shared: dict | None = None, compact: bool = False,
                  at_file: str | None = None) -> list[GraderSpec]:
    """Grader specs of a checked document (``ref`` entries already resolved); ``shown``:
    ``display_path(file)``, when the caller has it. ``shared``: strings seen so far in
    this load; an entry's ``type`` and ``name`` become the first equal string (in the
    document too), so 100,000 tasks do not keep 100,000 copies of ``"text"``. ``compact``:
    each spec keeps its config as compact JSON (``GraderSpec.config``), as a task that came
    through the suite cache keeps its document. ``at_file``: the path string the task keeps;
    an entry of its ``graders`` list then keeps its index, not the ``where`` string made
    from it (``GraderSpec.where``)."""
    where = None  # made for the first entry that shows it (an index ``where`` does not)
    specs = []
    for i, (e, name) in enumerate(zip(entries, grader_names(entries), strict=True)):
        kind = e["type"]
        if shared is not None:
            kind = e["type"] = shared.setdefault(kind, kind)
            if name is e.get("name"):
                name = e["name"] = shared.setdefault(name, name)
        weight = e.get("weight")
        config = e.get("config") or {}
        if e.get("assertions"):
            config = _entry_assertions(e, config)[0]
        if compact and config:
            config = cache_json.compact(config) or config
        weight = 1.0 if weight is None else _weight(weight)
        if at_file is not None and base == "graders":
            specs.append(make_grader_spec(kind, name, weight, config, i, at_file))
        else:
            if where is None:
                where = display_path(file) if shown is None else shown
            specs.append(GraderSpec(type=kind, name=name, weight=weight, config=config, where=f"{where} ({base}[{i}])"))
    return specs


def _expand_refs(file: Path, entries: list, registry, problems: Problems) -> list:
    """Replace each ``ref`` entry of eval.yaml by the grader it names (waza_core/suite/refs.py).

    Resolved graders get the same checks as written ones; every problem is reported at the
    entry's ``ref`` key."""
    # deferred: waza_core.suite adds ~0.5 ms to importing this module
    from waza_core.suite import refs

    out = list(entries)
    lock = None
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "ref" not in entry:
            continue
        label = f"grader ref {entry['ref']!r}"
        try:
            lock = refs.load_lock(file) if lock is None else lock
            grader, source = refs.resolve(entry, lock)
        except refs.RefError as exc:
            problems.add(file, f"{label}: {exc}", None, ("graders", i), "ref")
            continue
        cls = registry.get("grader", grader.get("type"))
        config = grader.get("config") or {}
        messages = []
        if cls is None:
            messages = [registry.unknown("grader", grader.get("type"))]
        elif not isinstance(config, dict):
            messages = ["config must be a mapping"]
        else:
            errors = schemas.config_errors(cls, config)
            messages = [m for err in errors for _, _, m in schemas.describe(err, "config")]
            messages = messages or [m for _, m in cls.check_config(config)]
        if messages:
            for message in messages:
                problems.add(file, f"{label} ({display_path(source)}): {message}", None, ("graders", i), "ref")
            continue
        out[i] = grader
    is_ref = [isinstance(e, dict) and "ref" in e for e in entries]
    names: dict[str, int] = {}
    for i, entry in enumerate(out):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        if name in names and (is_ref[i] or is_ref[names[name]]):
            at = i if is_ref[i] else names[name]
            other = names[name] if at == i else i
            problems.add(file, f"duplicate grader name {name!r} (also entry {other + 1})", None,
                         ("graders", at), "ref")
        names.setdefault(name, i)
    return out


#: the stat key recorded for a file whose ``stat`` failed
_NO_KEY = (-1, -1, -1, -1)


def _load_checked(file: Path | str, kind: str, registry, problems: Problems, cache, name: str | None = None,
                  keys: array | None = None) -> dict | None:
    """Read, parse and check one document, through the cache; None when it has errors.
    ``name``: ``str(file)``, when the caller has it; a Path is made only when the cache
    does not answer. ``keys``: gets the file's ``stat`` identity, its inode folded (size,
    mtime, ctime, inode: what the suite's snapshot compares); four -1 when its ``stat`` failed."""
    name = os.fspath(file) if name is None else name
    try:
        key = stat_key(name)
    except OSError:
        key = None
    if keys is not None:
        try:
            keys.extend(_NO_KEY if key is None else (key[0], key[1], key[2], folded_inode(key[3])))
        except OverflowError:  # a time outside 1677-2262 (64-bit items): unknown but the inode
            del keys[len(keys) - len(keys) % 4:]  # what the failed extend added
            keys.extend((-1, -1, -1, folded_inode(key[3])))  # type: ignore[index]  # key is not None here
    if key is not None:
        data = cache.get(name, kind, key)
        if data is not None:
            return data
    cache.last_blob = None
    file = Path(file)
    before, before_all = len(problems.items), problems.count()
    data, text = read_yaml(file, problems)
    if data is None:
        return None
    free_form = (("inputs", "context"),) if kind == "task" else (("inputs",),)
    for where, value in yamlio.non_finite(data, skip=free_form):
        problems.add(file, f"{schemas._dotted(where) or 'value'}: {value} is not allowed (use a finite number)",
                     text, where)
    if kind == "eval":
        _check_eval(file, data, text, registry, problems)
    else:
        _check_schema(kind, data, text, file, registry, problems)
        _check_graders(data.get("graders") or [], ("graders",), text, file, registry, problems, task=True)
        _check_task(file, data, text, registry, problems)
    mock_checks.check_document(kind, data, file, text, problems)
    if len(problems.items) > before:
        return None
    if key is not None and problems.count() == before_all:  # files with warnings are re-read to warn again
        cache.put(name, kind, key, data)
    return data


# -- eval.yaml --------------------------------------------------------------------------------------

def _scalar(data: dict, key: str, text: str) -> str | None:
    """A top-level scalar as waza (Go) reads it into a string: as written in the file."""
    value = data.get(key)
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, str):
        return value
    return yamlio.scalar_text(text, (key,)) or versions.as_text(value)


def eval_version(file: Path, data: dict, text: str, problems: Problems) -> versions.EvalVersion | None:
    """The version ``data`` is read as; None (with a problem) when it cannot be read."""
    if isinstance(data.get("schemaVersion"), (dict, list)) or isinstance(data.get("scenario"), (dict, list)):
        return None  # the schema reports the type
    try:
        return versions.check_eval(_scalar(data, "schemaVersion", text), _scalar(data, "scenario", text))
    except versions.VersionError as exc:
        where = "scenario" if "scenario" in data and ("scenario" in str(exc)) else "schemaVersion"
        problems.add(file, str(exc), text, (where,) if where in data else (), None)
        return None


def _check_eval(file: Path, data: dict, text: str, registry, problems: Problems) -> None:
    version = eval_version(file, data, text, problems)
    if version is None and not isinstance(data.get("schemaVersion"), (dict, list)):
        return  # another major or a malformed version: its keys mean something else
    legacy = version is None or not version.scenario
    _check_schema("eval", data, text, file, registry, problems, legacy=legacy)
    _check_graders(data.get("graders") or [], ("graders",), text, file, registry, problems)
    if version is None:
        return
    for key in ("adversarial",):  # mcp_mocks and command_mocks are gated with their other checks (suite/mocks.py)
        if key in data:
            message = versions.feature_problem(version, key)
            if message:
                problems.add(file, message, text, (), key)
    _check_eval_rules(file, data, text, version, problems)


def _check_eval_rules(file: Path, data: dict, text: str, version: versions.EvalVersion, problems: Problems) -> None:
    """The rules of waza (Go) ``EvalSpec.Validate`` that a schema cannot say."""
    cfg = data.get("config") if isinstance(data.get("config"), dict) else {}
    if version.scenario:
        if (not data.get("skill") and not cfg.get("skill_directories") and cfg.get("required_skills")):
            problems.add(file, "scenario required_skills requires explicit skill_directories: set "
                         "config.skill_directories (or a skill:) so the skills can be found", text,
                         ("config",), "required_skills")
    elif not data.get("skill"):
        problems.warn(file, "no skill: key; a skill suite names its skill (the results record skill \"\"); "
                      "a scenario suite sets scenario: and schemaVersion: \"2.0\" instead", text, (), None)
    executor = cfg.get("executor", "mock")
    for key in ("reasoning_effort", "judge_reasoning_effort"):
        if cfg.get(key) and executor != "copilot-sdk":
            problems.add(file, f"config.{key} requires executor copilot-sdk (config.executor is {executor!r})",
                         text, ("config",), key)
    group_by = cfg.get("group_by")
    if isinstance(group_by, str) and group_by not in ("", "model", "tags"):
        problems.warn(file, f"config.group_by {group_by!r} is not supported (model or tags); no groups are made",
                      text, ("config", "group_by"))
    _check_hooks(file, data.get("hooks"), text, problems)
    _check_adversarial(file, data.get("adversarial"), text, problems)
    if "range" in data and "tasks_from" not in data:
        problems.warn(file, "range has no effect without tasks_from; ignored", text, (), "range")
    if "tasks_from" in data and data.get("tasks"):
        problems.warn(file, "tasks is not read when tasks_from is set (the tasks are the rows of the file); "
                      "remove one of them", text, (), "tasks")
    if "tasks_from" not in data and not data.get("tasks"):
        problems.add(file, "no task: set tasks (globs of task files) or tasks_from (a CSV or JSON Lines file)",
                     text, (), "tasks" if "tasks" in data else None)


def _check_hooks(file: Path, hooks: Any, text: str, problems: Problems) -> None:
    if not isinstance(hooks, dict):
        return
    for point, entries in hooks.items():
        for i, hook in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(hook, dict) and isinstance(hook.get("command"), str) and not hook["command"].split():
                problems.add(file, f"hooks.{point}[{i}]: empty command", text, ("hooks", point, i, "command"))


def _check_adversarial(file: Path, adversarial: Any, text: str, problems: Problems) -> None:
    if not isinstance(adversarial, dict) or not isinstance(adversarial.get("packs"), list):
        return
    seen: set[str] = set()
    for i, pack in enumerate(adversarial["packs"]):
        if not isinstance(pack, str):
            continue
        name = pack.strip()
        if not name:
            problems.add(file, f"adversarial.packs[{i}] is empty", text, ("adversarial", "packs", i))
        elif name in seen:
            problems.add(file, f"adversarial.packs[{i}] {name!r} is duplicated", text, ("adversarial", "packs", i))
        seen.add(name)


# -- the suite ---------------------------------------------------------------------------------------

def load_suite(path: str | Path, registry, strict: bool = False) -> Suite:
    """Load and check ``eval.yaml`` and every task file it names (or its ``tasks_from`` rows).

    With ``strict=True`` warnings are errors too (``waza validate --strict``).
    """
    registry.check_conflicts()
    most_helpers = prefetch.most_helpers()  # a bad WAZA_LOAD_HELPERS is exit 2 for every load

    project_config.load()  # a .waza.yaml that is a folder or unreadable is exit 2 for every command
    file = Path(path).absolute()
    problems = Problems()
    if file.is_dir():
        file = file / "eval.yaml"
    cache = SuiteCache(file, registry)
    data = _load_checked(file, "eval", registry, problems, cache)
    eval_ok = data is not None
    if data is None:
        # keep going with whatever parsed, so task problems are reported in the same pass
        raw, _ = read_yaml(file, Problems())
        data = raw if isinstance(raw, dict) else {}
    text = _text_of(file)
    version = eval_version(file, data, text, Problems())
    entries = data.get("graders") or []
    if eval_ok and any(isinstance(e, dict) and "ref" in e for e in entries):
        entries = _expand_refs(file, entries, registry, problems)
        eval_ok = not problems.items
    graders = _grader_specs(entries, file) if eval_ok else []
    inputs = _inputs(data, text) if eval_ok else {}
    tasks: list[TaskSpec] = []
    keys: array | None = None  # the stat keys of the task files, when they come from globs
    names: list[str] = []
    if version is not None:  # another major: its tasks are not ours to read
        if isinstance(data.get("tasks_from"), str) and data["tasks_from"]:
            # deferred: waza_core.suite adds ~11.1 ms to importing this module
            from waza_core.suite import tasks_from

            tasks = tasks_from.load_tasks(file, data["tasks_from"], data.get("range"), inputs,
                                          _Reporter(problems))
        else:
            patterns = data.get("tasks")
            patterns = [g for g in patterns if isinstance(g, str) and g] if isinstance(patterns, list) else []
            keys = array("q")
            names = _expand_globs(file, None, patterns, problems)
            tasks = _load_tasks(names, registry, problems, cache, most_helpers, keys)
    triggers = _load_trigger_tests(file, problems)
    _check_unique_ids(tasks, problems)
    _check_grader_names(graders, tasks, file, problems)
    mock_checks.check_suite(data, file, tasks, problems)
    if eval_ok:
        _check_scripts(file, graders, tasks, data.get("hooks"), problems)
        ungraded.check(file, data, graders, tasks, problems)
    cache.save()
    if keys is not None and not cache.kept_rest:  # written again, or removed when it cannot be
        snapshot.save(cache, names, tasks, keys)
    cache.close()
    warnings = sorted(problems.warnings, key=_position_key)
    if strict and warnings:
        problems.items.extend(w.replace(": warning: ", ": ", 1).removesuffix("; ignored") + " (an error with --strict)"
                              for w in warnings)
        warnings = []
    if problems.items:
        raise SuiteError(problems.items, warnings)
    cfg = data.get("config") or {}
    known = set(schemas.load("eval")["properties"]["config"]["properties"])
    config = _suite_config(cfg, known, file)
    assert version is not None  # a suite without a readable version has a problem above
    enabled = tuple(t for t in tasks if t.enabled)
    return Suite(
        name=data["name"], skill=str(data.get("skill") or ""), file=file, config=config,
        tasks=enabled, graders=tuple(graders),
        description=data.get("description", ""), version=str(data.get("version", "")),
        metrics=tuple(data.get("metrics") or ()), inputs=inputs,
        hooks=data.get("hooks"), baseline=bool(data.get("baseline", False)), raw=data,
        schema_version=version.effective, scenario=_scalar(data, "scenario", text) if version.scenario else None,
        adversarial=data.get("adversarial"), trigger_tests=triggers, warnings=tuple(warnings),
        task_file_inodes=_task_file_inodes(enabled, keys),
        disabled_tasks=tuple(t for t in tasks if not t.enabled),
    )


def _task_file_inodes(tasks: tuple[TaskSpec, ...], keys: array | None) -> TaskFileInodes | None:
    """The inodes of the task files (every fourth item of their stat keys), when every ``stat`` worked."""
    inodes = keys[3::4] if keys is not None else None
    return TaskFileInodes(tasks, inodes) if inodes is not None and -1 not in inodes else None


def _position_key(line: str) -> tuple:
    """Sort key of a ``file:line:col: ...`` line: by file, then line and column."""

    m = re.match(r"(.*?):(\d+):(\d+): ", line)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else (line.split(": ", 1)[0], 0, 0)


class _Reporter:
    """Adapts :class:`Problems` to the ``report`` callback of :mod:`tasks_from`."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def __call__(self, file: Path, message: str, where=None, warning: bool = False) -> None:
        add = self.problems.warn if warning else self.problems.add
        if where and isinstance(where[0], str):
            add(file, message, None, (where[0],), None)  # the value of a key of eval.yaml
        else:
            add(file, message, pos=where)


def _text_of(file: Path) -> str:
    try:
        return yamlio.read_text(file)
    except (OSError, UnicodeDecodeError):
        return ""


def _inputs(data: dict, text: str) -> dict[str, str]:
    """``inputs`` as waza (Go) reads them (``map[string]string``): scalars as written."""
    out = {}
    for key, value in (data.get("inputs") or {}).items():
        if isinstance(value, str):
            out[key] = value
        elif value is None:
            out[key] = ""
        else:
            out[key] = yamlio.scalar_text(text, ("inputs", key)) or versions.as_text(value)
    return out


def _resolve_dirs(base: Path, dirs: list[str]) -> list[str]:
    """Relative skill folders against ``base``; ``none`` stays as is (it disables skills)."""
    return [d if d == "none" or os.path.isabs(d) else str((base / d).resolve()) for d in dirs]


def _expand_globs(file: Path, text: str | None, patterns: list[str], problems: Problems) -> list[str]:
    """Task files of the globs, as path strings. A glob that matches nothing is a warning
    when another matches, and the suite an error when none does (waza Go fails only on
    zero files)."""
    texts: list[str] = []
    seen: set[str] = set()
    base = file.parent
    empty: list[int] = []
    for i, pattern in enumerate(patterns):
        if os.path.isabs(pattern):
            problems.add(file, f"task glob {pattern!r} must be relative to the eval file's folder",
                         text, ("tasks", i))
            continue
        listing = globs.task_files(base, pattern)
        if not listing.texts:
            empty.append(i)
        escapes = _LinkEscapes(base, plain=".." not in Path(pattern).parts)
        if escapes.none_leave(listing):  # the usual listing: kept whole, in C (100,000 files: ~30 ms less)
            found = list(dict.fromkeys(listing.texts))
            if seen:
                found = [m for m in found if m not in seen]
            seen.update(found)
            texts.extend(found)
            continue
        for j, m in enumerate(listing.texts):
            # the rule of inputs.prompt_file, for links: a path that stays in the folder as
            # written must stay there once resolved (an explicit '..' is the author's choice)
            if escapes.leaves(listing, j):
                problems.add(file, f"task glob {pattern!r}: {display_path(m)} leaves the suite's folder "
                             "through a symbolic link", text, ("tasks", i))
                continue
            if m not in seen:
                seen.add(m)
                texts.append(m)
    for i in empty:
        message = f"task glob {patterns[i]!r} matches no file under {display_path(base)}"
        if texts:
            problems.warn(file, message, text, ("tasks", i))
        else:
            problems.add(file, message, text, ("tasks", i))
    return texts


class _LinkEscapes:
    """Whether a glob match under ``base`` leaves it once symbolic links are resolved.

    The rule is ``normpath(m)`` under ``base`` and ``m.resolve()`` not under
    ``base.resolve()``. For a pattern without ``..`` under a base without ``..``, every
    match is under ``base`` as written, and a match that is not itself a link resolves
    to its resolved folder plus its name: each folder is resolved once, not each of
    100,000 task files (and whether a match is a link comes from the folder listing
    when it said so)."""

    def __init__(self, base: Path, plain: bool) -> None:
        self.base = base
        self.real_base = base.resolve()
        self.plain = plain and ".." not in base.parts
        self.folders: dict[str, bool] = {}  # folder -> it resolves inside real_base

    def none_leave(self, listing: globs.Listing) -> bool:
        """True when no file of ``listing`` can leave ``base``: they are all in one folder
        that resolves inside it, and none of them is a link."""
        if not self.plain or listing.folder is None or listing.links:
            return False
        return self._folder_inside(listing.folder)

    def _folder_inside(self, folder: str) -> bool:
        inside = self.folders.get(folder)
        if inside is None:
            inside = self.folders[folder] = self._inside(Path(folder))
        return inside

    def leaves(self, listing: globs.Listing, i: int) -> bool:
        """Whether the ``i``-th file of ``listing`` leaves ``base``."""
        text = listing.texts[i]
        if not self.plain:
            return Path(os.path.normpath(text)).is_relative_to(self.base) and not self._inside(listing.path(i))
        if self._folder_inside(listing.folder_of(i)) and not listing.is_link(i):
            return False
        return not self._inside(listing.path(i))

    def _inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.real_base)


# -- task files -------------------------------------------------------------------------------------

def _check_task(file: Path, data: dict, text: str, registry, problems: Problems) -> None:
    """Task rules beyond the schema: responder vs follow-ups, checkpoints."""
    inputs = data.get("inputs") if isinstance(data.get("inputs"), dict) else {}
    if "responder" in inputs and "follow_up_prompts" in inputs:
        problems.add(file, "set either inputs.responder or inputs.follow_up_prompts, not both (a responder "
                     "answers the agent's questions itself)", text, ("inputs",), "responder")
    checkpoints = data.get("checkpoints")
    if not isinstance(checkpoints, list):
        return
    turns = None if "responder" in inputs else 1 + len(inputs.get("follow_up_prompts") or [])
    first: dict[int, int] = {}
    for i, cp in enumerate(checkpoints):
        if not isinstance(cp, dict):
            continue
        _check_graders(cp.get("graders") or [], ("checkpoints", i, "graders"), text, file, registry, problems,
                       task=True)
        turn = cp.get("after_turn")
        if not isinstance(turn, int) or isinstance(turn, bool):
            continue
        if turn in first:
            problems.add(file, f"checkpoints[{i}]: after_turn {turn} is also used by checkpoints[{first[turn]}]; "
                         "put both graders in one checkpoint", text, ("checkpoints", i, "after_turn"))
        first.setdefault(turn, i)
        if turns is not None and turn > turns:
            problems.warn(file, f"checkpoints[{i}]: after_turn {turn} is never reached (the task has {turns} "
                          "turn(s): the prompt and each follow_up_prompts entry)", text,
                          ("checkpoints", i, "after_turn"))


def _load_tasks(names: list[str], registry, problems: Problems, cache, most_helpers: int = 0,
                keys: array | None = None) -> list[TaskSpec]:
    """The specs of the task files ``names`` (path strings), in order; ``keys`` gets the stat
    key of each file (see :func:`_load_checked`). From the suite's snapshot
    (:mod:`waza_core.suite.snapshot`) when it answers for every file, else file by file.

    The cyclic collector is paused while every file comes from the suite cache: a warm
    load makes only acyclic objects that all live on (each task's document, spec and
    Path), and the collector's passes over them cost ~10 us per task of a 100,000-task
    load with Python's default thresholds (~1 us with those ``waza run`` sets while
    loading). The first file parsed and checked again (YAML and schema checks do make
    cyclic garbage) turns it back on.

    On a first load of a big suite, helper processes parse and check the tail of the list
    (:mod:`waza_core.suite.prefetch`, at most ``most_helpers``); ``cache`` asks for a
    helper's line only when a file is not in the cache file, so the loop is the same with or
    without them."""
    tasks = []
    cwd = os.getcwd()
    shared: dict = {}  # strings, and tuples of tags
    helpers = prefetch.Helpers()
    wanted = prefetch.helpers_wanted(len(names), most_helpers) if cache.holds_nothing else 0  # a first load
    stale = cache.stale
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
        cache.on_miss = gc.enable
    cache.helper_line = helpers.line  # answers None while no helper runs
    try:
        found = snapshot.load(cache, names, keys, most_helpers) if keys is not None else None
        if found is not None:
            tasks = found
            return tasks
        if wanted:
            helpers.start(_check_for_helper(registry), names, wanted)
        for i, name in enumerate(names):
            if i == prefetch.PROBE_FILES and not helpers.shares and cache.stale - stale == i:
                # every file so far had a line of another stat: a cache restored onto a new
                # checkout, or every file touched; the rest most likely too
                more = prefetch.helpers_wanted(len(names) - i, most_helpers)
                if more:
                    helpers.start(_check_for_helper(registry), names, more, done=i)
            helpers.at(i)
            task = _load_task(name, registry, problems, cache, name, cwd, shared, keys)
            if task is not None:
                tasks.append(task)
    finally:
        cache.helper_line = None
        helpers.stop()
        cache.on_miss = None
        if was_enabled:
            if not gc.isenabled() and len(tasks) >= PROMOTE_MIN_TASKS:
                _promote_without_a_pass()
            gc.enable()
    return tasks


#: a warm load of fewer tasks leaves the collector as it is (its young pass costs ~1 ms per
#: 1,500 tasks); see :func:`_promote_without_a_pass`
PROMOTE_MIN_TASKS = 5000


def _promote_without_a_pass() -> None:
    """Move every object the collector tracks into its oldest generation, without a pass.

    After a load where every file came from the suite cache, the collector was paused while
    the suite's objects were made: turned back on as they are, its next young-generation pass
    walks all of them (~70 ms for 100,000 tasks, for nothing: a warm load makes no cyclic
    garbage). ``gc.freeze()`` moves every tracked object out of the generations and resets the
    young count, ``gc.unfreeze()`` puts them back into the oldest one; nothing stays frozen.
    Skipped when something else froze objects (a program preparing to fork, a ``waza run``
    whose engine is built): unfreezing would hand its objects back too. A side effect for a
    program that loads suites as a library: its own young garbage goes to the oldest
    generation with the suite, so it is collected at the next full pass, not the next young
    one; hence only for suites of :data:`PROMOTE_MIN_TASKS` or more."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _check_for_helper(registry):
    """What a helper process does with one task file: read, parse and check it as a cold
    load does, its problems dropped (the loader finds them again, in order)."""
    def check(name: str, lines) -> None:
        _load_checked(name, "task", registry, Problems(), lines, name)
    return check


def _load_task(file: Path | str, registry, problems: Problems, cache, name: str | None = None,
               cwd: str | None = None, shared: dict | None = None, keys: array | None = None
               ) -> TaskSpec | None:
    """One task file as a TaskSpec (None when it has problems). ``name``: ``str(file)``,
    ``cwd``: the working folder, ``shared``: see :func:`_grader_specs`, when the caller
    has them (a large suite loads faster and smaller). A Path is made only when a message
    or a path beside the file needs one: the usual task keeps its file as a string."""
    data = _load_checked(file, "task", registry, problems, cache, name, keys)
    if data is None:
        return None
    text = None
    name = os.fspath(file) if name is None else name
    shown = None if not data.get("expected") and not data.get("checkpoints") else display_path(name, cwd)
    # the suite cache holds the document (found there, or stored by this load): the task keeps
    # it as compact JSON (raw=), and its graders their configs so too
    compact = cache.last_blob is not None
    graders = _grader_specs(data.get("graders") or [], file, shown=shown, shared=shared, compact=compact,
                            at_file=name)
    inputs = data["inputs"]
    prompt = inputs.get("prompt")
    if "prompt_file" in inputs:
        file = Path(file)
        if prompt is not None:
            problems.add(file, "set either inputs.prompt or inputs.prompt_file, not both",
                         text, ("inputs",), "prompt_file")
            return None
        prompt = _read_prompt_file(file, text, inputs["prompt_file"], problems)
        if prompt is None:
            return None
    elif prompt is None:
        problems.add(Path(file), "missing prompt: set inputs.prompt or inputs.prompt_file", text, ("inputs",))
        return None
    if data.get("expected"):
        graders.extend(_expectation_graders(data["expected"], file, shown))
    checkpoints = tuple(
        CheckpointSpec(after_turn=cp["after_turn"], on_failure=cp.get("on_failure", "continue"),
                       graders=tuple(_grader_specs(cp["graders"], file, f"checkpoints[{i}].graders", shown, shared,
                                                   compact)))
        for i, cp in enumerate(data["checkpoints"])) if data.get("checkpoints") else ()
    raw = cache.last_blob or data
    if len(data) == 3 and "graders" in data and len(inputs) == 1:
        # the usual task (id, one of inputs.prompt / prompt_file, graders): every other field
        # is its default, so it is not looked up (a dozen lookups and a dict a task)
        return make_task_spec(id=data["id"], name=data["id"], prompt=prompt, file=name, graders=tuple(graders),
                              raw=raw)
    return make_task_spec(
        id=data["id"], name=data.get("name") or data["id"], prompt=prompt, file=name,
        description=data.get("description", ""), tags=share_tags(data["tags"], shared) if "tags" in data else (),
        enabled=data.get("enabled", True), timeout_seconds=data.get("timeout_seconds"),
        context_dir=data.get("context_dir"),
        files=tuple(FileInput(f["path"], f.get("content")) for f in inputs["files"]) if "files" in inputs else (),
        context=dict(inputs.get("context") or {}),
        follow_up_prompts=tuple(inputs["follow_up_prompts"]) if "follow_up_prompts" in inputs else (),
        skill_directories=(tuple(_resolve_dirs(Path(name).parent, data["skill_directories"]))
                           if "skill_directories" in data else None),
        graders=tuple(graders), raw=raw,
        golden=bool(data.get("golden", False)),
        requirements=tuple(data["requirements"]) if data.get("requirements") else (),
        checkpoints=checkpoints,
        instruction_files=tuple(data["instruction_files"]) if data.get("instruction_files") else (),
        first_event_timeout_seconds=data.get("first_event_timeout_seconds"),
        responder=dict(inputs["responder"]) if "responder" in inputs else None,
    )


def _read_prompt_file(file: Path, text: str, rel: str, problems: Problems) -> str | None:
    if os.path.isabs(rel) or ".." in Path(rel).parts:
        problems.add(file, f"inputs.prompt_file {rel!r} must be a relative path inside the task's folder",
                     text, ("inputs", "prompt_file"))
        return None
    target = (file.parent / rel).resolve()
    if not target.is_relative_to(file.parent.resolve()):
        problems.add(file, f"inputs.prompt_file {rel!r} leaves the task's folder", text, ("inputs", "prompt_file"))
        return None
    try:
        return target.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        problems.add(file, f"cannot read inputs.prompt_file {display_path(target)}: {reason}",
                     text, ("inputs", "prompt_file"))
        return None


def _expectation_graders(expected: dict, file: Path, shown: str | None = None) -> list[GraderSpec]:
    """``expected.output_contains*`` become synthetic text checks, as in waza (Go).

    The other ``expected`` keys (``outcomes``, ``behavior``, ``tool_calls``,
    ``should_trigger``) are parsed and kept in the task's raw data; waza (Go) never
    scores them, and neither does waza for Python."""
    out = []
    for key in ("output_contains", "output_not_contains", "output_contains_any"):
        if expected.get(key):
            out.append(GraderSpec(type="_expected", name=f"_{key}", config={key: list(expected[key])},
                                  where=display_path(file) if shown is None else shown))
    return out


RESERVED_GRADER_NAMES = {"_output_contains", "_output_not_contains", "_output_contains_any"}


def _check_grader_names(global_graders: list[GraderSpec], tasks: list[TaskSpec], eval_file: Path,
                        problems: Problems) -> None:
    """Results are keyed by grader name. A task grader that reuses a global grader's
    name replaces that grader's result in the task's runs, as in waza (Go): a warning."""
    global_names = {g.name for g in global_graders}
    for i, g in enumerate(global_graders):
        if g.name in RESERVED_GRADER_NAMES:
            problems.add(eval_file, f"grader name {g.name!r} is reserved for expected.* checks", None,
                         ("graders", i, "name"))
    watched = global_names | RESERVED_GRADER_NAMES
    for t in tasks:
        for g in t.graders:
            if g.name in watched:
                break
        else:
            continue  # nothing to say about this task (the usual case)
        for i, g in enumerate(x for x in t.graders if x.type != "_expected"):
            if g.name in RESERVED_GRADER_NAMES:
                problems.add(t.file, f"grader name {g.name!r} is reserved for expected.* checks", None,
                             ("graders", i, "name"))
            elif g.name in global_names:
                problems.warn(t.file, f"grader name {g.name!r} is also a global grader's in "
                              f"{display_path(eval_file)}: in this task's results the task grader replaces it; "
                              "rename one to keep both", None, ("graders", i, "name"))


def _check_scripts(eval_file: Path, global_graders: list[GraderSpec], tasks: list[TaskSpec], hooks: Any,
                   problems: Problems) -> None:
    """Program grader and hook scripts exist (:mod:`waza_core.suite.script_paths`)."""
    suite_dir = eval_file.parent
    seen: dict[tuple, str | None] = {}

    def check(argv: list[str], base: str | None = None) -> str | None:
        argv = [script_paths.expand(a, str(suite_dir)) for a in argv]
        base = script_paths.expand(base, str(suite_dir)) if base else None
        key = (tuple(argv[:3]), base)
        if key not in seen:
            seen[key] = script_paths.problem(argv, suite_dir, base)
        return seen[key]

    def graders(file: Path, specs, prefix: tuple) -> None:
        for i, g in enumerate(x for x in specs if x.type != "_expected"):
            if g.type != "program" or not isinstance(g.config.get("command"), str):
                continue
            message = check([g.config["command"], *g.config.get("args", ())])
            if message:
                problems.add(file, f"program grader {g.name!r}: {message}", None, (*prefix, i, "config"))

    graders(eval_file, global_graders, ("graders",))
    for t in tasks:
        if t.checkpoints or _has_program(t.graders):
            graders(t.file, t.graders, ("graders",))
            for ci, cp in enumerate(t.checkpoints):
                graders(t.file, cp.graders, ("checkpoints", ci, "graders"))
    for point, entries in (hooks.items() if isinstance(hooks, dict) else ()):
        for i, h in enumerate(entries if isinstance(entries, list) else ()):
            if isinstance(h, dict) and isinstance(h.get("command"), str):
                wd = h.get("working_directory")
                message = check(h["command"].split(), wd if isinstance(wd, str) and wd else None)
                if message:
                    problems.add(eval_file, f"hooks.{point}[{i}]: {message}", None, ("hooks", point, i, "command"))


def _has_program(specs: tuple[GraderSpec, ...]) -> bool:
    for g in specs:  # a loop, not any(<generator>): once a task of every load (~0.3 us less)
        if g.type == "program":
            return True
    return False


def _check_unique_ids(tasks: list[TaskSpec], problems: Problems) -> None:
    first: dict[str, TaskSpec] = {}
    for t in tasks:
        if t.id in first:
            where = _task_where(t)
            problems.add(t.file, f"task id {t.id!r} is also used by {_task_where(first[t.id], full=True)}",
                         None, where[0], pos=where[1])
        else:
            first[t.id] = t


def _task_where(task: TaskSpec, full: bool = False):
    """(yaml path, position) of a task's id, or a description for messages when ``full``."""
    line = task.raw.get("line") if "tasks_from_row" in task.raw else None
    if full:
        return f"{display_path(task.filename)}:{line}" if line else display_path(task.filename)
    return (("id",), (line, 1) if line else None)


def _load_trigger_tests(eval_file: Path, problems: Problems) -> dict | None:
    # deferred: waza_core.suite adds ~5.6 ms to importing this module
    from waza_core.suite import trigger_tests

    return trigger_tests.load(eval_file.parent, problems)
