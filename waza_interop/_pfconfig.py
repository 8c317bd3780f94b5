"""A promptfoo config (or an AgentV eval file) -> the tasks of a waza suite.

One task per (prompt, test), in file order: id ``t<j>`` with one prompt, ``p<i>-t<j>``
with several (1-based), the prompt rendered with the test's variables the way promptfoo
renders it (see :mod:`waza_interop._nunjucks`), the assertions (``defaultTest``'s first,
then the test's) mapped by :mod:`waza_interop._pfasserts`. Every problem is collected
with its ``file:line:col``; the caller refuses the whole config when there is any.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from waza_interop import _js
from waza_interop._csv import CsvError, read_csv
from waza_interop._csvsplit import js_trim, split_values
from waza_interop._nunjucks import Unrenderable, references_undefined, render, render_or_raw, resolve_variables
from waza_interop._pfasserts import Mapped, Refusal, map_assertion
from waza_interop._pfyaml import Doc, Foreign, SourceError, load_yaml

DEFAULT_PROMPT = "{{prompt}}"
ASSERTION_TYPES = (
    "agent-rubric answer-relevance bleu classifier contains contains-all contains-any contains-html "
    "contains-json contains-sql contains-xml context-faithfulness context-recall context-relevance "
    "conversation-relevance cost equals factuality finish-reason g-eval gleu guardrails icontains "
    "icontains-all icontains-any is-html is-json is-refusal is-sql is-valid-function-call "
    "is-valid-openai-function-call is-valid-openai-tools-call is-xml javascript latency levenshtein "
    "llm-rubric pi meteor model-graded-closedqa model-graded-factuality moderation perplexity "
    "perplexity-score python regex rouge-n ruby similar similar:cosine similar:dot similar:euclidean "
    "starts-with tool-call-f1 skill-used trajectory:goal-success trajectory:tool-args-match "
    "trajectory:step-count trajectory:tool-sequence trajectory:tool-used trace-error-spans "
    "trace-span-count trace-span-duration search-rubric webhook word-count").split()
_CSV_ASSERTION = re.compile(r"^(not-)?(" + "|".join(re.escape(t) for t in ASSERTION_TYPES)
                            + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$", re.ASCII)
_THRESHOLD_TYPES = {"answer-relevance", "classifier", "context-faithfulness", "context-recall",
                    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score", "perplexity",
                    "rouge-n", "similar", "starts-with"}
#: test keys that change the verdict or the output in ways a waza task cannot express
_TEST_REFUSED = {
    "assertScoringFunction": "a custom scoring function decides the test",
    "providerOutput": "the output is given in the file instead of produced by a provider",
}
#: file variables promptfoo runs (code) or encodes (media) instead of reading as text
_CODE_OR_MEDIA = {".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py", ".pdf", ".jpg", ".jpeg", ".png", ".gif",
                  ".bmp", ".webp", ".svg", ".tif", ".tiff", ".ico", ".avif", ".heic", ".heif", ".mp4", ".webm",
                  ".mov", ".avi", ".mkv", ".m4v", ".mp3", ".wav", ".ogg", ".flac", ".m4a", ".aac", ".opus"}
_OPTIONS_REFUSED = {"transform", "postprocess", "prefix", "suffix", "transformVars", "storeOutputAs"}
_TOP_REFUSED = {
    "scenarios": "scenarios multiply tests with their own variables",
    "extensions": "extension hooks can change tests and outputs",
    "redteam": "red-team configs generate their tests (and promptfoo eval stops to ask for an e-mail address)",
    "nunjucksFilters": "custom Nunjucks filters run JavaScript",
}


@attrs.define
class Task:
    id: str
    name: str
    prompt: str
    graders: list[dict]
    where: str
    notes: list[str] = attrs.field(factory=list)


@attrs.define
class SuiteModel:
    name: str
    description: str
    providers: list[str]
    tasks: list[Task]
    notes: list[str]
    source: str


@attrs.define
class _Test:
    data: dict
    doc: Doc
    path: tuple
    csv: bool = False


class Reader:
    """Reads one config; ``problems`` collects every refusal (``file:line:col: message``)."""

    def __init__(self, config: Path, approximate: bool, shown: str | None = None):
        self.config = config
        self.base = config.parent.resolve()
        self.approximate = approximate
        self.shown = shown or str(config)
        self._problems: dict[str, bool] = {}  # message -> inside an assertion (kept in order, once)
        self.notes: list[str] = []

    @property
    def problems(self) -> list[str]:
        """Every refusal once; those inside an assertion first (the usual reason to refuse)."""
        return [m for m, a in self._problems.items() if a] + [m for m, a in self._problems.items() if not a]

    def refuse(self, where: str, message: str, assertion: bool = False) -> None:
        self._problems.setdefault(f"{where}: {message}", assertion)

    def approx(self, where: str, message: str, note: str) -> bool:
        """Refuse, or with --approximate record ``note`` and return True (go on)."""
        if not self.approximate:
            self.refuse(where, message)
            return False
        self.notes.append(f"{where}: {message}; {note}")
        return True

    # ---- files ------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        try:
            return str(Path(self.shown).parent / path.relative_to(self.base))
        except ValueError:
            return str(path)

    def file_ref(self, text: str, doc: Doc, path: tuple) -> Path | None:
        name = text[7:] if text.startswith("file://") else text
        if _has_magic(name):
            matches = self.glob(name)
            if len(matches) != 1:
                self.refuse(doc.where(path), f"the file reference {text!r} is a glob that matches {len(matches)} "
                            "files; promptfoo takes them in the file system's order, so list the files instead")
                return None
            return matches[0]
        if ":" in name.replace("\\", "/").split("/")[-1]:
            self.refuse(doc.where(path), f"{text!r} names a function in a file; functions are not run")
            return None
        target = (self.base / name).resolve()
        if not target.is_file():
            self.refuse(doc.where(path), f"the file {name!r} does not exist (relative to the config's folder)")
            return None
        return target

    def glob(self, pattern: str) -> list[Path]:
        """The files a glob names, relative to the config's folder (brace sets and absolute
        patterns are not expanded here: they count as no match)."""
        if pattern.startswith("/") or "{" in pattern or ".." in Path(pattern).parts:
            return []
        try:
            return sorted(p.resolve() for p in self.base.glob(pattern) if p.is_file())
        except (ValueError, OSError):
            return []

    # ---- the config ---------------------------------------------------------------
    def read(self) -> SuiteModel | None:
        doc = load_yaml(self.config, self.shown)
        root = doc.data
        if not isinstance(root, dict):
            raise SourceError(f"{doc.where()}: expected a promptfoo config (a mapping), found "
                              f"{type(root).__name__}")
        for key, why in _TOP_REFUSED.items():
            if key in root:
                self.approx(doc.where((key,), key=True), f"{key} is not translated: {why}", "left out")
        prompts = self.prompts(doc, root)
        providers = self.providers(root)
        default = self.default_test(doc, root)
        tests = self.tests(doc, root) or [_Test({}, doc, ("tests",))]  # promptfoo runs one empty test
        tasks: list[Task] = []
        if not prompts:  # refused: go on with a stand-in, so the assertions are checked too
            prompts = [(DEFAULT_PROMPT, doc, ("prompts",))]
        if default is None:
            default = _Test({}, doc, ("defaultTest",))
        self.check_repeat(doc, root)
        several = len(prompts) > 1
        j = 0
        for test in tests:
            # promptfoo runs a test once per combination of its list variables (testIdx counts them)
            for variables in self.variables(test, default) or [None]:
                j += 1
                for i, (raw, pdoc, ppath) in enumerate(prompts, 1):
                    task_id = f"p{i}-t{j}" if several else f"t{j}"
                    task = self.task(task_id, raw, pdoc, ppath, test, default, variables)
                    if task is not None:
                        tasks.append(task)
        if self.problems:
            return None
        name = root.get("description") if isinstance(root.get("description"), str) else ""
        return SuiteModel(name=self.config.parent.name or "promptfoo", description=name or "",
                          providers=providers, tasks=tasks, notes=self.notes, source=self.shown)

    def providers(self, root: dict) -> list[str]:
        value = root.get("providers", root.get("targets"))
        items = value if isinstance(value, list) else [value] if value is not None else []
        out = []
        for item in items:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                pid = item.get("id") if isinstance(item.get("id"), str) else item.get("label")
                if isinstance(pid, str):
                    out.append(pid)
                elif len(item) == 1 and isinstance(next(iter(item)), str):
                    out.append(next(iter(item)))
        return out

    # ---- prompts ------------------------------------------------------------------
    def prompts(self, doc: Doc, root: dict):
        if "prompts" not in root or root["prompts"] is None:
            return [(DEFAULT_PROMPT, doc, ())]
        value = root["prompts"]
        entries: list[tuple[str, tuple]] = []
        if isinstance(value, str):
            entries.append((value, ("prompts",)))
        elif isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, str):
                    entries.append((item, ("prompts", k)))
                elif isinstance(item, dict) and isinstance(item.get("raw", item.get("id")), str):
                    if "function" in item or "config" in item:
                        self.refuse(doc.where(("prompts", k)), "a prompt with config or a function is not "
                                    "translated")
                        continue
                    entries.append((item.get("raw", item.get("id")), ("prompts", k, "raw" if "raw" in item else "id")))
                else:
                    self.refuse(doc.where(("prompts", k)), "a prompt must be a string or {raw|id, label}")
        elif isinstance(value, dict):
            for key in value:
                entries.append((key, ("prompts", key)))
        else:
            self.refuse(doc.where(("prompts",)), "prompts must be a string, a list or a mapping")
            return None
        out = []
        for raw, path in entries:
            out.extend(self.prompt_entry(raw, doc, path))
        if not out and not self.problems:
            self.refuse(doc.where(("prompts",)), "no prompts")
        return out

    def prompt_entry(self, raw: str, doc: Doc, path: tuple):
        if raw.startswith(("exec:", "portkey://", "langfuse://", "helicone://")):
            self.refuse(doc.where(path), f"the prompt {raw[:40]!r} is fetched or computed at run time")
            return []
        if not _maybe_file_path(raw):
            return [(raw, doc, path)]
        name = raw[7:] if raw.startswith("file://") else raw
        if not (self.base / name).is_file():
            if _has_magic(name) and not self.glob(name):
                return [(raw, doc, path)]  # promptfoo: a glob that matches nothing is the prompt text
            if _has_magic(name):
                target = self.file_ref(raw, doc, path)
                return [] if target is None else self.prompt_file(raw, target, doc, path)
            self.refuse(doc.where(path), f"promptfoo reads the prompt {raw[:60]!r} as a file path (it has no "
                        "newline and contains / or a file extension), and there is no such file, so promptfoo "
                        "stops with 'There are no prompts'")
            return []
        target = self.file_ref(raw, doc, path)
        if target is None:
            return []
        return self.prompt_file(raw, target, doc, path)

    def prompt_file(self, raw: str, target: Path, doc: Doc, path: tuple):
        suffix = target.suffix.lower()
        text = target.read_text(encoding="utf-8")
        if suffix == ".txt":
            return [(p, doc, path) for p in _split_txt(text)]
        if suffix == ".json":
            try:
                parsed = _js.parse_json(text)
            except ValueError:
                return [(text, doc, path)]
            if "file://" in text:
                self.refuse(doc.where(path), f"{raw}: the JSON prompt references other files")
                return []
            return [(_js.stringify(parsed, 0), doc, path)]
        if suffix == ".md":
            return [(text, doc, path)]
        if suffix in (".yaml", ".yml"):
            data = load_yaml(target, self.rel(target)).data
            if "file://" in text or _has_foreign(data):
                self.refuse(doc.where(path), f"{raw}: the YAML prompt references other files or holds dates")
                return []
            return [(_js.stringify(data, 0), doc, path)]
        self.refuse(doc.where(path), f"prompt files of type {suffix or '(none)'} are not translated "
                    "(.txt, .json, .yaml, .md)")
        return []

    # ---- tests --------------------------------------------------------------------
    def default_test(self, doc: Doc, root: dict):
        value = root.get("defaultTest")
        if value is None:
            return _Test({}, doc, ("defaultTest",))
        if isinstance(value, str):
            target = self.file_ref(value, doc, ("defaultTest",))
            if target is None:
                return None
            fdoc = load_yaml(target, self.rel(target))
            if not isinstance(fdoc.data, dict):
                self.refuse(fdoc.where(), "defaultTest must be a mapping")
                return None
            return _Test(fdoc.data, fdoc, ())
        if not isinstance(value, dict):
            self.refuse(doc.where(("defaultTest",)), "defaultTest must be a mapping")
            return None
        return _Test(value, doc, ("defaultTest",))

    def tests(self, doc: Doc, root: dict) -> list[_Test]:
        value = root.get("tests")
        if value is None:
            return [_Test({}, doc, ("tests",))]
        if isinstance(value, str):
            return self.test_file(value, doc, ("tests",))
        if isinstance(value, dict) and "path" in value:
            self.refuse(doc.where(("tests",)), "tests: {path, config} is not translated")
            return []
        if not isinstance(value, list):
            self.refuse(doc.where(("tests",)), "tests must be a list or a file reference")
            return []
        out = []
        for k, item in enumerate(value):
            if isinstance(item, str):
                out.extend(self.test_file(item, doc, ("tests", k)))
            elif isinstance(item, dict):
                out.append(_Test(item, doc, ("tests", k)))
            else:
                self.refuse(doc.where(("tests", k)), "a test must be a mapping or a file reference")
        return out

    def test_file(self, ref: str, doc: Doc, path: tuple) -> list[_Test]:
        target = self.file_ref(ref, doc, path)
        if target is None:
            return []
        shown = self.rel(target)
        suffix = target.suffix.lower()
        if suffix == ".csv":
            return self.csv_tests(target, shown)
        if suffix in (".yaml", ".yml", ".json"):
            fdoc = load_yaml(target, shown)
            data = fdoc.data
            if isinstance(data, dict):
                return [_Test(data, fdoc, ())]
            if isinstance(data, list):
                return [_Test(t, fdoc, (k,)) if isinstance(t, dict) else self._bad_test(fdoc, k)
                        for k, t in enumerate(data)]
            self.refuse(fdoc.where(), "a tests file must hold a list of tests")
            return []
        self.refuse(doc.where(path), f"test files of type {suffix or '(none)'} are not translated "
                    "(.csv, .yaml, .yml, .json)")
        return []

    def _bad_test(self, fdoc: Doc, k: int):
        self.refuse(fdoc.where((k,)), "a test must be a mapping")
        return _Test({}, fdoc, (k,))

    def csv_tests(self, target: Path, shown: str) -> list[_Test]:
        try:
            header, rows = read_csv(target.read_text(encoding="utf-8"))
        except CsvError as exc:
            self.refuse(f"{shown}:{exc.line}:{exc.col}", f"cannot read the CSV as promptfoo does: {exc}")
            return []
        out = []
        for row in rows:
            doc = Doc(shown, None)
            data: dict = {"vars": {}, "assert": []}
            metric = None
            for (name, _, _), (value, line, col) in zip(header, row, strict=True):
                key = js_trim(name)
                if key.startswith("__expected"):
                    if js_trim(value) != "":
                        k = len(data["assert"])
                        data["assert"].append(_assertion_from_string(js_trim(value)))
                        doc.positions[("assert", k)] = (line, col)
                elif key == "__description":
                    data["description"] = value
                elif key == "__metric":
                    metric = value
                elif key == "__threshold":
                    if js_trim(value):
                        data["threshold"] = value
                        doc.positions[("threshold",)] = (line, col)
                        doc.key_positions[("threshold",)] = (line, col)
                elif key in ("__prefix", "__suffix", "__providerOutput") or key.startswith("__config:"):
                    if value != "" or key.startswith("__config:"):
                        self.refuse(f"{shown}:{line}:{col}", f"the column {key} is not translated")
                elif key.startswith("__metadata"):
                    pass
                else:
                    data["vars"][key] = value
                    doc.positions[("vars", key)] = (line, col)
            for a in data["assert"]:
                if metric:
                    a["metric"] = metric
            doc.positions[()] = (row[0][1], row[0][2]) if row else (1, 1)
            doc.data = data
            out.append(_Test(data, doc, (), csv=True))
        return out

    # ---- one task -----------------------------------------------------------------
    def check_repeat(self, doc: Doc, root: dict) -> None:
        options = root.get("evaluateOptions")
        repeat = options.get("repeat") if isinstance(options, dict) else None
        if repeat not in (None, 1):
            self.refuse(doc.where(("evaluateOptions", "repeat")), "evaluateOptions.repeat runs each test "
                        "several times, each with its own result; set trials_per_task in waza instead")

    def task(self, task_id: str, raw: str, pdoc: Doc, ppath: tuple, test: _Test, default: _Test,
             variables: dict | None):
        t, d = test.data, default.data
        where_test = test.doc.where(test.path)
        ok = True
        for src in (d, t):
            owner = default if src is d else test
            for key, why in _TEST_REFUSED.items():
                if key in src and src[key] is not None:
                    if not self.approx(owner.doc.where(owner.path + (key,), key=True), f"{key} is not "
                                       f"translated: {why}", "left out: every assertion must pass"):
                        ok = False
            for key in ("prompts", "providers"):
                if src.get(key) is not None:
                    self.refuse(owner.doc.where(owner.path + (key,), key=True), f"{key} on a test selects which "
                                f"{key} run it; write the suite for the ones that do")
                    ok = False
            options = src.get("options")
            if isinstance(options, dict):
                if options.get("repeat") not in (None, 1):
                    self.refuse(owner.doc.where(owner.path + ("options", "repeat")), "options.repeat runs the "
                                "test several times; set trials_per_task in waza instead")
                    ok = False
                for key in options:
                    if key in _OPTIONS_REFUSED:
                        if not self.approx(owner.doc.where(owner.path + ("options", key), key=True),
                                           f"options.{key} changes the prompt or the graded output",
                                           "left out"):
                            ok = False
        if variables is None:
            ok = False
            variables = {"resolved": {}}
        prompt = ""
        try:
            prompt = render_prompt(raw, variables)
        except (Unrenderable, _js.NotJs) as exc:
            if ok:
                self.refuse(pdoc.where(ppath), f"the prompt cannot be rendered exactly for test {task_id}: {exc}")
            ok = False
        graders: list[dict] = []
        notes: list[str] = []
        options = t.get("options") if isinstance(t.get("options"), dict) else {}
        skip_default = options.get("disableDefaultAsserts") is True
        items = ([] if skip_default else self.assertions(default)) + self.assertions(test)
        threshold_owner = test if t.get("threshold") is not None else default
        threshold = threshold_owner.data.get("threshold")
        if threshold is not None and items and not self.threshold_is_all_pass(threshold, items):
            where = threshold_owner.doc.where(threshold_owner.path + ("threshold",), key=True)
            if not self.approx(where, f"threshold {threshold!r}: the test passes on a weighted mean score "
                               "that can reach the threshold with an assertion failing (or never reach it); a "
                               "waza task needs every grader to pass", "left out: every assertion must pass"):
                ok = False
        for k, (item, owner, path) in enumerate(items, 1):
            self.map_one(item, owner, path, variables["resolved"], f"assertion {k} of {task_id}", graders, notes)
        names: set[str] = set()
        for n, g in enumerate(graders, 1):
            label = g.pop("label", g["type"])
            base = g.pop("metric", None) or f"a{n}-{label}"
            name = base if base not in names else f"{base}-{n}"
            names.add(name)
            g["name"] = name
        self.notes.extend(n for n in map(_general, notes) if n not in self.notes)
        if not ok:
            return None
        desc = t.get("description") if isinstance(t.get("description"), str) else None
        return Task(task_id, desc or task_id, prompt, graders, where_test, notes)

    def var_file(self, ref: str, where: str, key: str):
        """The value promptfoo puts in a ``file://`` variable: a text file's content, trimmed;
        a YAML file's data as compact JSON. Code, media and globs are refused (None)."""
        name = ref[7:]
        suffix = Path(name).suffix.lower()
        if _has_magic(name):
            self.refuse(where, f"the variable {key!r} names a glob of files: promptfoo runs the test once per "
                        "file; list the tests")
            return None
        if suffix in _CODE_OR_MEDIA:
            self.refuse(where, f"the variable {key!r} is loaded from a {suffix} file, which promptfoo runs or "
                        "encodes; inline the value")
            return None
        target = self.base / name
        if not target.is_file():
            self.refuse(where, f"the variable {key!r} names {name!r}, which does not exist")
            return None
        if suffix in (".yaml", ".yml"):
            data = load_yaml(target, self.rel(target)).data
            if _has_foreign(data):
                self.refuse(where, f"the variable {key!r}: the YAML file holds dates or other non-JSON values")
                return None
            return _js.stringify(data, 0)
        try:
            return js_trim(target.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            self.refuse(where, f"the variable {key!r} names a file that is not UTF-8 text")
            return None

    def threshold_is_all_pass(self, threshold, items) -> bool:
        """Whether promptfoo's "weighted mean >= threshold" is "every assertion passes" for
        these assertions: each scores 0 or 1 (not javascript, not assert-set), and dropping
        any single one falls below the threshold, while all passing (1.0) reaches it."""
        if isinstance(threshold, str):
            try:
                threshold = float(threshold)
            except ValueError:
                return False
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            return False
        weights = []
        for item, owner, path in items:
            if isinstance(item, dict) and set(item) == {"$ref"}:
                item = self.deref(item["$ref"], owner.doc, path)[0]
            if not isinstance(item, dict):
                return False
            kind = str(item.get("type", ""))
            if kind.removeprefix("not-") in ("javascript", "assert-set"):
                return False
            weight = item.get("weight", 1)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
                return False
            weights.append(float(weight))
        total = sum(weights)
        return all((total - w) / total < threshold - 1e-9 for w in weights)

    def assertions(self, test: _Test):
        value = test.data.get("assert")
        if value is None:
            return []
        if not isinstance(value, list):
            self.refuse(test.doc.where(test.path + ("assert",)), "assert must be a list")
            return []
        return [(item, test, test.path + ("assert", k)) for k, item in enumerate(value)]

    def map_one(self, item, owner: _Test, path: tuple, variables: dict, label: str, graders, notes) -> None:
        doc = owner.doc
        if isinstance(item, dict) and set(item) == {"$ref"}:
            item, path, doc = self.deref(item["$ref"], doc, path)
            if item is None:
                return
        if isinstance(item, dict) and item.get("type") == "assert-set":
            if item.get("threshold") is not None or item.get("weight") == 0:
                key = "threshold" if item.get("threshold") is not None else "weight"
                if not self.approx(doc.where(path + (key,)), f"{label}: an assert-set with a {key} passes on "
                                   "a score, not on every assertion", "flattened: every assertion must pass"):
                    return
            subs = item.get("assert")
            if not isinstance(subs, list):
                self.refuse(doc.where(path), f"{label}: assert-set needs an assert list")
                return
            for s, sub in enumerate(subs, 1):
                self.map_one(sub, _Test(owner.data, doc, owner.path), path + ("assert", s - 1), variables,
                             f"{label}.{s}", graders, notes)
            return

        def where(sub: tuple = (), key: bool = False) -> str:
            return doc.where(path + sub, key=key)

        result = map_assertion(item, where, variables, self.approximate, label)
        if isinstance(result, Refusal):
            self.refuse(result.where, _general(result.message), assertion=True)
            return
        assert isinstance(result, Mapped)
        metric = item.get("metric") if isinstance(item, dict) else None
        kind = item.get("type") if isinstance(item, dict) else "assertion"
        for g in result.graders:
            g["label"] = kind
            if isinstance(metric, str) and metric.strip() and "{{" not in metric and len(result.graders) == 1:
                g["metric"] = metric.strip()
        graders.extend(result.graders)
        notes.extend(result.notes)

    def deref(self, ref, doc: Doc, path: tuple):
        if not isinstance(ref, str) or not ref.startswith("#/"):
            self.refuse(doc.where(path), f"$ref {ref!r} is not a reference inside this config")
            return None, path, doc
        root_doc = load_yaml(self.config, self.shown) if doc.file != self.shown else doc
        node, target = root_doc.data, ()
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node, target = node[part], target + (part,)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node, target = node[int(part)], target + (int(part),)
            else:
                self.refuse(doc.where(path), f"$ref {ref!r} points at nothing")
                return None, path, doc
        return node, target, root_doc

    def variables(self, test: _Test, default: _Test) -> list[dict] | None:
        """One resolved variable set per combination promptfoo runs (None: refused)."""
        merged: dict = {}
        bad = False
        for owner in (default, test):
            value = owner.data.get("vars")
            if value is None:
                continue
            if not isinstance(value, dict):
                self.refuse(owner.doc.where(owner.path + ("vars",)), "vars must be a mapping (file:// vars "
                            "files are not translated)")
                return None
            for key, v in value.items():
                where = owner.doc.where(owner.path + ("vars", key))
                if isinstance(v, list) and any(isinstance(x, str) and x.startswith("file://") for x in v):
                    self.refuse(where, f"the variable {key!r} lists files: promptfoo runs the test once per file "
                                "and loads each; list the tests")
                    bad = True
                elif isinstance(v, str) and v.startswith("package:"):
                    self.refuse(where, f"the variable {key!r} is computed by a package's code")
                    bad = True
                elif isinstance(v, str) and v.startswith("file://"):
                    v = self.var_file(v, where, key)
                    bad = bad or v is None
                elif _has_foreign(v):
                    self.refuse(where, f"the variable {key!r} holds a value JavaScript reads differently "
                                "(a date, binary...); quote it")
                    bad = True
                merged[key] = v
        if bad:
            return None
        options = [o for o in (test.data.get("options"), default.data.get("options")) if isinstance(o, dict)]
        expand = not any(o.get("disableVarExpansion") for o in options[:1])
        out = []
        for combo in (_combinations(merged) if expand else [merged]):
            stripped = {k: (v[:-1] if isinstance(v, str) and v.endswith("\n") else v) for k, v in combo.items()}
            try:
                resolved = resolve_variables(stripped)
            except Unrenderable as exc:
                self.refuse(test.doc.where(test.path), f"the variables cannot be resolved exactly: {exc}")
                return None
            out.append({"resolved": resolved})
        return out


def _combinations(variables: dict) -> list[dict]:
    """promptfoo's ``generateVarCombinations``: a list whose first item is a string gives one
    test per item (the first variable varies slowest); other lists stay one value."""
    combos: list[dict] = [{}]
    for key, value in variables.items():
        values = value if isinstance(value, list) and value and isinstance(value[0], str) else [value]
        combos = [{**c, key: v} for c in combos for v in values]
    return combos


def _general(message: str) -> str:
    """A refusal message without the task id, so the same assertion refused for every task
    (a defaultTest assertion, or several prompts) is reported once."""
    return re.sub(r"(^|: )assertion (\d+(?:\.\d+)*) of (?:p\d+-)?t\d+", r"\1assertion \2", message)


def render_prompt(raw: str, variables: dict) -> str:
    """promptfoo's ``renderPrompt`` for a text or JSON prompt."""
    resolved = variables["resolved"]
    try:
        parsed = _js.parse_json(raw)
    except _js.NotJs:
        raise
    except ValueError:
        parsed = _NOT_JSON
    if parsed is not _NOT_JSON:
        return _js.stringify(_render_object(parsed, resolved), 2)
    rendered = {}
    for key, value in resolved.items():
        if isinstance(value, str) and not references_undefined(value, resolved):
            rendered[key] = render_or_raw(value, resolved)
        else:
            rendered[key] = value
    return render_or_raw(raw, rendered)


_NOT_JSON = object()


def _render_object(value, variables):
    if isinstance(value, str):
        return render(value, variables)
    if isinstance(value, list):
        return [_render_object(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _render_object(v, variables) for k, v in value.items()}
    return value


def _has_foreign(value) -> bool:
    if isinstance(value, Foreign):
        return True
    if isinstance(value, dict):
        return any(_has_foreign(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_foreign(v) for v in value)
    return False


def _maybe_file_path(text: str) -> bool:
    """promptfoo's ``maybeFilePath``: which prompt strings it reads as file paths."""
    if any(s in text for s in ("\n", "portkey://", "langfuse://", "helicone://")):
        return False
    if text.startswith("file://"):
        return True
    exts = (".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md", ".mjs", ".mts", ".py", ".ts", ".txt", ".yml",
            ".yaml")  # promptfoo's VALID_FILE_EXTENSIONS
    tokens = text.split(":")
    last = tokens[-1]
    before = tokens[-2] if len(tokens) > 1 else None
    if any(last.endswith(e) or (before is not None and before.endswith(e)) for e in exts):
        return True
    return (len(text) >= 3 and text[-3] == ".") or (len(text) >= 4 and text[-4] == ".") or \
        "*" in text or "/" in text or "\\" in text


def _has_magic(text: str) -> bool:
    """minimatch's ``hasMagic``: glob characters that make promptfoo search for files."""
    return bool(re.search(r"[*?]|\[[^\]]+\]|\{[^{}]*(,|\.\.)[^{}]*\}|[+@!]\(", text))


def _split_txt(text: str) -> list[str]:
    """promptfoo's ``processTxtFile``: prompts separated by ``---`` lines, each trimmed."""
    prompts, buffer = [], []
    for line in re.split(r"\r?\n", text):
        if js_trim(line) == "---":
            raw = js_trim("\n".join(buffer))
            if raw:
                prompts.append(raw)
            buffer = []
        else:
            buffer.append(line)
    raw = js_trim("\n".join(buffer))
    if raw:
        prompts.append(raw)
    return prompts


def _assertion_from_string(expected: str) -> dict:
    """promptfoo's ``assertionFromString`` (a CSV ``__expected`` cell)."""
    for prefix, kind in (("javascript:", "javascript"), ("fn:", "javascript"), ("eval:", "javascript")):
        if expected.startswith(prefix):
            return {"type": kind, "value": js_trim(expected[len(prefix):])}
    if expected.startswith("grade:") or expected.startswith("llm-rubric:"):
        return {"type": "llm-rubric", "value": expected.split(":", 1)[1]}
    if expected.startswith("python:") or (expected.startswith("file://") and
                                          (expected.endswith(".py") or ".py:" in expected)):
        return {"type": "python", "value": js_trim(expected[7:])}
    if expected.startswith("file://") and expected.split(":")[1].endswith((".js", ".cjs", ".mjs", ".ts")):
        return {"type": "javascript", "value": js_trim(expected)}
    m = _CSV_ASSERTION.match(expected)
    if m:
        inverse, kind, threshold, value = m.groups()
        full = f"not-{kind}" if inverse else kind
        if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
            return {"type": full, "value": split_values(value) if value else value}
        if kind in ("contains-json", "is-json"):
            return {"type": full, "value": value}
        if kind in _THRESHOLD_TYPES:
            out = {"type": full, "value": js_trim(value) if value is not None else None}
            out["threshold"] = float(threshold) if threshold else (0.8 if kind == "similar" else 0.75)
            return out
        return {"type": full, "value": js_trim(value) if value is not None else None}
    return {"type": "equals", "value": expected}
