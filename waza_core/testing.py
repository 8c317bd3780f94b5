"""Helpers for testing waza plugins: grade one output, run a whole suite, script an agent.

Public and documented (docs/plugins.md, "Testing a plugin"); plugin authors use it
from their own pytest files, and waza's own tests use it too::

    from waza_core import testing

    def test_counts_words():
        result = testing.grade(WordCountGrader, "one two three", config={"min": 2, "max": 5})
        assert result.passed and result.details == {"words": 3}

    def test_whole_suite(tmp_path):
        agent = testing.scripted_executor({"greet": "HELLO THERE"})
        run = testing.run_suite({"graders": [{"type": "shout", "name": "caps"}]},
                                tasks=[{"id": "greet", "inputs": {"prompt": "say hello"}}],
                                executor=agent, plugins=[ShoutGrader], folder=tmp_path)
        assert run.exit_code == 0 and run.validation("greet", "caps")["passed"]

Nothing here needs the network, a model or an installed plugin: plugin classes and
modules are registered for the one call, next to the built-ins, and ``run_suite``
drives the real ``waza run`` command in this process (same loading, checks, results
file and exit code as a user gets).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import threading
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Union

import attrs

import waza_core
from waza_core.cli import main
from waza_core.errors import ExecutorError, SuiteError, WazaError
from waza_core.grading.base import Grader, GraderSetup, GradingContext
from waza_core.model import GraderResult, GraderSpec, RunEvidence, Suite, SuiteConfig, TaskSpec
from waza_core.run.execution import ExecutionRequest, Executor

if TYPE_CHECKING:
    from waza_core.plugins import Registry

__all__ = [
    "Answer",
    "ScriptedExecutor",
    "SuiteRun",
    "config_problems",
    "grade",
    "make_registry",
    "render_report",
    "run_suite",
    "scripted_executor",
    "write_suite",
]

#: a plugin for :func:`make_registry`: a plugin class, a module, or a module name
PluginLike = Union[type, types.ModuleType, str, object]
#: a file or folder path
PathArg = Union[str, "os.PathLike[str]"]


# -- registries ------------------------------------------------------------------------

def make_registry(plugins: Iterable[PluginLike] = (), *, autoload: bool = False) -> Registry:
    """The built-ins plus ``plugins``; installed plugins too when ``autoload`` is true.

    A plugin is a class derived from one of the plugin base classes (``Grader``,
    ``Executor``, ``OptimizerAdapter``, ``Dialect``, ``Reporter``), registered as is;
    a module (or module name) with hook implementations; or any object with them.
    """
    # deferred: waza_core.plugins adds ~7.1 ms to importing this module
    from waza_core.plugins import BASES, build_plugin_manager

    modules: list[str] = []
    objects: dict[str, object] = {}
    for plugin in plugins:
        if isinstance(plugin, str):
            modules.append(plugin)
        elif isinstance(plugin, type) and not _has_hooks(plugin):
            kind = next((k for k, base in BASES.items() if issubclass(plugin, getattr(waza_core, base))), None)
            if kind is None:
                raise TypeError(f"{plugin!r} has no hook implementation and derives from none of "
                                f"waza_core.{', waza_core.'.join(BASES.values())}")
            objects[f"{plugin.__module__}.{plugin.__qualname__}"] = _class_plugin(kind, plugin)
        else:
            objects[getattr(plugin, "__qualname__", None) or getattr(plugin, "__name__", None)
                    or f"plugin-{id(plugin)}"] = plugin
    with _env(WAZA_DISABLE_PLUGIN_AUTOLOAD="0" if autoload else "1"):
        return build_plugin_manager(modules, extra_plugins=objects)[1]


def _has_hooks(obj: object) -> bool:
    # deferred: waza_core.hookspecs adds ~5.2 ms to importing this module
    from waza_core.hookspecs import PROJECT

    return any(hasattr(getattr(obj, name, None), f"{PROJECT}_impl") for name in dir(obj))


def _class_plugin(kind: str, cls: type) -> object:
    # deferred: waza_core.hookspecs adds ~4.4 ms to importing this module
    from waza_core.hookspecs import hookimpl
    from waza_core.plugins import KINDS

    hook_name = KINDS[kind][0]

    def hook(register: Callable[[type], None]) -> None:
        register(cls)

    hook.__name__ = hook_name
    return types.SimpleNamespace(**{hook_name: hookimpl(hook)})


@contextlib.contextmanager
def _env(**values: str | None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# -- one grader on one output ----------------------------------------------------------

def config_problems(grader: type[Grader] | str, config: Mapping[str, Any] | None = None) -> list[str]:
    """What ``waza validate`` would say about a grader entry's ``config``: the schema's
    complaints, then :meth:`Grader.check_config`'s. Empty when the config is fine."""
    # deferred: waza_core.suite adds ~4.2 ms to importing this module
    from waza_core.suite import schema

    cls = _grader_class(grader)
    config = dict(config or {})
    problems = []
    for err in schema.config_errors(cls, config):
        for path, _key, message in schema.describe(err, "config"):
            problems.append(_at(path, message))
    if not problems:
        problems.extend(_at(tuple(path), message) for path, message in cls.check_config(config))
    return problems


