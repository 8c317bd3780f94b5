"""The real process: stdout delivery, closed and broken streams, no reads, no children."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.interop.helpers import ADAPTER, NOTICE, REPO, child_env, contains, grader, suite, waza_argv

SUITE = suite(("t", [contains("Hello")])).encode()
IMPORT = ("interop", "import", "--adapter", ADAPTER, "--test", "t", "--assertion", "1")
EXPORT = ("interop", "export", "--adapter", ADAPTER)


def run(*args, stdin=b"", **kw):
    return subprocess.run(waza_argv(*args), input=stdin, capture_output=True, env=child_env(), timeout=60, **kw)


def test_success_and_failure_as_a_real_process():
    ok = run(*IMPORT, stdin=SUITE)
    assert ok.returncode == 0 and ok.stderr.decode() == NOTICE + "\n"
    assert b'- "Hello"' in ok.stdout
    bad = run(*IMPORT, stdin=SUITE.replace(b"Hello", b"{{ x }}"))
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode().count("\n") == 1 and b"Traceback" not in bad.stderr


@pytest.mark.parametrize("args,stdin", [(IMPORT, SUITE), (EXPORT, grader("g", "x").encode())])
def test_broken_stdout_pipe_exits_2_without_traceback(args, stdin):
    proc = subprocess.Popen(waza_argv(*args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env())
    proc.stdout.close()  # the reader goes away before anything is written
    _, err = proc.communicate(stdin, timeout=60)
    assert proc.returncode == 2, err
    text = err.decode()
    assert text.startswith("waza: error: cannot write the output: stdout was closed by its reader (broken pipe)")
    assert text.count("\n") == 1
    assert "Traceback" not in text and "Exception ignored" not in text
    assert NOTICE not in text  # the notice follows a delivered output only


def test_closed_stdout_is_a_delivery_error():
    proc = subprocess.run(["bash", "-c", 'exec "$@" >&-', "bash", *waza_argv(*IMPORT)], input=SUITE,
                          capture_output=True, env=child_env(), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("waza: error: cannot write the output to stdout")
    assert b"Traceback" not in proc.stderr


def test_closed_stdin_is_a_one_line_error():
    proc = subprocess.run(["bash", "-c", 'exec "$@" <&-', "bash", *waza_argv(*EXPORT)],
                          capture_output=True, env=child_env(), timeout=60)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr == b"waza: error: stdin is closed; redirect the input file: < file.yaml\n"


def test_a_terminal_on_stdin_is_refused_instead_of_waiting():
    primary, secondary = os.openpty()
    try:
        proc = subprocess.run(waza_argv(*EXPORT), stdin=secondary, capture_output=True, env=child_env(), timeout=60)
    finally:
        os.close(primary)
        os.close(secondary)
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"reads its input from stdin; redirect a file" in proc.stderr


def test_stdin_that_cannot_be_read_is_a_one_line_error(tmp_path):
    fd = os.open(tmp_path / "sink", os.O_WRONLY | os.O_CREAT)  # write-only: read() fails with EBADF
    try:
        proc = subprocess.run(waza_argv(*EXPORT), stdin=fd, capture_output=True, env=child_env(), timeout=60)
    finally:
        os.close(fd)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.startswith(b"waza: error: cannot read stdin: ")


AUDIT = textwrap.dedent(r"""
    import json, sys
    from typer.testing import CliRunner
    from waza_core.cli.app import build_app

    seen = []
    WATCH = ("open", "os.listdir", "os.scandir", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
             "os.spawn", "os.fork", "socket.connect", "socket.getaddrinfo", "urllib.Request", "ctypes.dlopen")
    def hook(event, args):
        if event in WATCH:
            seen.append([phase[0], event, repr(args)[:300]])
    phase = ["warm-up"]
    sys.addaudithook(hook)
    app, runner = build_app(), CliRunner()
    cases = json.loads(sys.argv[1])
    for args, data in cases:
        runner.invoke(app, args, input=data.encode())
    phase[0] = "measured"
    codes = [runner.invoke(app, args, input=data.encode()).exit_code for args, data in cases]
    print(json.dumps({"codes": codes, "seen": seen}))
""")


def test_conversions_read_no_file_run_nothing_and_open_no_socket(tmp_path):
    """Ambient config, referenced files, scripts and hooks next to the input are never touched."""
    (tmp_path / ".waza.yaml").write_text("defaults: {executor: mock}\n")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "config.yaml").write_text("execution: {threshold: 1}\n")
    (tmp_path / "cases.yaml").write_text("- id: t\n")
    (tmp_path / "hook.sh").write_text("#!/bin/sh\ntouch pwned\n")
    hostile = (
        "name: x\nworkspace: {hooks: {before_all: {command: ./hook.sh}}}\n"
        "tests:\n  - cases.yaml\n  - id: t\n    input: {file: ./cases.yaml}\n"
        "    assert:\n      - {type: contains, value: ./cases.yaml, metric: /etc/passwd}\n"
        "      - {type: code-grader, command: ./hook.sh}\n      - {include: cases}\n"
    )
    cases = [
        [list(IMPORT), hostile],
        [list(IMPORT[:-1]) + ["2"], hostile],
        [list(IMPORT[:-1]) + ["3"], hostile],
        [list(EXPORT), grader("./hook.sh", "./cases.yaml")],
        [list(EXPORT), "name: g\ntype: text\nconfig: {contains_cs: [a, b]}\n"],
    ]
    env = child_env()
    proc = subprocess.run([sys.executable, "-c", AUDIT, json.dumps(cases)], cwd=tmp_path, capture_output=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    report = json.loads(proc.stdout)
    assert report["codes"] == [0, 2, 2, 0, 2]
    assert [s for s in report["seen"] if s[0] == "measured"] == []
    touched = [s for s in report["seen"] if any(n in s[2] for n in (".waza.yaml", ".agentv", "cases.yaml", "hook.sh"))]
    assert touched == []
    assert not (tmp_path / "pwned").exists()


def test_interop_module_imports_nothing_heavy_at_top_level():
    code = ("import sys, waza_core.cli.interop\n"
            "print(sorted(m for m in ('ruamel.yaml', 'pluggy', 'attrs', 'jsonschema', 'waza_core.interop',"
            " 'waza_core.suite.strict_yaml', 'waza_interop.agentv_contains') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=child_env(), cwd=REPO, timeout=60)
    assert proc.stdout.strip() == b"[]", proc.stderr
