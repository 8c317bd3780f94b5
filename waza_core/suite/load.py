"""Loading an eval suite: ``eval.yaml`` plus its task files, checked all at once.

Every problem becomes one ``file:line:col: message`` line and all of them are raised
together as a :class:`~waza_core.errors.SuiteError`, so a user fixes a suite in one
pass. Grader configs are checked by each grader's own schema at load time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from waza_core.errors import SuiteError
from waza_core.model import FileInput, GraderSpec, Suite, SuiteConfig, TaskSpec
from waza_core.paths import display_path
from waza_core.suite import mocks as mock_checks
from waza_core.suite import schema as schemas
from waza_core.suite import yamlio
from waza_core.suite.cache import SuiteCache, stat_key


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, file: Path, message: str, text: str | None = None, path=(), key=None,
            pos: tuple[int, int] | None = None) -> None:
        if pos is None and text is None and (path or key):
            try:
                text = yamlio.read_text(file)
            except (OSError, UnicodeDecodeError):
                text = None
        if pos is None and text is not None:
            pos = yamlio.locate(text, path, key)
        where = display_path(file) + (f":{pos[0]}:{pos[1]}" if pos else "")
        self.items.append(f"{where}: {message}")


def _read_yaml(file: Path, problems: _Problems) -> tuple[Any, str | None]:
    try:
        text = yamlio.read_text(file)
    except FileNotFoundError:
        problems.add(file, "file not found")
        return None, None
    except UnicodeDecodeError as exc:
        problems.add(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        return None, None
    except OSError as exc:
        problems.add(file, f"cannot read: {exc.strerror}")
        return None, None
    try:
        data = yamlio.parse(text)
    except yamlio.YamlProblem as exc:
        pos = (exc.line, exc.col) if exc.line else None
        problems.add(file, exc.message, pos=pos)
        return None, None
    if not isinstance(data, dict):
        problems.add(file, f"expected a mapping at the top level, got {schemas._kind_of(data)}", pos=(1, 1))
        return None, None
    return data, text


def _check_schema(kind: str, data: dict, text: str, file: Path, registry, problems: _Problems) -> bool:
    errors = schemas.iter_errors(kind, registry, data)
    seen = set()
    for err in errors:
        for path, key, message in schemas.describe(err, kind):
            if message.startswith("unknown grader type"):
                message += registry.unavailable_note("grader", str(_value_at(data, path)))
            elif message.startswith("unknown key") and path == ("config",) and key:
                message += registry.config_key_note(key)
            if (path, message) in seen:
                continue
            seen.add((path, message))
            problems.add(file, message, text, path, key)
    return not errors


def _value_at(data: Any, path: tuple) -> Any:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _check_graders(entries: Any, base_path: tuple, text: str, file: Path, registry,
                   problems: _Problems, task: bool = False) -> None:
    """Run each grader's own config schema and load-time checks.

    Entries the document schema already rejected are skipped (their problem is reported),
    and so are ``ref`` entries: they are checked once resolved (:func:`_expand_refs`).
    """
    names: dict[str, int] = {}
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "ref" in entry:
            continue
        cls = registry.get("grader", entry.get("type")) if isinstance(entry.get("type"), str) else None
        config = entry.get("config") or {}
        if cls is None or not isinstance(config, dict):
            continue
        config_path = base_path + (i, "config")
        checks = entry.get("assertions")
        if checks is not None and not (isinstance(checks, list) and all(isinstance(c, str) for c in checks)):
            continue  # the document schema reported it
        config, problem = _entry_assertions(entry, config) if task else (config, None)
        if problem:
            problems.add(file, f"grader {entry['name']!r}: {problem}", text, base_path + (i,), "assertions")
            continue
        schema_errors = schemas.config_errors(cls, config)
        for err in schema_errors:
            for path, key, message in schemas.describe(err, "config"):
                where = config_path + path
                if path[:1] == ("assertions",) and entry.get("assertions"):
                    where = base_path + (i,) + path  # the list came from the entry, not from config
                problems.add(file, f"grader {entry['name']!r}: {message}", text, where, key)
        try:
            checks = [] if schema_errors else cls.check_config(config)
        except Exception as exc:  # a plugin's check itself failed: report, don't crash
            checks = [((), f"config check failed: {type(exc).__name__}: {exc}")]
        for sub_path, message in checks:
            problems.add(file, f"grader {entry['name']!r}: {message}", text, config_path + tuple(sub_path))
        if entry["name"] in names:
            problems.add(file, f"duplicate grader name {entry['name']!r} (also entry {names[entry['name']] + 1})",
                         text, base_path + (i, "name"))
        names[entry["name"]] = i


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


def _grader_specs(entries: list, file: Path) -> list[GraderSpec]:
    """Grader specs of a checked document."""
    where = display_path(file)
    return [GraderSpec(type=e["type"], name=e["name"], weight=float(e.get("weight", 1.0)),
                       config=_entry_assertions(e, e.get("config") or {})[0], where=f"{where} (graders[{i}])")
            for i, e in enumerate(entries)]


def _expand_refs(file: Path, entries: list, registry, problems: _Problems) -> list:
    """Replace each ``ref`` entry of eval.yaml by the grader it names (waza_core/suite/refs.py).

    Resolved graders get the same checks as written ones; every problem is reported at the
    entry's ``ref`` key."""
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


