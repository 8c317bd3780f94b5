"""``type: code``: inline assertions in Python (default) or JavaScript, one verdict each.

Each assertion is an expression evaluated against the run (``output``, ``outcome``,
``transcript``, ``tool_calls``, ``errors``, ``duration_ms`` and a few helpers; no imports)
by an evaluator process: ``python3`` (else ``python``) running ``code_eval.py``, or
``node`` running ``code_eval.js``. Score = passed / assertions; feedback "All assertions
passed" or "Failed: <expr>" / "Failed: <expr>: <error>" joined by "; ", as in waza (Go).

Unlike waza, every assertion has a time limit in both languages (``timeout``, default 5
s: waza's JavaScript limit): an assertion that runs longer fails, its evaluator's
process group is killed and the remaining assertions go to a fresh one. The Python
evaluator is also held to 1 GiB of address space, so a runaway expression fails with
``MemoryError`` instead of exhausting the machine.

By default each run starts one evaluator, as waza does. With ``WAZA_CODE_WARM=1`` the
evaluators stay alive and are reused across runs (one pool per interpreter for the whole
process), which removes the start-up cost; see bench/bench_graders.py for the figures.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import subprocess
import threading
import time
from pathlib import Path

from waza_core import Grader, GraderError, GraderResult, GradingContext, hookimpl, procs

DEFAULT_TIMEOUT = 5.0
#: address-space limit of the Python evaluator, MiB (node gets --max-old-space-size)
MEMORY_MIB = 1024
#: time an evaluator may take to start and read the run's payload
START_ALLOWANCE = 30.0
#: node enforces the limit itself (waza's message); the parent waits this much longer
JS_GRACE = 2.0
MAX_LINE = 1 << 20
WARM_ENV = "WAZA_CODE_WARM"
HERE = Path(__file__).resolve().parent


class CodeGrader(Grader):
    name = "code"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["assertions"],
        "properties": {
            "assertions": {"type": "array", "minItems": 1, "items": {"type": "string"},
                           "description": "Expressions that must be truthy for the run."},
            "language": {"enum": ["python", "javascript"],
                         "description": "Language of the assertions (default python)."},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600,
                        "description": "Seconds each assertion may take (default 5)."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.assertions = list(c["assertions"])
        self.language = c.get("language") or "python"
        self.timeout = float(c.get("timeout") or DEFAULT_TIMEOUT)
        self.argv: tuple[str, ...] | None = None

    def start(self, setup) -> None:
        self.argv = _evaluator(self.language, self.timeout)

    def close(self) -> None:
        _POOLS.release_all()

    def grade(self, ctx: GradingContext) -> GraderResult:
        argv = self.argv or _evaluator(self.language, self.timeout)
        ev = ctx.evidence
        payload = {"output": ev.output or "", "outcome": ev.outcome if ev.outcome is not None else {},
                   "transcript": ev.transcript if ev.transcript is not None else [],
                   "tool_calls": ev.tool_calls if ev.tool_calls is not None else [],
                   "duration_ms": int(ev.duration_ms or 0), "debug": False}
        limit = self.timeout + (JS_GRACE if self.language == "javascript" else 0.0)
        verdicts = _evaluate(argv, payload, self.assertions, limit, self.timeout, ctx.cancel)
        failures = []
        for expr, verdict in zip(self.assertions, verdicts, strict=True):
            if verdict == "fail":
                failures.append(f"Failed: {expr}")
            elif verdict:
                failures.append(f"Failed: {expr}: {verdict}")
        passed = len(self.assertions) - len(failures)
        feedback = "; ".join(failures) if failures else "All assertions passed"
        return self.result(passed / len(self.assertions), not failures, feedback,
                           total_assertions=len(self.assertions), passed_assertions=passed,
                           failures=failures or None)


# -- the evaluator process --------------------------------------------------------------

_FOUND: dict[str, str] = {}
_FOUND_LOCK = threading.Lock()


def _evaluator(language: str, timeout: float) -> tuple[str, ...]:
    """The argv of an evaluator; GraderError naming the interpreter when it is missing."""
    if language == "javascript":
        node = _find("node", ("node",))
        if node is None:
            raise GraderError("the code grader needs 'node' on PATH to evaluate JavaScript assertions, "
                              "and none was found; install Node.js or use language: python", "start_failed")
        return (node, f"--max-old-space-size={MEMORY_MIB}", str(HERE / "code_eval.js"), str(int(timeout * 1000)))
    python = _find("python", ("python3", "python"))
    if python is None:
        raise GraderError("the code grader needs 'python3' (or 'python') on PATH to evaluate Python "
                          "assertions, and none was found", "start_failed")
    return (python, "-I", "-S", str(HERE / "code_eval.py"), str(MEMORY_MIB))


def _find(key: str, names: tuple[str, ...]) -> str | None:
    """The interpreter a name on PATH runs, as an absolute path; None if none works.

    Like waza, the first name that actually runs wins (Windows' ``python3`` stub does
    not). The interpreter reports its own executable, so a version-manager shim (pyenv,
    asdf) is resolved once here instead of costing a shell script on every run.
    """
    with _FOUND_LOCK:
        if key in _FOUND:
            return _FOUND[key]
        probe = "process.stdout.write(process.execPath)" if key == "node" else \
            "import sys; sys.stdout.write(sys.executable or '')"
        for name in names:
            path = shutil.which(name)
            if path is None:
                continue
            try:
                proc = subprocess.run([path, "-e" if key == "node" else "-c", probe], capture_output=True,
                                      timeout=30, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if proc.returncode == 0:
                real = proc.stdout.decode("utf-8", "replace").strip()
                _FOUND[key] = real if real and os.path.isfile(real) else path
                return _FOUND[key]
        return None


class _Evaluator:
    """One evaluator process in its own process group, spoken to line by line."""

    def __init__(self, argv: tuple[str, ...]) -> None:
        self.argv = argv
        try:
            # procs.start: its own group, tagged, waza a subreaper, so whatever an assertion
            # starts (a daemon that calls setsid()) is reaped with the evaluator (docs/safety.md)
            self.proc, self.tag = procs.start(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE)
        except OSError as exc:
            raise GraderError(f"cannot start {argv[0]}: {exc.strerror or exc}", "start_failed") from None
        for stream in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(stream.fileno(), False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self.selector.register(self.proc.stderr, selectors.EVENT_READ, "err")
        self.buffer = b""
        self.stderr = b""
        self.eof = False

    def send(self, request: dict) -> None:
        try:
            line = json.dumps(request, ensure_ascii=True).encode("ascii") + b"\n"
        except (TypeError, ValueError) as exc:
            raise GraderError(f"the run evidence cannot be passed to the code evaluator: {exc}",
                              "context_io") from None
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.eof = True  # it died; read_line reports why

    def read_line(self, deadline: float, cancel) -> bytes | None:
        """The next line, or None at the deadline; raises GraderError if the process ended."""
        while b"\n" not in self.buffer:
            if self.eof:
                raise self._died()
            if cancel is not None and cancel.is_set():
                raise GraderError("the code grader was stopped: the run was cancelled", "cancelled")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _ in self.selector.select(min(left, 0.1)):
                try:
                    chunk = os.read(key.fileobj.fileno(), 65536)
                except BlockingIOError:
                    continue
                if key.data == "err":
                    self.stderr = (self.stderr + chunk)[-4096:]
                    if not chunk:
                        self.selector.unregister(key.fileobj)
                elif chunk:
                    self.buffer += chunk
                    if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                        self.kill()
                        raise GraderError("the code evaluator wrote an over-long line", "protocol")
                else:
                    self.eof = True
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _died(self) -> GraderError:
        self._exited(5.0)
        self.kill()
        code = self.proc.returncode
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        tail = self.stderr.decode("utf-8", "replace").strip()
        return GraderError(f"the code evaluator ({Path(self.argv[0]).name}) stopped unexpectedly ({how})"
                           + (f": {tail[-1000:]}" if tail else ""), "evaluator_failed")

    def alive(self) -> bool:
        return not self.eof and self.proc.poll() is None

    def finish(self) -> None:
        """Close stdin so it exits on its own, then make sure the whole group is gone."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self._exited(2.0)
        self.kill()

    def _exited(self, timeout: float) -> bool:
        """Wait until the leader exits, without reaping it (so its group id stays reserved)."""
        if not hasattr(os, "waitid"):  # pragma: no cover - macOS: reaps; the group kill then races pid reuse
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        deadline = time.monotonic() + timeout
        while True:
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)

    def kill(self) -> None:
        """SIGKILL the group while the leader still reserves its id, reap it, and reap every
        descendant that left the group (:func:`waza_core.procs.end`)."""
        procs.end(self.proc, self.tag)
        self.selector.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        self.eof = True