def _at(path: tuple[Any, ...], message: str) -> str:
    return f"config.{'.'.join(map(str, path))}: {message}" if path else message


def _grader_class(grader: type[Grader] | str) -> type[Grader]:
    if isinstance(grader, str):
        # deferred: waza_core.plugins adds ~6.3 ms to importing this module
        from waza_core.plugins import get_registry

        with _env(WAZA_DISABLE_PLUGIN_AUTOLOAD="1"):
            registry = get_registry([])  # the built-ins, built once per process
        cls: type[Grader] | None = registry.get("grader", grader)
        if cls is None:
            raise WazaError(registry.unknown("grader", grader))
        return cls
    if not (isinstance(grader, type) and issubclass(grader, Grader)):
        raise TypeError(f"{grader!r} is not a waza_core.Grader subclass nor a grader type name")
    return grader


def grade(grader: type[Grader] | str, output: str = "", *, config: Mapping[str, Any] | None = None,
          evidence: RunEvidence | None = None, workspace: PathArg | Mapping[str, str | bytes] | None = None,
          prompt: str = "", task: TaskSpec | None = None, name: str | None = None, weight: float = 1.0,
          suite_dir: PathArg | None = None, setup: GraderSetup | None = None,
          baseline_output: str | None = None) -> GraderResult:
    """Grade one run with one grader, as the run loop would, and return its result.

    ``grader`` is a grader class or a registered ``type:`` name (``"text"``). The run's
    evidence is ``evidence``, or the output text ``output``. ``workspace`` is the run's
    folder: a path, or a mapping of relative path to content written into a temporary
    folder (removed afterwards). ``config`` is checked first, as at load time: a bad
    one raises :class:`SuiteError` listing the problems. The grader is started with
    ``setup`` (default: an empty :class:`GraderSetup`) and closed afterwards.

    A :class:`GraderError` from the grader propagates, so a test can expect it; the
    run loop would record it as a ``grader error`` and mark the run ``error``.
    """
    cls = _grader_class(grader)
    if evidence is not None and output:
        raise ValueError("give either output or evidence, not both")
    problems = config_problems(cls, config)
    if problems:
        raise SuiteError([f"grader {name or cls.name!r}: {p}" for p in problems])
    with _workspace(workspace) as ws:
        base = Path(suite_dir) if suite_dir is not None else Path(ws or os.getcwd())
        the_task = task or TaskSpec(id="task", name="task", prompt=prompt, file=base / "tasks" / "task.yaml")
        suite = Suite(name="test-suite", skill="test", file=base / "eval.yaml", config=SuiteConfig(),
                      tasks=(the_task,))
        spec = GraderSpec(type=cls.name, name=name or cls.name, weight=weight, config=dict(config or {}),
                          where="waza_core.testing.grade")
        instance = cls(spec, suite)
        instance.start(setup or GraderSetup(cancel=threading.Event()))
        try:
            ctx = GradingContext(task=the_task, evidence=evidence or RunEvidence(output=output), workspace_dir=ws,
                                 suite=suite, cancel=threading.Event(), baseline_output=baseline_output)
            return instance.grade(ctx)
        finally:
            instance.close()


