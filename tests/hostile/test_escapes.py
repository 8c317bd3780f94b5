"""Item 9 (and the console of issue 13): control characters from suites, agents and
graders never reach a terminal raw; colour follows --color and NO_COLOR."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.hostile.conftest import no_traceback
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core import escape_markdown
from waza_core.results import console
from waza_core.results.console import escape, escape_html

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

HOSTILE_NAME = "\x1b[2J\x1b]0;pwned\x07evil\r\n✓ [9/9] forged (passed score 1.00)\u202e"


def test_escape_makes_every_control_character_visible():
    assert escape("a\x1b[31mb") == "a\\x1b[31mb"
    assert escape("line\nnext\r") == "line\\nnext\\r"
    assert escape("keep\ttab") == "keep\ttab"
    assert escape("\x9b\x7f\u202e\u2028") == "\\x9b\\x7f\\u202e\\u2028"
    assert escape("a\nb", newlines=True) == "a\nb"
    assert escape("\ud800") == "\\ud800"  # a lone surrogate cannot even be encoded


@given(st.text())
def test_escaped_text_has_no_raw_control_character_and_encodes(text):
    out = escape(text)
    assert not RAW_CONTROL.search(out) and "\n" not in out
    out.encode("utf-8")


@given(st.text())
def test_markdown_and_html_escapes_leave_no_markup(text):
    md = escape_markdown(text)
    assert not RAW_CONTROL.search(md) and "\n" not in md
    assert "<" not in md.replace("<br>", "") and not re.search(r"(?<!\\)[|\[\]`*_]", md)
    html = escape_html(text)
    assert not RAW_CONTROL.search(html) and "<" not in html and '"' not in html


def test_a_hostile_task_cannot_drive_the_terminal_or_forge_a_line(waza, make_suite):
    task = ("id: t1\nname: " + '"' + HOSTILE_NAME.encode("unicode_escape").decode().replace('"', '\\"') + '"\n'
            "inputs: {prompt: p}\nexpected: {output_contains: [\"\\e]0;title\\a\"]}\n")
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    proc = waza("run", str(path), "-v")
    no_traceback(proc)
    assert proc.returncode == 1
    for stream in (proc.stdout, proc.stderr):
        text = stream.decode("utf-8")
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert not any(line.startswith("✓ [9/9]") for line in text.splitlines())
    assert "\\x1b[2J" in proc.stderr.decode()


def test_validate_escapes_file_names(waza, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t\x1b[2J.yaml": "id: t\ninputs: {prompt: p}\nenabled: 1\n"})
    proc = waza("validate", str(path))
    assert proc.returncode == 2
    assert b"\x1b" not in proc.stderr and b"t\\x1b[2J.yaml" in proc.stderr


def test_no_color_and_the_color_option(waza, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\nexpected: {output_contains: [zz]}\n"})
    always = waza("run", str(path), "--color", "always")
    assert b"\x1b[31m" in always.stdout  # the failed mark, in red
    assert waza("run", str(path)).stdout.count(b"\x1b[") == 0  # auto in a pipe: no colour
    assert b"\x1b[" not in waza("run", str(path), "--color", "never").stdout
    bad = waza("run", str(path), "--color", "sometimes")
    assert bad.returncode == 2 and b"--color must be one of" in bad.stderr


def test_no_color_wins_over_auto_on_a_terminal(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.setenv("NO_COLOR", "1")
    assert not console.color_enabled("auto", Tty())
    assert console.color_enabled("always", Tty())
    monkeypatch.setenv("NO_COLOR", "")
    assert console.color_enabled("auto", Tty())


def test_quiet_prints_only_errors_and_verbose_adds_feedback(waza, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\nexpected: {output_contains: [zz]}\n"})
    quiet = waza("run", str(path), "-q")
    assert quiet.returncode == 1 and quiet.stdout == b"" and quiet.stderr == b""
    verbose = waza("run", str(path), "-v")
    assert b"Missing expected substring" in verbose.stderr
    both = waza("run", str(path), "-q", "-v")
    assert both.returncode == 2


def test_skip_graders_says_so_instead_of_a_zero_success_rate(waza, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    proc = waza("run", str(path), "--skip-graders")
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert "success rate" not in out and "graders skipped" in out


def test_the_summary_blocks_keep_each_name_on_its_line(waza, make_suite, tmp_path):
    """SKILL IMPACT, RESULTS BY GROUP and MODEL COMPARISON print names from the suite; a
    newline in one once started a forged line of its own there."""
    import json

    forged = "\n✓ [9/9] forged (passed score 1.00)"
    evil = json.dumps(HOSTILE_NAME + forged)
    eval_text = BASIC_EVAL.replace("  timeout_seconds: 30\n", "  timeout_seconds: 30\n  group_by: tags\n"
                                   f"  skill_directories: [skills]\n  models: [{evil}, b]\n") + "baseline: true\n"
    path = make_suite(eval_text, {
        "tasks/a.yaml": f"id: a\nname: {evil}\ntags: [{evil}]\ninputs: {{prompt: hello}}\n",
        "skills/demo/SKILL.md": "---\nname: demo\ndescription: d\n---\nbody\n"})
    proc = waza("run", str(path), "--color", "never", "-o", str(tmp_path / "r.json"))
    no_traceback(proc)
    text = (proc.stdout + proc.stderr).decode()
    for block in ("SKILL IMPACT", "RESULTS BY GROUP", "MODEL COMPARISON"):
        assert block in text
    assert not RAW_CONTROL.search(text.replace("\n", ""))
    assert not [line for line in text.splitlines() if line.lstrip().startswith("✓ [9/9] forged")]
