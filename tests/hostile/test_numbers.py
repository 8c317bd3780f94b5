"""Item 6: non-finite and absurd numbers are refused at load time with file:line;
run sizes are bounded; a ``.waza.yaml`` that is not a file is an error."""

from __future__ import annotations

import pytest

from tests.conftest import BASIC_EVAL
from tests.hostile.conftest import no_traceback
from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core import limits
from waza_core.errors import SuiteError, WazaError
from waza_core.suite import schema
from waza_core.suite.load import load_suite


def task_with_timeout(value: str) -> str:
    return ("id: t\ninputs: {prompt: p}\ngraders:\n"
            f"  - {{type: program, name: p, config: {{command: 'true', timeout: {value}}}}}\n")


@pytest.mark.parametrize("value, words", [(".inf", "inf is not allowed"), (".nan", "nan is not allowed"),
                                          ("-.inf", "inf is not allowed"), ("1e300", "greater than the maximum")])
def test_program_timeouts_must_be_finite_and_sane(make_suite, registry, value, words):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task_with_timeout(value)})
    with pytest.raises(SuiteError) as info:
        load_suite(path, registry)
    assert any("t.yaml:4:" in p and words in p for p in info.value.problems), info.value.problems


@pytest.mark.parametrize("line", ["timeout_seconds: 100000000000", "timeout_seconds: .inf",
                                  "graders: [{type: text, name: g, weight: .nan, config: {contains: [a]}}]",
                                  "graders: [{type: text, name: g, weight: 1e300, config: {contains: [a]}}]"])
def test_task_numbers_are_bounded(make_suite, registry, line):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": f"id: t\ninputs: {{prompt: p}}\n{line}\n"})
    with pytest.raises(SuiteError, match=r"t\.yaml:3:"):
        load_suite(path, registry)


@pytest.mark.parametrize("key, value", [("trials_per_task", 10_000_000), ("workers", 10**9),
                                        ("timeout_seconds", 10**12), ("max_attempts", 10**6)])
def test_eval_config_numbers_are_bounded(make_suite, registry, key, value):
    ev = f"name: basic\nskill: demo\nconfig:\n  executor: mock\n  {key}: {value}\ntasks: ['tasks/*.yaml']\n"
    path = make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    with pytest.raises(SuiteError, match=r"eval\.yaml:5:.*greater than the maximum"):
        load_suite(path, registry)


@pytest.mark.parametrize("flag, value", [("--trials", "10000000"), ("--workers", "100000000")])
def test_cli_run_sizes_are_refused(waza, make_suite, flag, value):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    proc = waza("run", str(path), flag, value)
    no_traceback(proc)
    assert proc.returncode == 2 and b"range" in proc.stderr


def test_the_schemas_repeat_the_limits():
    ev = schema.load("eval")
    cfg = ev["properties"]["config"]["properties"]
    assert cfg["trials_per_task"]["maximum"] == limits.MAX_TRIALS
    assert cfg["timeout_seconds"]["maximum"] == limits.MAX_TIMEOUT_SECONDS
    assert cfg["workers"]["maximum"] == cfg["max_workers"]["maximum"] == limits.MAX_WORKERS
    assert cfg["max_attempts"]["maximum"] == limits.MAX_ATTEMPTS
    assert ev["$defs"]["grader"]["properties"]["weight"]["maximum"] == limits.MAX_WEIGHT
    task = schema.load("task")
    assert task["properties"]["timeout_seconds"]["maximum"] == limits.MAX_TIMEOUT_SECONDS
    from waza_graders.program import ProgramGrader

    assert ProgramGrader.config_schema["properties"]["timeout"]["maximum"] == limits.MAX_TIMEOUT_SECONDS


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_project_config_that_is_not_a_file_is_an_error(waza, make_suite, tmp_path, kind):
    import os

    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    project = tmp_path / "project"
    project.mkdir()
    if kind == "folder":
        (project / ".waza.yaml").mkdir()
    else:
        os.mkfifo(project / ".waza.yaml")
    for cmd in (["validate", str(path)], ["run", str(path)]):
        proc = waza(*cmd, cwd=project, timeout=60)
        no_traceback(proc)
        assert proc.returncode == 2 and b".waza.yaml: the project config must be a regular file" in proc.stderr