def _evaluate(argv, payload: dict, assertions: list[str], limit: float, timeout: float, cancel) -> list[str]:
    """One verdict per assertion; an assertion past its limit fails and the rest go to a new evaluator."""
    verdicts: list[str] = []
    while len(verdicts) < len(assertions):
        todo = assertions[len(verdicts):]
        worker = _POOLS.acquire(argv)
        keep = False
        try:
            worker.send(dict(payload, assertions=todo))
            ready = worker.read_line(time.monotonic() + START_ALLOWANCE, cancel)
            if ready is None:
                raise GraderError(f"the code evaluator did not start within "
                                  f"{START_ALLOWANCE:g} s", "timeout")
            for _ in todo:
                line = worker.read_line(time.monotonic() + limit, cancel)
                if line is None:
                    verdicts.append(f"assertion timed out after {timeout:g} s; the evaluator was stopped")
                    break
                verdicts.append(_parse(line))
            else:
                keep = True
        finally:
            if keep:
                _POOLS.release(worker)
            else:
                worker.kill()
    return verdicts


def _parse(line: bytes) -> str:
    try:
        value = json.loads(line)
    except ValueError:
        raise GraderError(f"the code evaluator wrote something that is not a verdict: {line[:200]!r}",
                          "protocol") from None
    if not isinstance(value, str):
        raise GraderError(f"the code evaluator wrote something that is not a verdict: {line[:200]!r}", "protocol")
    return value


class _Pools:
    """Evaluators per argv. Without ``WAZA_CODE_WARM`` nothing is kept: each run starts
    its own evaluator and it exits when the run is graded."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: dict[tuple[str, ...], list[_Evaluator]] = {}

    @staticmethod
    def warm() -> bool:
        return os.environ.get(WARM_ENV, "").strip().lower() in ("1", "true", "yes", "on")

    def acquire(self, argv: tuple[str, ...]) -> _Evaluator:
        with self.lock:
            idle = self.idle.get(argv) or []
            while idle:
                worker = idle.pop()
                if worker.alive():
                    return worker
                worker.kill()
        return _Evaluator(argv)

    def release(self, worker: _Evaluator) -> None:
        if self.warm() and worker.alive():
            with self.lock:
                idle = self.idle.setdefault(worker.argv, [])
                if len(idle) < 16:
                    idle.append(worker)
                    return
        worker.finish()

    def release_all(self) -> None:
        with self.lock:
            workers = [w for ws in self.idle.values() for w in ws]
            self.idle.clear()
        for w in workers:
            w.finish()


_POOLS = _Pools()
atexit.register(_POOLS.release_all)


@hookimpl
def waza_register_graders(register):
    register(CodeGrader)