def _load_checked(file: Path, kind: str, registry, problems: _Problems, cache) -> dict | None:
    """Read, parse and check one document, through the cache; None when it has problems."""
    try:
        key = stat_key(file)
    except OSError:
        key = None
    if key is not None:
        data = cache.get(file, kind, key)
        if data is not None:
            return data
    before = len(problems.items)
    data, text = _read_yaml(file, problems)
    if data is None:
        return None
    free_form = (("inputs", "context"),) if kind == "task" else (("inputs",),)
    for where, value in yamlio.non_finite(data, skip=free_form):
        problems.add(file, f"{schemas._dotted(where) or 'value'}: {value} is not allowed (use a finite number)",
                     text, where)
    _check_schema(kind, data, text, file, registry, problems)
    mock_checks.check_document(kind, data, file, text, problems)
    _check_graders(data.get("graders") or [], ("graders",), text, file, registry, problems, task=kind == "task")
    if len(problems.items) > before:
        return None
    if key is not None:
        cache.put(file, kind, key, data)
    return data


def load_suite(path: str | Path, registry) -> Suite:
    """Load and check ``eval.yaml`` and every task file it names."""
    registry.check_conflicts()
    from waza_core.suite import project_config

    project_config.load()  # a .waza.yaml that is a folder or unreadable is exit 2 for every command
    file = Path(path).absolute()
    problems = _Problems()
    if file.is_dir():
        file = file / "eval.yaml"
    cache = SuiteCache(file, registry)
    data = _load_checked(file, "eval", registry, problems, cache)
    if data is None:
        # keep going with whatever parsed, so task problems are reported in the same pass
        raw, _ = _read_yaml(file, _Problems())
        data = raw if isinstance(raw, dict) else {}
        eval_ok = False
    else:
        eval_ok = True
    entries = data.get("graders") or []
    if eval_ok and any(isinstance(e, dict) and "ref" in e for e in entries):
        entries = _expand_refs(file, entries, registry, problems)
        eval_ok = not problems.items
    graders = _grader_specs(entries, file) if eval_ok else []
    globs = data.get("tasks")
    globs = [g for g in globs if isinstance(g, str) and g] if isinstance(globs, list) else []
    task_files = _expand_globs(file, None, globs, problems)
    tasks = []
    for tf in task_files:
        task = _load_task(tf, registry, problems, cache)
        if task is not None:
            tasks.append(task)
    _check_unique_ids(tasks, problems)
    _check_grader_names(graders, tasks, file, problems)
    mock_checks.check_suite(data, file, tasks, problems)
    cache.save()
    if problems.items:
        raise SuiteError(problems.items)
    cfg = data.get("config") or {}
    known = set(schemas.load("eval")["properties"]["config"]["properties"])
    config = SuiteConfig(
        trials_per_task=cfg.get("trials_per_task", 1),
        timeout_seconds=cfg.get("timeout_seconds", 300),
        parallel=cfg.get("parallel", False),
        workers=cfg.get("workers", cfg.get("max_workers", 4)),
        executor=cfg.get("executor", "mock"),
        model=cfg.get("model", ""),
        judge_model=cfg.get("judge_model", ""),
        max_attempts=max(1, cfg.get("max_attempts", 1)),
        fail_fast=cfg.get("fail_fast", False),
        skill_directories=tuple(_resolve_dirs(file.parent, cfg.get("skill_directories", []))),
        required_skills=tuple(cfg.get("required_skills", [])),
        disabled_skills=tuple(cfg.get("disabled_skills", [])),
        extra={k: v for k, v in cfg.items() if k not in known},
    )
    return Suite(
        name=data["name"], skill=data["skill"], file=file, config=config,
        tasks=tuple(t for t in tasks if t.enabled), graders=tuple(graders),
        description=data.get("description", ""), version=str(data.get("version", "")),
        metrics=tuple(data.get("metrics") or ()), inputs=dict(data.get("inputs") or {}),
        hooks=data.get("hooks"), baseline=bool(data.get("baseline", False)), raw=data,
    )


def _resolve_dirs(base: Path, dirs: list[str]) -> list[str]:
    return [str((base / d).resolve()) if not os.path.isabs(d) else d for d in dirs]


