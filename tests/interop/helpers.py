"""Helpers for the interop tests: run the CLI in-process or as a child, build suites."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

from waza_core.interop import quote

ADAPTER = "agentv-68df6d2206cea61f721d0445b405efcb5e94aff0-contains-v1"
NOTICE = ("ASSERTION-ONLY PROJECTION: task inputs, providers, fixtures, sibling assertions, "
          "thresholds, suite metadata and execution settings are not converted or validated.")
REPO = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024

#: the app of each command, built once (typer still builds its click command on each call:
#: an app of the one command called keeps that cheap)
_app: dict = {}


class Result(NamedTuple):
    code: int
    out: bytes
    err: str


def cli(*args: str, stdin: bytes = b"") -> Result:
    """Run ``waza <args>`` in this process (fast enough for property tests)."""
    from typer.testing import CliRunner

    from waza_core.cli.app import build_app

    if args[0] not in _app:
        os.environ.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
        _app[args[0]] = build_app(args[0])
    res = CliRunner().invoke(_app[args[0]], list(args), input=stdin)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"uncaught {type(res.exception).__name__}: {res.exception}") from res.exception
    return Result(res.exit_code, res.stdout_bytes, res.stderr_bytes.decode("utf-8", "replace"))


def imp(stdin: bytes | str, test: str = "contains-check", n: str = "1", adapter: str = ADAPTER) -> Result:
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    return cli("interop", "import", "--adapter", adapter, "--test", test, "--assertion", n, stdin=data)


def exp(stdin: bytes | str, adapter: str = ADAPTER) -> Result:
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    return cli("interop", "export", "--adapter", adapter, stdin=data)


def assert_rejected(res: Result, *needles: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr that mentions every needle."""
    assert res.code == 2, (res.code, res.out, res.err)
    assert res.out == b"", res.out
    assert "Traceback" not in res.err
    assert res.err.endswith("\n") and res.err.count("\n") == 1, repr(res.err)
    assert res.err.startswith("waza: error: "), res.err
    for needle in needles:
        assert needle in res.err, (needle, res.err)


def child_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("WAZA_DISABLE_PLUGIN_AUTOLOAD", "1")
    env.update(extra)
    return env


def waza_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "waza_core", *args]


def suite(*tests: tuple[str, list], name: str = "interop-test") -> str:
    """An AgentV suite. A test is ``(id, items)``; an item is a raw YAML string (a string
    criterion, written as is) or a list of ``key: value`` lines for one assertion mapping."""
    out = [f"name: {name}", "tests:"]
    for test_id, items in tests:
        out += [f"  - id: {quote(test_id)}", "    input: Say hello", "    assert:"]
        for item in items:
            lines = [item] if isinstance(item, str) else list(item)
            out.append("      - " + lines[0])
            out += ["        " + line for line in lines[1:]]
    return "\n".join(out) + "\n"


def contains(value: str, metric: str | None = None, *extra: str) -> list[str]:
    lines = ["type: contains", f"value: {quote(value)}"]
    if metric is not None:
        lines.append(f"metric: {quote(metric)}")
    return lines + list(extra)


def grader(name: str, *needles: str, extra: str = "") -> str:
    body = "".join(f"    - {quote(n)}\n" for n in needles)
    return f"name: {quote(name)}\ntype: text\nconfig:\n  contains_cs:\n{body}{extra}"


def native_grade(needle: str, output: str):
    """The real native grader: a text grader with one contains_cs check."""
    from waza_core import testing

    return testing.grade("text", output, config={"contains_cs": [needle]})


def load_output(out: bytes):
    from waza_core.suite import strict_yaml

    return strict_yaml.load(out, source="<output>").data


def as_list_item(mapping_text: str, indent: int = 6) -> str:
    """Place a block mapping (like ``export`` output, comments included) in a YAML list."""
    out, first = [], True
    for line in mapping_text.splitlines():
        if first and line and not line.startswith("#"):
            out.append(" " * indent + "- " + line)
            first = False
        else:
            out.append(" " * (indent + 2) + line if line else "")
    return "\n".join(out) + "\n"


def suite_around(item_text: str, before: list | None = None, after: list | None = None, test: str = "t") -> str:
    """A suite whose test ``test`` has ``before`` items, the block mapping ``item_text``, then ``after``."""
    head = suite((test, list(before or [])))
    tail = suite((test, list(after or []))).split("    assert:\n", 1)[1] if after else ""
    return head + as_list_item(item_text) + tail
