"""``type: program``: an external program judges the run; exit 0 passes.

The program is started from argv (never through a shell) with the agent's output on
stdin, unchanged, and the parent environment (or only what the ``env`` allow-list
lets through: :mod:`waza_core.childenv`) plus ``WAZA_WORKSPACE_DIR`` and
``WAZA_GRADING_CONTEXT``: the path of a ``context.json`` holding the run evidence
(:meth:`waza_core.model.RunEvidence.context_json`) in a new private directory.

Exit 0 scores 1.0 with stdout as feedback; any other exit is an ordinary failed
check (0.0, stderr in the feedback). A program that times out or cannot start did
not judge at all: that raises :class:`GraderError` (``timeout`` / ``start_failed``)
so the run becomes ``error`` and the optimizer can tell it from a real failure.

The context directory is removed after every invocation, but only once waza has
checked that the directory and the file are still the very entries it created; see
:class:`_ContextDir` and docs/graders/program.md for the trust model.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

from waza_core import Grader, GraderError, GraderResult, GradingContext, hookimpl

DEFAULT_TIMEOUT = 30.0
#: bytes kept of stdout, and of stderr; the rest is read and discarded
MAX_OUTPUT = 1024 * 1024
CONTEXT_FILE = "context.json"
ENV_WORKSPACE = "WAZA_WORKSPACE_DIR"
ENV_CONTEXT = "WAZA_GRADING_CONTEXT"
#: no protected DACL yet, so the context file is refused there (tests flip this)
_WINDOWS = os.name == "nt"

_O_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class ProgramGrader(Grader):
    name = "program"
    bounded = True  # the program runs through run_process, killed at its own timeout
    # run_process gets ctx.cancel: a stop of the run kills the program, and grade then removes
    # its context folder (an exception raised inside grade could land before that)
    stops_on_cancel = True
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["command"],
        "properties": {
            "command": {"type": "string", "minLength": 1,
                        "description": "The program to run (looked up on PATH; no shell)."},
            "args": {"type": "array", "items": {"type": "string"},
                     "description": "Arguments passed to the program."},
            "timeout": {"type": "number", "minimum": 0, "maximum": 604800,
                        "description": "Seconds before the program's process group is killed; "
                                       "0 or absent: .waza.yaml graders.programTimeout, else 30."},
            "env": {"type": "array", "items": {"type": "string", "pattern": "^[A-Za-z_*?][A-Za-z0-9_*?]*$"},
                    "description": "Allow-list of environment variables the program sees (PREFIX_* "
                                   "allowed) besides PATH, HOME, locale and TMPDIR; absent: .waza.yaml "
                                   "graders.env, else the whole environment (see docs/safety.md)."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        from waza_core import program_timeout  # import-light plugin module: only when used
        cfg = spec.config
        # {suite_dir}: the folder of eval.yaml, for scripts kept beside the suite
        suite_dir = str(Path(suite.file).parent.absolute()) if suite is not None else None
        self.argv = tuple(a.replace("{suite_dir}", suite_dir) if suite_dir else a
                          for a in (cfg["command"], *cfg.get("args", ())))
        timeout = cfg.get("timeout") or program_timeout() or DEFAULT_TIMEOUT
        self.timeout = float(timeout)
        self.time_limit = self.timeout + 30.0  # a backstop: the timeout above kills the program first
        self.display = _shorten(shlex.join(self.argv))
        # Built once: a copy per invocation is all the per-run work left. The whole
        # environment unless an allow-list is set (config env, else .waza.yaml graders.env).
        from waza_core import child_environment, project_env_allow_list

        allow = cfg["env"] if "env" in cfg else project_env_allow_list("graders")
        self._allow = tuple(allow) if allow is not None else ()
        self._env = child_environment(allow, drop=(ENV_WORKSPACE, ENV_CONTEXT))
        # TMPDIR is honoured strictly (no silent fallback to /tmp as tempfile does):
        # transcripts go where the user said, or grading fails naming that place.
        self._tmp_base = os.path.abspath(os.environ.get("TMPDIR") or _default_tmp())

    def environment_allow_list(self) -> tuple[str, ...]:
        """The names of its ``env`` allow-list: what a Ray worker gets from the driver for
        it. Without a list the program sees the worker's own environment."""
        return self._allow

    def grade(self, ctx: GradingContext) -> GraderResult:
        if _WINDOWS:
            raise GraderError(
                "the program grader cannot write its grading context file on Windows yet: waza will not "
                "write transcript data without a protected DACL (see docs/graders/program.md)", "context_io")
        output = ctx.evidence.output or ""
        env = self._env.copy()
        env[ENV_WORKSPACE] = os.fspath(ctx.workspace_dir) if ctx.workspace_dir else ""
        # An exception raised in this thread from outside (Ctrl-C in a sequential run, whose
        # grading runs in the main thread; a time limit's GraderTimeout) can land at any line,
        # also between a call's return and the assignment of its value: so the folder is handed
        # over in ``held``, a list made before it, and removed below wherever the exception landed
        held: list[_ContextDir] = []
        try:
            _ContextDir.create(self._tmp_base, _context_bytes(ctx), held)
            box = held[0]
            env[ENV_CONTEXT] = box.path
            res, problem = self._run(env, output, ctx)
            try:
                box.remove()
            except GraderError as exc:
                if problem is not None:
                    exc.args = (f"{exc}; besides, {problem}",)
                raise
        except BaseException:
            for made in held:  # nothing when it was removed, or left after tampering
                for _ in range(3):  # again if an exception from outside landed in the clean-up
                    try:
                        made.remove_after_interrupt()
                        break
                    except BaseException:  # noqa: BLE001 - the first one is raised below
                        continue
            raise
        if problem is not None:
            raise problem
        return self._verdict(res, ctx)

    def _run(self, env: dict[str, str], output: str, ctx: GradingContext):
        """Run the program: (its ProcessResult or None, the GraderError it comes to, or None)."""
        # deferred: waza_core adds ~6.6 ms to importing this module
        from waza_core import ProcessStartError, run_process

        try:
            res = run_process(self.argv, env=env, input=output.encode("utf-8", "surrogatepass"),
                              timeout=self.timeout, max_stdout=MAX_OUTPUT, max_stderr=MAX_OUTPUT,
                              cancel=ctx.cancel)
        except ProcessStartError as exc:
            hint = " (no shell is used: put arguments in 'args')" if " " in self.argv[0] else ""
            return None, GraderError(f"program {self.display} could not start: {exc.reason}{hint}", "start_failed")
        if res.timed_out:
            return res, GraderError(f"program {self.display} timed out after {self.timeout:g} s; "
                                    f"its process group was killed{_tail(res.stderr_text())}", "timeout",
                                    {"stdout": _text(res.stdout, res.stdout_truncated, "stdout"),
                                     "stderr": _text(res.stderr, res.stderr_truncated, "stderr")})
        if res.cancelled:
            return res, GraderError(f"program {self.display} was stopped: the run was cancelled", "cancelled")
        return res, None

    def _verdict(self, res, ctx: GradingContext) -> GraderResult:
        stdout = _text(res.stdout, res.stdout_truncated, "stdout")
        stderr = _text(res.stderr, res.stderr_truncated, "stderr")
        details: dict[str, Any] = {
            "command": self.argv[0], "args": list(self.argv[1:]), "exit_code": res.returncode,
            "stdout": stdout, "stderr": stderr,
            "stdout_truncated": res.stdout_truncated, "stderr_truncated": res.stderr_truncated,
            "workspace_dir": os.fspath(ctx.workspace_dir) if ctx.workspace_dir else "",
        }
        if res.returncode == 0:
            return self.result(1.0, True, stdout.strip() or "Program exited successfully", **details)
        if res.returncode < 0:
            exit_error = f"signal: {_signal_name(-res.returncode)}"
        else:
            exit_error = f"exit status {res.returncode}"
        details["exit_error"] = exit_error
        details["error_kind"] = "exit_nonzero"
        feedback = f"Program exited with error: {exit_error}"
        if stderr.strip():
            feedback += f"; stderr: {stderr.strip()}"
        return self.result(0.0, False, feedback, **details)