def _expand_globs(file: Path, text: str | None, patterns: list[str], problems: _Problems) -> list[Path]:
    out: list[Path] = []
    seen: set[Path] = set()
    base = file.parent
    for i, pattern in enumerate(patterns):
        if os.path.isabs(pattern):
            problems.add(file, f"task glob {pattern!r} must be relative to the eval file's folder",
                         text, ("tasks", i))
            continue
        matches = sorted(p for p in base.glob(pattern) if p.is_file())
        if not matches:
            problems.add(file, f"task glob {pattern!r} matches no file under {display_path(base)}",
                         text, ("tasks", i))
        real_base = base.resolve()
        for m in matches:
            # the rule of inputs.prompt_file, for links: a path that stays in the folder as
            # written must stay there once resolved (an explicit '..' is the author's choice)
            if Path(os.path.normpath(m)).is_relative_to(base) and not m.resolve().is_relative_to(real_base):
                problems.add(file, f"task glob {pattern!r}: {display_path(m)} leaves the suite's folder "
                             "through a symbolic link", text, ("tasks", i))
                continue
            if m not in seen:
                seen.add(m)
                out.append(m)
    return out


def _load_task(file: Path, registry, problems: _Problems, cache) -> TaskSpec | None:
    data = _load_checked(file, "task", registry, problems, cache)
    if data is None:
        return None
    text = None
    graders = _grader_specs(data.get("graders") or [], file)
    inputs = data["inputs"]
    prompt = inputs.get("prompt")
    if "prompt_file" in inputs:
        if prompt is not None:
            problems.add(file, "set either inputs.prompt or inputs.prompt_file, not both",
                         text, ("inputs",), "prompt_file")
            return None
        prompt = _read_prompt_file(file, text, inputs["prompt_file"], problems)
        if prompt is None:
            return None
    elif prompt is None:
        problems.add(file, "missing prompt: set inputs.prompt or inputs.prompt_file", text, ("inputs",))
        return None
    graders.extend(_expectation_graders(data.get("expected") or {}, file))
    return TaskSpec(
        id=data["id"], name=data.get("name") or data["id"], prompt=prompt, file=file,
        description=data.get("description", ""), tags=tuple(data.get("tags", ())),
        enabled=data.get("enabled", True), timeout_seconds=data.get("timeout_seconds"),
        context_dir=data.get("context_dir"),
        files=tuple(FileInput(f["path"], f.get("content")) for f in inputs.get("files", ())),
        context=dict(inputs.get("context") or {}),
        follow_up_prompts=tuple(inputs.get("follow_up_prompts", ())),
        skill_directories=(tuple(_resolve_dirs(file.parent, data["skill_directories"]))
                           if "skill_directories" in data else None),
        graders=tuple(graders), raw=data,
    )


def _read_prompt_file(file: Path, text: str, rel: str, problems: _Problems) -> str | None:
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


def _expectation_graders(expected: dict, file: Path) -> list[GraderSpec]:
    """``expected.output_contains*`` become synthetic text checks, as in waza (Go)."""
    out = []
    for key in ("output_contains", "output_not_contains", "output_contains_any"):
        if expected.get(key):
            out.append(GraderSpec(type="_expected", name=f"_{key}", config={key: list(expected[key])},
                                  where=display_path(file)))
    return out


RESERVED_GRADER_NAMES = {"_output_contains", "_output_not_contains", "_output_contains_any"}


def _check_grader_names(global_graders: list[GraderSpec], tasks: list[TaskSpec], eval_file: Path,
                        problems: _Problems) -> None:
    """Results are keyed by grader name, so one name must never stand for two graders:
    a task grader reusing a global name would silently replace its verdict."""
    global_names = {g.name for g in global_graders}
    for i, g in enumerate(global_graders):
        if g.name in RESERVED_GRADER_NAMES:
            problems.add(eval_file, f"grader name {g.name!r} is reserved for expected.* checks", None,
                         ("graders", i, "name"))
    for t in tasks:
        for i, g in enumerate(x for x in t.graders if x.type != "_expected"):
            if g.name in RESERVED_GRADER_NAMES:
                problems.add(t.file, f"grader name {g.name!r} is reserved for expected.* checks", None,
                             ("graders", i, "name"))
            elif g.name in global_names:
                problems.add(t.file, f"grader name {g.name!r} is already used by a global grader in "
                             f"{display_path(eval_file)}; give it another name", None, ("graders", i, "name"))


def _check_unique_ids(tasks: list[TaskSpec], problems: _Problems) -> None:
    first: dict[str, TaskSpec] = {}
    for t in tasks:
        if t.id in first:
            problems.add(t.file, f"task id {t.id!r} is also used by {display_path(first[t.id].file)}",
                         None, ("id",))
        else:
            first[t.id] = t
