"""The Go text/template subset used for tasks_from prompts."""

from __future__ import annotations

import pytest

from waza_core.suite.template import Context, TemplateError, render

CTX = Context(vars={"name": "Ann", "first-name": "A"}, task_name="row-7", job_id="run-1700000000",
              timestamp="2026-01-01T00:00:00Z", iteration=0, attempt=0)


@pytest.mark.parametrize("text,out", [
    ("no actions at all {", "no actions at all {"),
    ("Hi {{.Vars.name}}!", "Hi Ann!"),
    ("{{ .Vars.name }}", "Ann"),
    ("{{.TaskName}} {{.JobID}} {{.Timestamp}} {{.Iteration}}/{{.Attempt}}",
     "row-7 run-1700000000 2026-01-01T00:00:00Z 0/0"),
    ('{{index .Vars "first-name"}}', "A"),
    ("{{index .Vars `first-name`}}", "A"),
    ("a  {{- .Vars.name -}}  b", "aAnnb"),
    ("a {{/* a comment */}}b", "a b"),
    ("a\n{{- /* trimmed */ -}}\nb", "ab"),
    ("{{\n  .Vars.name\n}}", "Ann"),  # actions may span lines (Go 1.16+)
    ("}} stray closers {{.Vars.name}} }}", "}} stray closers Ann }}"),
    ("{{-1}}", None),
])
def test_render(text, out):
    if out is None:
        with pytest.raises(TemplateError):
            render(text, CTX)
    else:
        assert render(text, CTX) == out


@pytest.mark.parametrize("text,message", [
    ("{{.Vars.nobody}}", "template line 1 col 1: map has no entry for key 'nobody' (variables: first-name, name)"),
    ("x\n  {{.Nope}}", "template line 2 col 3: can't evaluate field Nope"),
    ("{{name}}", "function 'name' not defined (did you mean {{.Vars.name}}?)"),
    ("{{.Vars.name.first}}", "can't evaluate field first in type string"),
    ("{{.Vars}}", ".Vars is a map; name a variable"),
    ("{{.}}", "prints the whole context"),
    ("{{.Vars.name", "unclosed action"),
    ("{{/* never closed", "unclosed comment"),
    ("{{if .Vars.name}}x{{end}}", "{{if}} is not supported"),
    ("{{.Vars.name | printf}}", "is not supported"),
    ("{{$x := 1}}", "template variables ($x"),
    ('{{"text"}}', "constants are not supported"),
    ("{{index .Vars name}}", 'index is supported only as index .Vars "name"'),
    ("{{.Vars.first-name}}", "bad field name"),
    ("{{ }}", "empty action"),
])
def test_errors(text, message):
    with pytest.raises(TemplateError) as exc:
        render(text, CTX)
    assert message in str(exc.value)



@pytest.mark.parametrize("action", ["{{.Vars.big}}", '{{index .Vars "big"}}'])  # the fast path and the scanner
def test_a_limit_refuses_a_long_result_before_making_it(action):
    from waza_core.suite.template import TooLong

    ctx = Context(vars={"big": "x" * 1000})
    assert render(action * 10, ctx, limit=10_000) == "x" * 10_000  # at the limit: rendered
    with pytest.raises(TooLong, match="more than 10,000 characters"):
        render("a" + action * 10, ctx, limit=10_000)
    huge = Context(vars={"big": "x" * 1024 * 1024})
    with pytest.raises(TooLong):  # 10 GiB if it were made: refused at once
        render(action * 10_000, huge, limit=1024 * 1024)
    assert issubclass(TooLong, TemplateError)  # a row problem like any other


@pytest.mark.parametrize("text", ["{{/* c */}}" + "y" * 20_000, "{{- .Vars.name -}}" + "y" * 20_000,
                                  '{{index .Vars "name"}}' + "y" * 20_000])
def test_the_literal_after_the_last_action_counts_too(text):
    from waza_core.suite.template import TooLong

    with pytest.raises(TooLong):
        render(text, CTX, limit=10_000)
    assert len(render(text, CTX, limit=30_000)) >= 20_000