@contextlib.contextmanager
def _workspace(workspace: PathArg | Mapping[str, str | bytes] | None) -> Iterator[str | None]:
    if workspace is None:
        yield None
    elif isinstance(workspace, Mapping):
        with tempfile.TemporaryDirectory(prefix="waza-test-ws-") as folder:
            _write_files(Path(folder), workspace)
            yield folder
    else:
        yield os.fspath(workspace)


def _write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            dest.write_bytes(content)
        else:
            dest.write_text(content, encoding="utf-8")


# -- a scripted agent ------------------------------------------------------------------

@attrs.frozen
class Answer:
    """What the scripted agent does for one run.

    ``output`` is its final answer; ``tool_calls`` are recorded as is (dicts with at
    least ``name``); ``files`` are written into the run's workspace (the agent's edits);
    ``error`` makes the run fail to execute (the run becomes ``error`` with this
    message, and no grader runs). ``evidence`` replaces everything else when given.
    """

    output: str = ""
    tool_calls: Sequence[Mapping[str, Any]] = ()
    transcript: Sequence[Mapping[str, Any]] | None = None
    files: Mapping[str, str | bytes] = attrs.field(factory=dict)
    usage: Mapping[str, Any] | None = None
    error: str | None = None
    evidence: RunEvidence | None = None

    def to_evidence(self, request: ExecutionRequest) -> RunEvidence:
        if self.error is not None:
            raise ExecutorError(self.error)
        if self.files:
            if request.workspace_dir is None:  # pragma: no cover - ScriptedExecutor needs a workspace
                raise ExecutorError("a scripted answer with files needs a workspace")
            _write_files(Path(request.workspace_dir), self.files)
        if self.evidence is not None:
            return self.evidence
        transcript = self.transcript if self.transcript is not None else \
            [{"type": "assistant.message", "content": self.output}]
        return RunEvidence(output=self.output, transcript=[dict(t) for t in transcript],
                           tool_calls=[dict(c) for c in self.tool_calls],
                           usage=dict(self.usage) if self.usage is not None else None,
                           session_id=f"scripted-{request.task.id}-{request.run_number}-{request.attempt}")


#: one scripted reply: an :class:`Answer`, an output string, an exception to raise, or
#: a list of those used one after the other (the last one repeats)
Reply = Union[Answer, str, BaseException, Sequence[Union[Answer, str, BaseException]]]