class _ContextDir:
    """One private directory holding ``context.json``, owned for one invocation.

    ``create`` makes the directory (0700) and the file (0600) with explicit modes,
    whatever the umask, and records both identities (device, inode). ``remove``
    deletes them only if both are still those entries, through a directory fd opened
    without following symlinks; otherwise it deletes nothing and raises
    ``GraderError(kind="context_tampered")`` naming the path. Any I/O failure is
    ``context_io`` naming the path: transcript data is never left behind silently.

    A stop or a time limit raised in the grading thread can land at any line (see
    ``ProgramGrader.grade``): the folder is named before it is made, handed over in the
    caller's list, and :meth:`remove_after_interrupt` finishes a removal it cut short.
    """

    __slots__ = ("dir", "path", "dir_id", "file_id", "state")

    def __init__(self, directory: str, path: str, dir_id: tuple[int, int], file_id: tuple[int, int]):
        self.dir, self.path, self.dir_id, self.file_id = directory, path, dir_id, file_id
        #: "made"; "removing" once :meth:`remove` began; "done" once removed, or left in place
        #: after it found the folder tampered with
        self.state = "made"

    @classmethod
    def create(cls, base: str, payload: bytes, held: list[_ContextDir]) -> None:
        """Make the folder and its file; append the new box to ``held``. An exception that
        lands before the append removes what was made; after it, the holder of ``held`` does."""
        directory = None
        try:
            for _ in range(_NAME_TRIES):
                directory = os.path.join(base, _PREFIX + os.urandom(8).hex())  # named before it is made
                try:
                    os.mkdir(directory, 0o700)
                    break
                except FileExistsError:  # another's: never removed (no call before the name is dropped)
                    directory = None
                except OSError as exc:
                    directory = None
                    raise GraderError(f"cannot create a grading context directory in {base}: "
                                      f"{exc.strerror or exc}", "context_io") from None
            if directory is None:
                raise GraderError(f"cannot create a grading context directory in {base}: "
                                  f"{_NAME_TRIES} names in a row were taken", "context_io")
            path = os.path.join(directory, CONTEXT_FILE)
            os.chmod(directory, 0o700)  # mkdir's 0700 is narrowed by the umask
            st = os.lstat(directory)
            fd = os.open(path, _O_CREATE, 0o600)
            try:
                os.fchmod(fd, 0o600)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
                fst = os.fstat(fd)
            finally:
                os.close(fd)
            held.append(cls(directory, path, (st.st_dev, st.st_ino), (fst.st_dev, fst.st_ino)))
        except OSError as exc:
            left = _discard(directory) if directory is not None else ""
            where = os.path.join(directory, CONTEXT_FILE) if directory is not None else base
            raise GraderError(f"cannot write grading context {where}: {exc.strerror or exc}{left}",
                              "context_io") from None
        except BaseException:  # stopped part way: what was made is removed, by the holder once handed over
            if directory is not None and not (held and held[-1].dir == directory):
                _discard(directory)
            raise

    def remove(self) -> None:
        """Remove the folder and its file, or raise ``context_tampered`` / ``context_io``."""
        try:
            self._remove(after_stop=False)
        except GraderError:
            self.state = "done"  # a verdict on the folder: left as it is
            raise
        self.state = "done"

    def _remove(self, after_stop: bool) -> None:
        """``after_stop``: a removal that a stop cut short after the folder and its file passed
        their checks (state "removing") is finished: the folder or its file may be gone already,
        by this removal's own work. Before that, every check is made, after a stop too."""
        d = self.dir
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            if after_stop:
                return
            raise _tampered(f"grading context directory {d} was moved away or deleted while the program "
                            f"ran; waza removed nothing, and transcript data may remain wherever it went") from None
        except OSError as exc:
            raise GraderError(f"cannot check grading context directory {d}: {exc.strerror}; "
                              f"transcript data may remain there", "context_io") from None
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != self.dir_id:
            raise _tampered(f"grading context directory {d} was replaced while the program ran; waza left the "
                            f"replacement in place, and transcript data may remain elsewhere")
        try:
            dfd = os.open(d, _O_DIR)
        except OSError as exc:
            raise _tampered(f"grading context directory {d} was replaced while the program ran "
                            f"({exc.strerror}); waza left it in place") from None
        try:
            st = os.fstat(dfd)
            if (st.st_dev, st.st_ino) != self.dir_id:
                raise _tampered(f"grading context directory {d} was replaced while the program ran; "
                                f"waza left the replacement in place")
            try:
                fst = os.stat(CONTEXT_FILE, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                if not after_stop:
                    raise _tampered(f"grading context file {self.path} was deleted or moved away while the "
                                    f"program ran; waza left {d} in place, and transcript data may remain") from None
                fst = None
            if fst is not None and (not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != self.file_id):
                raise _tampered(f"grading context file {self.path} was replaced while the program ran; waza "
                                f"left the replacement and {d} in place")
            self.state = "removing"  # checked: from here, what is gone was removed by waza
            _empty(dfd, d)
        finally:
            os.close(dfd)
        try:
            os.rmdir(d)
        except OSError as exc:
            if after_stop and isinstance(exc, FileNotFoundError):
                return
            raise GraderError(f"cannot remove grading context directory {d}: {exc.strerror}; "
                              f"transcript data may remain there", "context_io") from None

    def remove_after_interrupt(self) -> None:
        """Best effort after a stop (never raises an Exception): remove if untouched, finish a
        removal the stop cut short, else say what was left; nothing once removed or left. An
        exception from outside that lands in here (a time limit repeats its own every second)
        leaves the state as it was, so the caller can call again."""
        if self.state == "done":
            return
        try:
            self._remove(after_stop=self.state == "removing")
        except Exception as exc:  # a GraderError, or an OSError of a call that has no message of its own
            # deferred: sys adds ~0.0 ms to importing this module
            import sys

            message = str(exc) if isinstance(exc, GraderError) else \
                f"cannot remove grading context directory {self.dir}: {exc}; transcript data may remain there"
            sys.stderr.write(f"waza: warning: {message}\n")
        self.state = "done"


#: the context folder's name: this prefix and 16 random hex digits; a name taken is tried again
_PREFIX = "waza-grading-"
_NAME_TRIES = 16


def _empty(dfd: int, d: str) -> None:
    """Delete every entry of the open directory ``dfd`` without following symlinks."""
    # deferred: shutil adds ~7.3 ms to importing this module
    import shutil

    for name in os.listdir(dfd):
        where = os.path.join(d, name)
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(name, dir_fd=dfd)
            else:
                os.unlink(name, dir_fd=dfd)
        except OSError as exc:
            inner = f" ({exc.filename})" if exc.filename and os.fspath(exc.filename) != name else ""
            raise GraderError(f"cannot remove {where}{inner} from the grading context directory: "
                              f"{exc.strerror or exc}; transcript data may remain in {d}", "context_io") from None


def _discard(directory: str) -> str:
    """Undo a half-made context directory; returns a note when that failed too."""
    # deferred: shutil adds ~7.3 ms to importing this module
    import shutil

    try:
        shutil.rmtree(directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return f" (and {directory} could not be removed: {exc.strerror}; transcript data may remain there)"
    return ""


def _tampered(message: str) -> GraderError:
    return GraderError(message, "context_tampered")


def _context_bytes(ctx: GradingContext) -> bytes:
    doc = ctx.evidence.context_json()
    try:
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escaped JSON is still valid UTF-8
        return json.dumps(doc).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise GraderError(f"cannot write grading context: the run evidence is not JSON ({exc})",
                          "context_io") from None


def _text(data: bytes, truncated: bool, stream: str) -> str:
    text = data.decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[waza: {stream} truncated: only the first {MAX_OUTPUT} bytes were kept]"
    return text


def _tail(stderr: str, limit: int = 500) -> str:
    stderr = stderr.strip()
    if not stderr:
        return ""
    return f"; stderr: {'...' + stderr[-limit:] if len(stderr) > limit else stderr}"


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _signal_name(num: int) -> str:
    # deferred: signal adds ~1.1 ms to importing this module
    import signal

    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)


def _default_tmp() -> str:
    # deferred: tempfile adds ~5.7 ms to importing this module
    import tempfile

    return tempfile.gettempdir()


@hookimpl
def waza_register_graders(register):
    register(ProgramGrader)
