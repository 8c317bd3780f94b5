"""The code grader: waza's evaluation context and verdicts, plus time and memory limits."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest

from waza_core.errors import GraderError
from waza_graders import code as code_mod

from .conftest import ctx

HAS_NODE = shutil.which("node") is not None
needs_node = pytest.mark.skipif(not HAS_NODE, reason="node is not installed")

TRANSCRIPT = [{"type": "user.message", "content": "hi"}, {"type": "session.error", "message": "x"},
              {"type": "assistant.message", "content": "an error happened"}, {"content": 3}, {"type": None}]


def test_waza_context_and_verdicts(build):
    g = build("code", {"assertions": [
        "len(output) > 3", "'x' in output", "undefined_name", "1/0", "len(errors) == 2",
        "tool_calls == [{'name': 'bash'}] and outcome == {}", "duration_ms == 1234",
        "re.search(r'wor\\w+', output) is not None", "str(int(float('2.5'))) == '2' and bool(list(dict()))"]})
    res = g.grade(ctx("hello world", transcript=TRANSCRIPT, tool_calls=[{"name": "bash"}], duration_ms=1234))
    assert res.details == {"total_assertions": 9, "passed_assertions": 5, "failures": [
        "Failed: 'x' in output",
        "Failed: undefined_name: name 'undefined_name' is not defined",
        "Failed: 1/0: division by zero",
        "Failed: str(int(float('2.5'))) == '2' and bool(list(dict()))"]}
    assert res.score == 5 / 9 and not res.passed
    assert res.feedback == "; ".join(res.details["failures"])


def test_all_pass(build):
    res = build("code", {"assertions": ["True", "not False"]}).grade(ctx(""))
    assert (res.score, res.passed, res.feedback) == (1.0, True, "All assertions passed")
    assert res.details == {"total_assertions": 2, "passed_assertions": 2, "failures": None}


def test_no_imports_no_builtins(build):
    res = build("code", {"assertions": ["__import__('os')", "open('/etc/passwd')", "print(1)"]}).grade(ctx("x"))
    assert res.details["failures"] == [
        "Failed: __import__('os'): name '__import__' is not defined",
        "Failed: open('/etc/passwd'): name 'open' is not defined",
        "Failed: print(1): name 'print' is not defined"]
    res = build("code", {"assertions": ["import os"]}).grade(ctx("x"))
    assert res.feedback == "Failed: import os: invalid syntax (<string>, line 1)"


def test_comprehensions_see_the_context(build):
    """waza's locals-only context raises NameError here; the grader's globals context does not."""
    res = build("code", {"assertions": ["any(t['name'] == 'bash' and len(output) > 0 for t in tool_calls)",
                                        "[len(e) for e in errors] == [2]"]})
    assert res.grade(ctx("ok", tool_calls=[{"name": "bash"}], transcript=[{"type": "error", "x": 1}])).passed


def test_an_exception_without_message_is_not_a_pass(build):
    # waza reports str(e) == "" for these, which its caller reads as "passed"
    res = build("code", {"assertions": ["{}[output]", "'a' * (2 ** 40)"]}).grade(ctx(""))
    assert res.details["failures"] == ["Failed: {}[output]: ''", "Failed: 'a' * (2 ** 40): MemoryError"]


def test_runaway_python_assertion_is_stopped_and_the_rest_still_run(build):
    g = build("code", {"assertions": ["10**10**10 > 0", "len(output) == 2",
                                      "re.match('(a+)+$', 'a' * 60 + '!') is None", "output == 'ok'"],
                       "timeout": 1})
    t0 = time.monotonic()
    res = g.grade(ctx("ok"))
    assert time.monotonic() - t0 < 30
    assert res.details["failures"] == [
        "Failed: 10**10**10 > 0: assertion timed out after 1 s; the evaluator was stopped",
        "Failed: re.match('(a+)+$', 'a' * 60 + '!') is None: assertion timed out after 1 s; the evaluator was stopped"]
    assert res.score == 0.5


def test_python_evaluator_crash_is_a_grader_error(build):
    # the context is no sandbox against its own author: reach posix._exit and end the evaluator
    escape = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'BuiltinImporter']"
              "[0].load_module('posix')._exit(3)")
    with pytest.raises(GraderError) as exc:
        build("code", {"assertions": [escape]}).grade(ctx(""))
    assert exc.value.kind == "evaluator_failed" and "stopped unexpectedly (exit status 3)" in str(exc.value)


def test_cancel_stops_a_long_assertion(build):
    g = build("code", {"assertions": ["10**10**10"], "timeout": 600})
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    c = ctx("")
    c = type(c)(task=c.task, evidence=c.evidence, workspace_dir=None, cancel=cancel)
    t0 = time.monotonic()
    with pytest.raises(GraderError) as exc:
        g.grade(c)
    assert exc.value.kind == "cancelled" and time.monotonic() - t0 < 20


@needs_node
def test_javascript_context_and_verdicts(build):
    g = build("code", {"language": "javascript", "assertions": [
        "output.length > 3", "output.includes('x')", "foo", "errors.length === 2", "tool_calls[0].name === 'bash'",
        "duration_ms === 0 && JSON.stringify(outcome) === '{}'", "True && !False", "len(output)",
        "typeof require === 'undefined' && typeof process === 'undefined'"]})
    res = g.grade(ctx("hello world", transcript=TRANSCRIPT, tool_calls=[{"name": "bash"}]))
    assert res.details["failures"] == [
        "Failed: output.includes('x')",
        "Failed: foo: ReferenceError: foo is not defined",
        "Failed: len(output): ReferenceError: len is not defined"]
    assert res.score == 6 / 9


@needs_node
def test_javascript_timeout_is_wazas_message(build):
    res = build("code", {"language": "javascript", "timeout": 0.5,
                         "assertions": ["while (true) {}", "output === 'ok'"]}).grade(ctx("ok"))
    assert res.details["failures"] == ["Failed: while (true) {}: Error: Script execution timed out after 500ms"]


@pytest.mark.parametrize("language,name", [("python", "'python3' (or 'python')"), ("javascript", "'node'")])
def test_missing_interpreter_is_a_grader_error_naming_it(build, monkeypatch, tmp_path, language, name):
    monkeypatch.setattr(code_mod, "_FOUND", {})
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraderError) as exc:
        build("code", {"assertions": ["True"], "language": language})
    assert exc.value.kind == "start_failed" and f"needs {name} on PATH" in str(exc.value)


def test_warm_evaluators_are_reused_and_give_the_same_verdicts(build, monkeypatch):
    monkeypatch.setenv("WAZA_CODE_WARM", "1")
    g = build("code", {"assertions": ["len(output) % 2 == 0", "'z' not in output"]})
    try:
        first = g.grade(ctx("ab"))
        pids = {w.proc.pid for ws in code_mod._POOLS.idle.values() for w in ws}
        assert len(pids) == 1
        second = g.grade(ctx("abz"))
        assert {w.proc.pid for ws in code_mod._POOLS.idle.values() for w in ws} == pids
        assert (first.score, second.score) == (1.0, 0.0)
        results = {}

        def run(i):
            results[i] = g.grade(ctx("x" * i)).score

        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert results == {i: (1.0 if i % 2 == 0 else 0.5) for i in range(8)}
    finally:
        g.close()
    assert code_mod._POOLS.idle == {}


def test_without_warm_no_evaluator_outlives_its_run(build, monkeypatch):
    monkeypatch.delenv("WAZA_CODE_WARM", raising=False)
    build("code", {"assertions": ["True"]}).grade(ctx(""))
    assert code_mod._POOLS.idle == {}


def test_evaluator_processes_are_reaped(build):
    before = _children()
    g = build("code", {"assertions": ["10**10**10", "True"], "timeout": 0.5})
    g.grade(ctx(""))
    assert _children() <= before


def _children() -> set[int]:
    try:
        return {int(p) for p in open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()}
    except OSError:
        return set()


def test_config_errors(problems):
    assert problems("code", {}) == ["missing required key 'assertions'"]
    assert problems("code", {"assertions": []}) == ["assertions: [] should be non-empty"]
    assert problems("code", {"assertions": ["1"], "language": "ruby"})[0].startswith("language: 'ruby' is not one of")
    assert problems("code", {"assertions": ["1"], "timeout": 0}) == [
        "timeout: 0 is less than or equal to the minimum of 0"]


def test_needs_no_workspace(registry):
    assert registry.get("grader", "code").needs_workspace is False


def test_waza_run_without_node_stops_before_the_first_run(waza, tmp_path):
    import sys

    from tests.conftest import write

    write(tmp_path / "suite" / "eval.yaml", "name: s\nskill: k\ngraders:\n  - type: code\n    name: js\n"
          "    config: {language: javascript, assertions: ['true']}\ntasks: ['t.yaml']\n")
    write(tmp_path / "suite" / "t.yaml", "id: t\ninputs: {prompt: p}\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    proc = waza("run", str(tmp_path / "suite"), env={"PATH": str(bin_dir)})
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "grader 'js' could not start: the code grader needs 'node' on PATH" in err
    assert "Traceback" not in err