@pytest.mark.parametrize("value", ["1e300", ".inf", "-1"])
def test_program_timeout_in_project_config_is_bounded(tmp_path, value):
    from waza_core.suite import project_config

    (tmp_path / ".waza.yaml").write_text(f"graders:\n  programTimeout: {value}\n")
    with pytest.raises(WazaError, match="programTimeout must be a number of seconds"):
        project_config._program_timeout(tmp_path / ".waza.yaml")


@pytest.mark.parametrize("code", ["1e300", "99999999999999999999999999", "-1000"])
def test_a_hook_exit_code_out_of_range_is_a_load_error(make_suite, registry, code):
    hooks = f"hooks:\n  before_run: [{{command: 'true', exit_codes: [{code}]}}]\n"
    path = make_suite(BASIC_EVAL + hooks, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"})
    with pytest.raises(SuiteError, match=r"eval\.yaml:\d+:\d+: hooks.*exit_codes"):
        load_suite(path, registry)


def test_a_template_error_quotes_little_of_a_huge_name(waza, tmp_path):
    suite = tmp_path / "s"
    suite.mkdir()
    (suite / "rows.csv").write_text("id,prompt\na,{{.Vars." + "q" * 100_000 + "}}\n")
    (suite / "eval.yaml").write_text("name: s\nskill: s\nconfig: {executor: mock}\ntasks_from: rows.csv\n")
    proc = waza("validate", str(suite))
    assert proc.returncode == 2 and b"rows.csv:2:1: row 1: prompt:" in proc.stderr
    # the line names the file by its path, whose length is the temporary folder's, not the name's
    lines = proc.stderr.replace(str(suite).encode(), b"SUITE").splitlines()
    assert max(len(line) for line in lines) < 400


def _template_suite(root, big: int, rows: list[str]):
    """A tasks_from suite whose eval ``inputs`` hold a variable of ``big`` characters."""
    root.mkdir()
    (root / "rows.csv").write_text("id,prompt\n" + "".join(f"r{i},{p}\n" for i, p in enumerate(rows)))
    (root / "eval.yaml").write_text(f"name: s\nskill: s\nconfig: {{executor: mock}}\ninputs: {{big: {'x' * big}}}\n"
                                    "tasks_from: rows.csv\nallow_ungraded: true\n")
    return root


def test_a_template_repeating_a_large_variable_is_refused_at_its_row(waza, tmp_path):
    """1 MiB repeated 20 times in one prompt: refused before the 20 MiB string is made."""
    suite = _template_suite(tmp_path / "s", 1024 * 1024, ["ok {{.Vars.big}}", "{{.Vars.big}}" * 20])
    proc = waza("validate", str(suite))
    no_traceback(proc)
    assert proc.returncode == 2
    assert b"rows.csv:3:1: row 2: prompt: the rendered prompt would be more than 16,777,216 characters" in proc.stderr


def test_prompts_that_multiply_the_data_file_are_refused(waza, tmp_path):
    """Each row's prompt is under the limit of one prompt, but together the rows would
    render hundreds of times the data file: refused at the row that goes over."""
    suite = _template_suite(tmp_path / "s", 1024 * 1024, ["{{.Vars.big}}" * 4] * 100)
    proc = waza("validate", str(suite))
    no_traceback(proc)
    assert proc.returncode == 2
    line = next(x for x in proc.stderr.decode().splitlines() if "rendered up to this row" in x)
    assert "rows.csv:66:1: row 65: prompt:" in line and "64 times the file's size plus 256 Mi" in line, line


def test_a_large_document_used_once_per_row_is_not_a_multiplication(waza, tmp_path):
    suite = _template_suite(tmp_path / "s", 1024 * 1024, ["Summarise: {{.Vars.big}}"] * 100)
    proc = waza("validate", str(suite))
    assert proc.returncode == 0, proc.stderr.decode()[-500:]


def test_skip_graders_compares_no_scores_between_models(waza, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: hello}\n"})
    proc = waza("run", str(path), "--skip-graders", "-m", "a", "-m", "b")
    no_traceback(proc)
    rows = [line.split() for line in proc.stdout.decode().splitlines() if line.startswith(("  a ", "  b "))]
    assert len(rows) == 2 and all(row[1:3] == ["-", "-"] for row in rows), rows
