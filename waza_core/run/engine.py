"""The run loop: tasks x trials through one executor, each run graded in isolation.

An :class:`Engine` is built once per suite run: it selects the tasks, builds every
grader and the executor once, and checks every input file before the first run, so
a missing fixture is a config error (exit 2), not a hundred failed runs.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

import attrs

from waza_core.errors import ExecutorError, GraderError, WazaError
from waza_core.grading.base import Grader, GraderSetup, GradingContext
from waza_core.grading.expectations import ExpectationGrader
from waza_core.model import GraderResult, RunEvidence, Suite, TaskSpec
from waza_core.results import stats as stats_mod
from waza_core.run.execution import ExecutionRequest

RESULTS_SCHEMA_VERSION = "1.0"


@attrs.define
class RunOptions:
    executor: str | None = None
    model: str | None = None
    trials: int | None = None
    parallel: bool | None = None
    workers: int | None = None
    task_globs: list[str] = attrs.field(factory=list)
    tag_globs: list[str] = attrs.field(factory=list)
    task_ids: list[str] | None = None  # exact ids (the optimizer's splits)
    context_dir: Path | None = None
    skill_directories: tuple[str, ...] | None = None  # overrides suite and task lists
    keep_workspaces: bool = False
    skip_graders: bool = False
    fail_fast: bool | None = None
    judge_model: str | None = None  # --judge-model; else config.judge_model
    update_snapshots: bool = False
    on_task_done: Callable[[int, int, dict], None] | None = None


def check_required_skills(suite: Suite, override: tuple[str, ...] | None) -> None:
    """``config.required_skills``: each must be a folder with a SKILL.md in a skill directory."""
    need = suite.config.required_skills
    if not need:
        return
    dirs = override if override is not None else suite.config.skill_directories
    if not dirs:
        raise WazaError(f"config.required_skills is set ({', '.join(need)}) but config.skill_directories is empty")
    missing = [n for n in need if not any((Path(d) / n / "SKILL.md").is_file() or
                                          (Path(d).name == n and (Path(d) / "SKILL.md").is_file()) for d in dirs)]
    if missing:
        raise WazaError(f"required skill(s) not found in config.skill_directories ({', '.join(dirs)}): "
                        f"{', '.join(missing)}")


def select_tasks(suite: Suite, options: RunOptions) -> list[TaskSpec]:
    tasks = list(suite.tasks)
    if options.task_ids is not None:
        wanted = set(options.task_ids)
        tasks = [t for t in tasks if t.id in wanted]
    if options.task_globs:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, g) or fnmatch.fnmatchcase(t.name, g)
                                         for g in options.task_globs)]
    if options.tag_globs:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(tag, g) for tag in t.tags for g in options.tag_globs)]
    if not tasks:
        filters = [f"--task {g}" for g in options.task_globs] + [f"--tags {g}" for g in options.tag_globs]
        raise WazaError("no task to run" + (f": nothing matches {' '.join(filters)}" if filters else ""))
    return tasks


def build_grader(spec, suite, registry) -> Grader:
    if spec.type == "_expected":
        return ExpectationGrader(spec, suite)
    cls = registry.get("grader", spec.type)
    if cls is None:
        raise WazaError(f"{spec.where}: {registry.unknown('grader', spec.type)}")
    try:
        return cls(spec, suite)
    except WazaError:
        raise
    except Exception as exc:
        raise WazaError(f"{spec.where}: grader {spec.name!r} could not be built: {type(exc).__name__}: {exc}") from exc


def executor_factory(suite: Suite, registry) -> Callable[[str, dict], Any]:
    """``new_executor(name, options)`` for :class:`GraderSetup`: an executor plugin by name."""

    def new_executor(name: str, options: dict | None) -> Any:
        cls = registry.get("executor", name)
        if cls is None:
            raise WazaError(registry.unknown("executor", name))
        if options is None:  # the suite's own options for that executor (config.<key>)
            options = suite.config.extra.get(cls.config_key, {}) if cls.config_key else {}
        return cls(suite, dict(options))

    return new_executor


def start_graders(graders: list[Grader], setup: GraderSetup) -> None:
    """Start each grader once; a grader that cannot start is a config error (exit 2)."""
    for g in graders:
        try:
            g.start(setup)
        except WazaError:
            raise
        except GraderError as exc:
            raise WazaError(f"{g.spec.where}: grader {g.spec.name!r} could not start: {exc}") from None


def close_graders(graders: list[Grader]) -> None:
    """Close every grader, even when one of them fails to close."""
    problems = []
    for g in graders:
        try:
            g.close()
        except Exception as exc:  # one grader's failure must not leave the others open
            problems.append(f"grader {g.spec.name!r}: {type(exc).__name__}: {exc}")
    if problems:
        raise WazaError("could not close: " + "; ".join(problems))


def grade_run(graders: list[Grader], ctx: GradingContext) -> tuple[dict[str, dict], str, str | None]:
    """Run every grader on one run, each isolated. Returns (validations, status, error)."""
    validations: dict[str, dict] = {}
    errors: list[str] = []
    for g in graders:
        t0 = time.perf_counter()
        try:
            res = g.grade(ctx)
        except GraderError as exc:
            res = _error_result(g, exc.kind, str(exc), exc.details)
        except Exception as exc:  # a buggy plugin must not take down the run loop
            res = _error_result(g, "exception", f"{type(exc).__name__}: {exc}")
        res.duration_ms = int((time.perf_counter() - t0) * 1000)
        if res.error:
            errors.append(f"grader {g.spec.name!r}: {res.error['message']}")
        validations[res.identifier] = res.to_json()
    if errors:
        return validations, "error", "; ".join(errors)
    passed = all(v["passed"] for v in validations.values())
    return validations, "passed" if passed else "failed", None


def _error_result(g: Grader, kind: str, message: str, details: dict | None = None) -> GraderResult:
    return GraderResult(identifier=g.spec.name, type=g.spec.type, score=0.0, passed=False,
                        feedback=f"grader error ({kind}): {message}", weight=g.spec.weight,
                        details=dict(details or {}), error={"kind": kind, "message": message})


def run_json(evidence: RunEvidence, run_number: int, attempts: int, status: str,
             validations: dict | None, error: str | None, workspace: str | None) -> dict[str, Any]:
    """One run in the results file: the status, the grades and all the evidence."""
    tools_used = [c.get("name", "") for c in evidence.tool_calls or [] if isinstance(c, dict)]
    out = {
        "run_number": run_number,
        "attempts": attempts,
        "status": status,
        "duration_ms": evidence.duration_ms,
        "validations": validations if validations is not None else {},
        "session_digest": {
            "tool_call_count": len(tools_used),
            "tools_used": tools_used,
            "tool_calls": evidence.tool_calls,
            "errors": [],
            "usage": evidence.usage,
            "session_id": evidence.session_id,
        },
        "final_output": evidence.output,
        "transcript": evidence.transcript,
        "outcome": evidence.outcome,
        "tool_events": evidence.tool_events,
        "host_lifecycle": evidence.host_lifecycle,
        "command_invocations": evidence.command_invocations,
        "user_input_requests": evidence.user_input_requests,
        "skill_invocations": evidence.skill_invocations,
        "usage": evidence.usage,
        "session_id": evidence.session_id,
        "workspace_dir": workspace,
    }
    if error:
        out["error_msg"] = error
    return out


def evidence_from_run(run: dict) -> RunEvidence:
    """Rebuild the evidence of a saved run. Fields an older file lacks become null;
    a field of the wrong type (a hand-edited file) is taken as not recorded."""
    digest = _of_type(run.get("session_digest"), dict) or {}
    duration = run.get("duration_ms")
    return RunEvidence(
        output=run.get("final_output") or "",
        transcript=run.get("transcript") or [],
        tool_calls=_of_type(digest.get("tool_calls"), list) or [],
        tool_events=run.get("tool_events"),
        host_lifecycle=run.get("host_lifecycle"),
        command_invocations=run.get("command_invocations"),
        user_input_requests=run.get("user_input_requests"),
        skill_invocations=run.get("skill_invocations"),
        outcome=run.get("outcome") or {},
        duration_ms=int(duration) if _of_type(duration, (int, float)) is not None and duration >= 0 else 0,
        # waza (Go) keeps usage only in session_digest, where its `waza grade` reads it
        usage=_of_type(run.get("usage"), dict) or _of_type(digest.get("usage"), dict),
        session_id=run.get("session_id", digest.get("session_id")),
    )


def _of_type(value: Any, types) -> Any:
    """``value`` when it is one of ``types`` (never a bool standing for a number), else None."""
    return value if isinstance(value, types) and not isinstance(value, bool) else None


class Engine:
    """Runs one suite once. Build it, then call :meth:`run`."""

    def __init__(self, suite: Suite, registry, options: RunOptions | None = None) -> None:
        self.suite = suite
        self.registry = registry
        self.options = options = options or RunOptions()
        cfg = suite.config
        self.tasks = select_tasks(suite, options)
        self.trials = options.trials or cfg.trials_per_task
        if self.trials < 1:
            raise WazaError("--trials must be at least 1")
        self.model = options.model if options.model is not None else cfg.model
        self.parallel = cfg.parallel if options.parallel is None else options.parallel
        workers = cfg.workers if options.workers is None else options.workers
        self.workers = workers if workers > 0 else (os.cpu_count() or 4)
        self.fail_fast = cfg.fail_fast if options.fail_fast is None else options.fail_fast
        self.executor_name = options.executor or cfg.executor
        executor_cls = registry.get("executor", self.executor_name)
        if executor_cls is None:
            from waza_core.paths import display_path

            where = "--executor" if options.executor else f"{display_path(suite.file)}: config.executor"
            raise WazaError(f"{where}: {registry.unknown('executor', self.executor_name)}")
        check_required_skills(suite, options.skill_directories)
        self.executor_cls = executor_cls
        options_of_executor = cfg.extra.get(executor_cls.config_key, {}) if executor_cls.config_key else {}
        self.executor = executor_cls(suite, dict(options_of_executor))
        self.global_graders = [build_grader(s, suite, registry) for s in suite.graders]
        self.task_graders = {t.id: [build_grader(s, suite, registry) for s in t.graders] for t in self.tasks}
        self.inputs = {t.id: self._load_inputs(t) for t in self.tasks}
        self.needs_workspace = {t.id: self._needs_workspace(t) for t in self.tasks}
        from waza_core.procs import CancelEvent

        self.cancel = CancelEvent()  # setting it also kills every running child process group
        self.incomplete = False
        self.saw_failure = False

    # -- inputs --------------------------------------------------------------------
    def fixtures_dir(self, task: TaskSpec) -> Path:
        if task.context_dir:
            return Path(task.context_dir).absolute()
        if self.options.context_dir is not None:
            return Path(self.options.context_dir).absolute()
        return self.suite.dir / "fixtures"

    def _load_inputs(self, task: TaskSpec) -> tuple[tuple, Path | None]:
        """(files, fixture dir to copy); every problem is a config error now, not later."""
        base = self.fixtures_dir(task)
        problems, files = [], []
        for f in task.files:
            rel = Path(f.path)
            if rel.is_absolute() or ".." in rel.parts:
                problems.append(f"inputs.files path {f.path!r} must be relative, without '..'")
                continue
            if f.content is not None:
                files.append((f.path, f.content))
                continue
            src = base / rel
            try:
                files.append((f.path, src.read_text("utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                problems.append(f"cannot read input file {src}: {reason}")
        fixture = None
        name = task.context.get("fixture")
        if isinstance(name, str):
            fixture = base / name
            if os.path.isabs(name) or ".." in Path(name).parts:
                problems.append(f"inputs.context.fixture {name!r} must be relative to the fixtures folder, "
                                "without '..'")
            elif not fixture.is_dir():
                problems.append(f"inputs.context.fixture {name!r}: no such directory {fixture}")
            elif not os.access(fixture, os.R_OK | os.X_OK):
                problems.append(f"inputs.context.fixture {name!r}: directory {fixture} is not readable")
        if problems:
            from waza_core.paths import display_path

            raise WazaError(f"task {task.id!r} ({display_path(task.file)}): " + "; ".join(problems))
        return tuple(files), fixture

    def _needs_workspace(self, task: TaskSpec) -> bool:
        """Whether a run of ``task`` can observe its workspace at all.

        A workspace with no files, no fixture, read by neither the executor nor any
        grader (each declares ``needs_workspace``; plugins default to True) cannot be
        seen by anyone, so making and removing an empty folder would be pure cost.
        """
        files, fixture = self.inputs[task.id]
        return bool(self.options.keep_workspaces or files or fixture is not None
                    or self.executor.needs_workspace
                    or any(g.needs_workspace
                           for g in self.global_graders + self.task_graders[task.id]))

    def _fill_workspace(self, task: TaskSpec, ws: str) -> None:
        files, fixture = self.inputs[task.id]
        try:
            if fixture is not None:
                shutil.copytree(fixture, ws, dirs_exist_ok=True, symlinks=True)
            for rel, content in files:
                dest = os.path.join(ws, rel)
                parent = os.path.dirname(dest)
                if parent != ws:
                    os.makedirs(parent, exist_ok=True)
                with open(dest, "w", encoding="utf-8") as fh:
                    fh.write(content)
        except (OSError, shutil.Error) as exc:
            raise WazaError(f"cannot prepare the workspace {ws} of task {task.id!r}: {exc}") from None

    # -- one run -------------------------------------------------------------------
    def run_once(self, task: TaskSpec, run_number: int) -> dict[str, Any]:
        """One trial of one task, with retries of failed attempts up to max_attempts."""
        attempt = 0
        while True:
            attempt += 1
            result = self._attempt(task, run_number, attempt)
            if result["status"] != "failed" or attempt >= self.suite.config.max_attempts or self.cancel.is_set():
                return result

    def _attempt(self, task: TaskSpec, run_number: int, attempt: int) -> dict[str, Any]:
        ws = self.workspaces.take() if self.needs_workspace[task.id] else None
        try:
            if ws is not None:
                self._fill_workspace(task, ws)
            skills = self.options.skill_directories
            if skills is None:
                skills = task.skill_directories if task.skill_directories is not None else \
                    self.suite.config.skill_directories
            request = ExecutionRequest(
                task=task, prompt=task.prompt, workspace_dir=ws,
                timeout_seconds=task.timeout_seconds or self.suite.config.timeout_seconds,
                model=self.model, skill_directories=tuple(skills), run_number=run_number,
                attempt=attempt, files=self.inputs[task.id][0],
            )
            t0 = time.perf_counter()
            try:
                evidence = self.executor.execute(request)
            except (ExecutorError, WazaError) as exc:
                evidence = RunEvidence(error=str(exc))
            except Exception as exc:
                evidence = RunEvidence(error=f"executor {self.executor_name!r} failed: {type(exc).__name__}: {exc}")
            if not evidence.duration_ms:
                evidence.duration_ms = int((time.perf_counter() - t0) * 1000)
            kept = ws if self.options.keep_workspaces else None
            if evidence.error:
                return run_json(evidence, run_number, attempt, "error", {}, evidence.error, kept)
            if self.options.skip_graders:
                return run_json(evidence, run_number, attempt, "n/a", {}, None, kept)
            ctx = GradingContext(task=task, evidence=evidence, workspace_dir=ws, suite=self.suite,
                                 cancel=self.cancel)
            validations, status, error = grade_run(self.global_graders + self.task_graders[task.id], ctx)
            return run_json(evidence, run_number, attempt, status, validations, error, kept)
        finally:
            if ws is not None and not self.options.keep_workspaces:
                self.workspaces.remove(ws)

    # -- the whole suite -----------------------------------------------------------
    def run(self) -> dict[str, Any]:
        started = time.time()
        t0 = time.perf_counter()
        runs: dict[str, list[dict]] = {t.id: [] for t in self.tasks}
        self.finished: dict[str, dict] = {}  # task id -> its entry in the results, as it completes
        self.workspaces = _Workspaces()
        self.executor.model = self.model  # so start() can check the model once, not per run
        self.executor.start()
        graders = self.all_graders()
        try:
            start_graders(graders, self.grader_setup())
            if self.parallel and self.workers > 1:
                self._run_parallel(runs)
            else:
                self._run_sequential(runs)
        except KeyboardInterrupt:
            self.cancel.set()
            self.incomplete = True
        finally:
            try:
                close_graders(graders)
                self.executor.shutdown()
            finally:
                self.workspaces.close()
        return self.outcome(started, int((time.perf_counter() - t0) * 1000))

    def all_graders(self) -> list[Grader]:
        return self.global_graders + [g for t in self.tasks for g in self.task_graders[t.id]]

    def grader_setup(self) -> GraderSetup:
        judge = self.options.judge_model if self.options.judge_model is not None else self.suite.config.judge_model
        return GraderSetup(judge_model=judge, model=self.model, executor=self.executor_name,
                           update_snapshots=self.options.update_snapshots,
                           new_executor=executor_factory(self.suite, self.registry), cancel=self.cancel)

    def _finish_task(self, task: TaskSpec, runs: list[dict]) -> None:
        entry = task_json(task, runs)
        self.finished[task.id] = entry
        if entry["status"] != "passed":
            self.saw_failure = True
        if self.options.on_task_done:
            self.options.on_task_done(len(self.finished), len(self.tasks), entry)

    def _run_sequential(self, runs) -> None:
        for task in self.tasks:
            if self.fail_fast and self.saw_failure:
                self.incomplete = True
                break
            for trial in range(1, self.trials + 1):
                runs[task.id].append(self.run_once(task, trial))
            self._finish_task(task, runs[task.id])

    def _run_parallel(self, runs) -> None:
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="waza-run")
        pending = {}
        remaining = {t.id: self.trials for t in self.tasks}
        by_id = {t.id: t for t in self.tasks}
        slots: dict[str, list] = {t.id: [None] * self.trials for t in self.tasks}
        try:
            for task in self.tasks:
                for trial in range(1, self.trials + 1):
                    pending[pool.submit(self.run_once, task, trial)] = (task.id, trial)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    tid, trial = pending.pop(fut)
                    slots[tid][trial - 1] = fut.result()
                    remaining[tid] -= 1
                    if remaining[tid] == 0:
                        runs[tid] = slots[tid]
                        self._finish_task(by_id[tid], runs[tid])
                if self.fail_fast and self.saw_failure and pending:
                    for fut in pending:
                        fut.cancel()
                    pending = {f: v for f, v in pending.items() if not f.cancelled()}
                    self.incomplete = True
        except KeyboardInterrupt:
            self.cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        except BaseException:
            # A run could not even start (e.g. its workspace could not be filled): stop the
            # others, and let those in flight finish before the workspaces are closed, so
            # none is left behind and no run outlives the engine.
            self.cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def outcome(self, started: float, duration_ms: int) -> dict[str, Any]:
        import datetime
        import secrets

        from waza_core._version import __version__

        tasks = [self.finished[t.id] for t in self.tasks if t.id in self.finished]
        cfg = self.suite.config
        return {
            "schemaVersion": RESULTS_SCHEMA_VERSION,
            "eval_id": f"run-{int(started)}-{secrets.token_hex(3)}",
            "skill": self.suite.skill,
            "eval_name": self.suite.name,
            "timestamp": datetime.datetime.fromtimestamp(started, datetime.timezone.utc)
            .isoformat(timespec="seconds").replace("+00:00", "Z"),
            "waza_version": __version__,
            "config": {
                "runs_per_test": self.trials,
                "model_id": self.model,
                "engine_type": self.executor_name,
                "timeout_sec": cfg.timeout_seconds,
                "judge_model": cfg.judge_model,
                "max_attempts": cfg.max_attempts,
                "parallel": bool(self.parallel),
                "workers": self.workers,
                "skip_graders": self.options.skip_graders,
            },
            "summary": stats_mod.summarize(tasks, duration_ms),
            "metrics": {},
            "tasks": tasks,
            "incomplete": self.incomplete or len(tasks) < len(self.tasks),
        }


def _remove_workspace(ws: str) -> None:
    try:
        os.rmdir(ws)  # the common case under mock: nothing was written
    except OSError:
        shutil.rmtree(ws, ignore_errors=True)


class _Workspaces:
    """Makes a fresh workspace folder per run and removes used ones on a background thread.

    Folder removal is a slow system call on some disks (0.1 ms and more); it releases
    the GIL, so doing it beside the run loop takes it off the critical path. (Making
    folders ahead on a thread was tried and measured slower: handing a folder over
    between threads costs more than the ``mkdir``.) ``close`` waits until every used
    folder is gone.
    """

    def __init__(self) -> None:
        import queue

        self.trash: queue.SimpleQueue = queue.SimpleQueue()
        self.janitor = threading.Thread(target=self._remove, name="waza-janitor", daemon=True)
        self.janitor.start()

    def _remove(self) -> None:
        while (ws := self.trash.get()) is not None:
            _remove_workspace(ws)

    def take(self) -> str:
        try:
            return tempfile.mkdtemp(prefix="waza-ws-")
        except OSError as exc:
            raise WazaError(f"cannot create a run workspace in {tempfile.gettempdir()}: {exc.strerror}; "
                            "set TMPDIR to a writable folder") from None

    def remove(self, ws: str) -> None:
        self.trash.put(ws)

    def close(self) -> None:
        self.trash.put(None)
        self.janitor.join()


def task_json(task: TaskSpec, runs: list[dict]) -> dict[str, Any]:
    return {
        "test_id": task.id,
        "display_name": task.name,
        "tags": list(task.tags),
        "status": stats_mod.task_status(runs),
        "runs": runs,
        "stats": stats_mod.task_stats(runs),
    }


def exit_code(outcome: dict) -> int:
    """0 when every task passed (or was only run, with --skip-graders), 1 otherwise."""
    s = outcome["summary"]
    return 1 if (s["failed"] or s["errors"]) else 0