class ScriptedExecutor(Executor):
    """An executor that answers from a script instead of running an agent.

    Make one with :func:`scripted_executor`. Each subclass keeps its own ``script`` and
    records every :class:`ExecutionRequest` it got in ``requests`` (in call order).
    """

    name: ClassVar[str] = "scripted"
    paid: ClassVar[bool] = False
    script: ClassVar[Mapping[str, Reply]] = {}
    default: ClassVar[Reply | None] = None
    requests: ClassVar[list[ExecutionRequest]] = []
    _calls: ClassVar[dict[str, int]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.requests, cls._calls, cls._lock = [], {}, threading.Lock()  # each script counts its own calls

    def execute(self, request: ExecutionRequest) -> RunEvidence:
        cls = type(self)
        key = request.task.id if request.task.id in cls.script else request.prompt
        reply = cls.script.get(key, cls.default)
        with cls._lock:
            cls.requests.append(request)
            index = cls._calls.get(key, 0)
            cls._calls[key] = index + 1
        if reply is None:
            raise ExecutorError(f"no scripted answer for task {request.task.id!r} "
                                f"(prompt {request.prompt!r}) and no default")
        if isinstance(reply, Sequence) and not isinstance(reply, str):
            if not reply:
                raise ExecutorError(f"the scripted answers for {key!r} are an empty list")
            reply = reply[min(index, len(reply) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        answer = Answer(output=reply) if isinstance(reply, str) else reply
        return answer.to_evidence(request)


def scripted_executor(script: Mapping[str, Reply] | None = None, *, default: Reply | None = None,
                      name: str = "scripted") -> type[ScriptedExecutor]:
    """A new :class:`ScriptedExecutor` class answering from ``script``.

    ``script`` maps a task id (looked up first) or a prompt text to a reply: an
    :class:`Answer`, an output string, an exception instance to raise (an
    ``ExecutorError`` makes the run ``error``), or a list of those used by successive
    runs of that task (trials, retries; the last one repeats). ``default`` answers
    everything else; without it an unscripted run is an executor error.
    """
    return type(f"ScriptedExecutor_{name}", (ScriptedExecutor,), {
        "name": name, "script": dict(script or {}), "default": default,
    })


# -- a whole suite ---------------------------------------------------------------------

SuiteText = Union[Mapping[str, Any], str]


def write_suite(folder: PathArg, suite: SuiteText, tasks: Mapping[str, SuiteText]
                | Sequence[Mapping[str, Any]] | None = None, files: Mapping[str, str | bytes] | None = None) -> Path:
    """Write ``eval.yaml``, task files and other files into ``folder``; returns eval.yaml.

    ``suite`` is the eval document as a mapping or YAML text; a mapping without
    ``name``, ``skill``, ``tasks`` or ``allow_ungraded`` gets ``test-suite``, ``test``,
    ``["tasks/*.yaml"]`` and ``true`` (a suite that tests an executor or a reporter
    need not grade; ``waza run`` refuses a task that nothing grades otherwise).
    ``tasks`` is a list of task mappings (written as ``tasks/<id>.yaml``) or a
    mapping of file name to mapping or YAML text. ``files``
    maps relative paths to contents (fixtures, programs).
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    if isinstance(suite, Mapping):
        suite = {"name": "test-suite", "skill": "test", "tasks": ["tasks/*.yaml"], "allow_ungraded": True, **suite}
    documents: dict[str, SuiteText] = {"eval.yaml": suite}
    if isinstance(tasks, Mapping):
        documents.update(tasks)
    else:
        for i, task in enumerate(tasks or ()):
            documents[f"tasks/{task.get('id', f'task{i + 1}')}.yaml"] = task
    for rel, doc in documents.items():
        # JSON is YAML: a mapping is written exactly, with no YAML quoting surprises
        text = doc if isinstance(doc, str) else json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        _write_files(root, {rel: text})
    _write_files(root, files or {})
    return root / "eval.yaml"


@attrs.frozen
class SuiteRun:
    """What :func:`run_suite` saw: the exit code, the results document (``None`` when
    the run could not start, e.g. exit 2), and what the command printed."""

    exit_code: int
    results: dict[str, Any] | None
    stdout: str
    stderr: str
    eval_file: Path

    @property
    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = self._results()["summary"]
        return summary

    def task(self, task_id: str) -> dict[str, Any]:
        """The results entry of one task."""
        entry: dict[str, Any]
        for entry in self._results()["tasks"]:
            if entry["test_id"] == task_id:
                return entry
        raise KeyError(f"no task {task_id!r} in the results")

    def run(self, task_id: str, number: int = 1) -> dict[str, Any]:
        """One run (trial ``number``, from 1) of a task."""
        run: dict[str, Any] = self.task(task_id)["runs"][number - 1]
        return run

    def validation(self, task_id: str, grader: str, number: int = 1) -> dict[str, Any]:
        """One grader's result in one run, as the results file stores it."""
        result: dict[str, Any] = self.run(task_id, number)["validations"][grader]
        return result

    def _results(self) -> dict[str, Any]:
        if self.results is None:
            raise AssertionError(f"no results: waza run exited {self.exit_code}: {self.stderr.strip()}")
        return self.results


def run_suite(suite: PathArg | SuiteText, tasks: Mapping[str, SuiteText] | Sequence[Mapping[str, Any]]
              | None = None, *, files: Mapping[str, str | bytes] | None = None,
              executor: type[Executor] | str | None = None, plugins: Iterable[PluginLike] = (),
              args: Sequence[str] = (), folder: PathArg | None = None,
              autoload: bool = False) -> SuiteRun:
    """Run a suite with the real ``waza run`` command, in this process.

    ``suite`` is a path to an ``eval.yaml`` (or its folder), or a suite document
    written with :func:`write_suite` (with ``tasks`` and ``files``) into ``folder``
    (default: a new temporary folder). ``executor`` is an executor class (registered
    and used, e.g. from :func:`scripted_executor`) or the name of a registered one;
    without it the suite's ``config.executor`` runs. ``plugins`` are registered next
    to the built-ins (see :func:`make_registry`); installed plugins are left out
    unless ``autoload``. ``args`` are more ``waza run`` options (``--trials 3``).
    """
    # deferred: waza_core.plugins adds ~7.4 ms to importing this module
    from waza_core.plugins import use_registry

    if any(a in ("-p", "--plugin") or a.startswith("--plugin=") for a in args):
        raise ValueError("give plugins with plugins=[...], not -p in args")

    is_document = isinstance(suite, (Mapping,)) or (isinstance(suite, str) and "\n" in suite)
    if not is_document and (tasks is not None or files is not None):  # before any folder is made
        raise ValueError("tasks and files are for a suite given as a document, not as a path")
    workdir = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="waza-test-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if isinstance(suite, (Mapping,)) or (isinstance(suite, str) and "\n" in suite):
        eval_file = write_suite(workdir / "suite", suite, tasks, files)
    else:
        eval_file = Path(suite)
    all_plugins = list(plugins)
    argv = ["run", str(eval_file), "-o", str(workdir / "results.json"), *args]
    if isinstance(executor, type):
        all_plugins.append(executor)
        argv += ["--executor", executor.name]
    elif executor is not None:
        argv += ["--executor", executor]
    results_file = workdir / "results.json"
    with contextlib.suppress(FileNotFoundError):
        results_file.unlink()
    out, err = io.StringIO(), io.StringIO()
    with use_registry(make_registry(all_plugins, autoload=autoload)), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    results = json.loads(results_file.read_text("utf-8")) if results_file.exists() else None
    return SuiteRun(exit_code=int(code), results=results, stdout=out.getvalue(), stderr=err.getvalue(),
                    eval_file=eval_file)


# -- reporters -------------------------------------------------------------------------

def render_report(reporter: type | str, results: Mapping[str, Any] | SuiteRun,
                  options: Mapping[str, str] | None = None, *, plugins: Iterable[PluginLike] = (),
                  autoload: bool = False) -> bytes:
    """The bytes a reporter writes for a results document (or a :class:`SuiteRun`).

    ``reporter`` is a reporter class or a name registered by the built-ins, ``plugins``
    or (with ``autoload``) an installed plugin; ``options`` are its options
    (``--reporter-option``), checked first: a problem raises :class:`WazaError`.
    """
    # deferred: waza_core.results.reporting adds ~1.6 ms to importing this module
    from waza_core.results.reporting import Reporter, ResultsView

    if isinstance(reporter, str):
        registry = make_registry(plugins, autoload=autoload)
        cls = registry.get("reporter", reporter)
        if cls is None:
            raise WazaError(registry.unknown("reporter", reporter))
    elif isinstance(reporter, type) and issubclass(reporter, Reporter):
        cls = reporter
    else:
        raise TypeError(f"{reporter!r} is not a waza_core.Reporter subclass nor a reporter name")
    document = results._results() if isinstance(results, SuiteRun) else results
    instance = cls(options)
    problems = instance.check_options()
    if problems:
        raise WazaError("; ".join(problems))
    buffer = io.BytesIO()
    instance.write(ResultsView(document), buffer)
    return buffer.getvalue()
