"""tasks_from: tasks from CSV or JSON Lines rows, with range and prompt templates."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from tests.suite.conftest import LEGACY
from waza_core.suite import tasks_from

CSV_EVAL = """\
name: demo
skill: demo
inputs:
  greeting: Hello
  count: 1.10
tasks_from: data/rows.csv
allow_ungraded: true
"""


def rows(load, csv_text, eval_yaml=CSV_EVAL, name="data/rows.csv", **kw):
    return load(eval_yaml, tasks={}, files={name: csv_text}, **kw)


def test_ids_names_prompts_and_templates(load):
    suite = rows(load, "id,name,prompt,who\n"
                       "a1,First,\"{{.Vars.greeting}}, {{.Vars.who}}!\",Ann\n"
                       ",Second,Plain {{.TaskName}} x{{.Vars.count}},\n"
                       ",,\"{{.Vars.greeting}} again\",\n")
    assert [(t.id, t.name, t.prompt) for t in suite.tasks] == [
        ("a1", "First", "Hello, Ann!"),
        ("Second", "Second", "Plain Second x1.10"),  # inputs as written: 1.10, not 1.1
        ("row-3", "row-3", "Hello again"),
    ]
    assert not suite.warnings


def test_row_columns_override_inputs(load):
    suite = rows(load, "prompt,greeting\n{{.Vars.greeting}},Hi\n")
    assert suite.tasks[0].prompt == "Hi"


def test_tasks_globs_are_not_read_with_tasks_from(load):
    suite = load(CSV_EVAL + 'tasks: ["tasks/*.yaml"]\n', tasks={"tasks/t.yaml": "broken: ["},
                 files={"data/rows.csv": "prompt\nx\n"})
    assert [t.id for t in suite.tasks] == ["row-1"]
    assert any("tasks is not read when tasks_from is set" in w for w in suite.warnings)


def test_range_numbers_rows_of_the_file(load):
    data = "prompt\n" + "".join(f"p{i}\n" for i in range(1, 11))
    suite = rows(load, data, CSV_EVAL + "range: [3, 5]\n")
    assert [(t.id, t.prompt) for t in suite.tasks] == [("row-3", "p3"), ("row-4", "p4"), ("row-5", "p5")]


def test_blank_lines_and_a_bom_do_not_count(load):
    suite = rows(load, "\ufeffid,prompt\n\na,x\n\nb,y\n", CSV_EVAL + "range: [2, 2]\n")
    assert [t.id for t in suite.tasks] == ["b"]


@pytest.mark.parametrize("rng,message", [
    ("[0, 3]", "invalid range: both values must be > 0, got [0, 3]"),
    ("[4, 2]", "invalid range: start (4) must be <= end (2)"),
    ("[1]", "range: [1] is too short"),
    ("[7, 9]", "range [7, 9] selects no row: "),
    ("[7, 9]", "rows.csv has 2 data row(s)"),
])
def test_bad_ranges(problems, rng, message):
    out = problems(CSV_EVAL + f"range: {rng}\n", tasks={}, files={"data/rows.csv": "prompt\na\nb\n"})
    assert any(message in p for p in out), out


def test_zero_range_means_all_rows(load):
    """waza (Go) reads ``range`` into [2]int and treats [0, 0] as unset."""
    assert len(rows(load, "prompt\na\nb\n", CSV_EVAL + "range: [0, 0]\n").tasks) == 2


def test_a_row_with_the_wrong_column_count(problems):
    out = problems(CSV_EVAL, tasks={}, files={"data/rows.csv": "id,prompt\na,x\nb,y,z\n"})
    assert out[0].endswith("data/rows.csv:3:1: row 2 has 3 column(s), expected 2 (the header has 2: id, prompt)")


def test_template_errors_name_the_row_and_column(problems):
    out = problems(CSV_EVAL, tasks={}, files={"data/rows.csv": "prompt\nok\nHi {{.Vars.nobody}}\n{{name}}\n"})
    assert out[0].endswith("data/rows.csv:3:1: row 2: prompt: template line 1 col 4: map has no entry for key "
                           "'nobody' (variables: count, greeting, prompt)")
    assert "row 3: prompt: template line 1 col 1: function 'name' not defined (did you mean {{.Vars.name}}?)" \
        in out[1]


def test_template_problems_are_capped(problems):
    data = "prompt\n" + "{{.Vars.x}}\n" * 50
    out = problems(CSV_EVAL, tasks={}, files={"data/rows.csv": data})
    assert len(out) == tasks_from.MAX_ROW_PROBLEMS + 1
    assert out[-1].endswith("... and 30 more row(s) with template problems")


def test_duplicate_ids_are_an_error(problems):
    out = problems(CSV_EVAL, tasks={}, files={"data/rows.csv": "id,prompt\na,x\nb,y\na,z\n"})
    assert "data/rows.csv:4:1: task id 'a' is also used by" in out[0] and "rows.csv:2" in out[0]


def test_no_prompt_column_warns(load):
    suite = rows(load, "id\na\n")
    assert suite.tasks[0].prompt == ""
    assert any("has no 'prompt' column" in w for w in suite.warnings)


@pytest.mark.parametrize("text,message", [
    ("", "the file is empty (no header row)"),
    ("prompt\n", "the file has a header but no data row"),
    ('prompt\n"unterminated\n', "rows.csv:2:1: invalid CSV: unexpected end of data (a quoted field is never closed)"),
    (b"prompt\n\xff\xfe\n", "not UTF-8 text"),
])
def test_bad_files(problems, make_suite, registry, text, message):
    from waza_core.errors import SuiteError
    from waza_core.suite.load import load_suite

    path = make_suite(CSV_EVAL, {}, {"data/rows.csv": "x"})
    target = path.parent / "data" / "rows.csv"
    target.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    assert message in exc.value.problems[0], exc.value.problems


def test_jsonl(load):
    data = ('{"id": "j1", "prompt": "{{.Vars.greeting}} {{.Vars.n}}", "n": 3}\n'
            "\n"
            '{"name": "two", "prompt": "plain", "flag": true, "nothing": null}\n')
    suite = load(CSV_EVAL.replace("rows.csv", "rows.jsonl"), tasks={}, files={"data/rows.jsonl": data})
    assert [(t.id, t.prompt) for t in suite.tasks] == [("j1", "Hello 3"), ("two", "plain")]


@pytest.mark.parametrize("line,message", [
    ("[1, 2]", "row 1 must be a JSON object, got list"),
    ('{"prompt": {"a": 1}}', "row 1: column 'prompt' must be a string, number or boolean, got an object"),
    ("{nope", "row 1 is not valid JSON"),
])
def test_bad_jsonl(problems, line, message):
    out = problems(CSV_EVAL.replace("rows.csv", "rows.jsonl"), tasks={}, files={"data/rows.jsonl": line + "\n"})
    assert message in out[0] and "rows.jsonl:1:1" in out[0]


# -- hostile: paths that leave the suite, huge files -----------------------------------------------------

@pytest.mark.parametrize("rel", ["../outside.csv", "data/../../outside.csv", "/etc/hostname"])
def test_path_outside_the_suite(problems, rel):
    out = problems(CSV_EVAL.replace("data/rows.csv", rel), tasks={}, files={"data/rows.csv": "prompt\nx\n"})
    assert "eval.yaml:6:13: tasks_from" in out[0] and "keep the data file inside" in out[0]


def test_symlink_leaving_the_suite(problems, make_suite, registry, tmp_path):
    from waza_core.errors import SuiteError
    from waza_core.suite.load import load_suite

    secret = tmp_path / "secret.csv"
    secret.write_text("prompt\nsecret\n")
    path = make_suite(CSV_EVAL, {}, {"data/keep.txt": ""})
    os.symlink(secret, path.parent / "data" / "rows.csv")
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    assert "leaves" in exc.value.problems[0] and "through a symbolic link" in exc.value.problems[0]


def test_absolute_path_inside_the_suite_is_fine(load, tmp_path):
    inside = tmp_path / "suite" / "data" / "rows.csv"
    suite = load(CSV_EVAL.replace("data/rows.csv", str(inside)), tasks={}, files={"data/rows.csv": "prompt\nx\n"})
    assert [t.prompt for t in suite.tasks] == ["x"]


def test_missing_file_and_folder(problems):
    out = problems(CSV_EVAL.replace("rows.csv", "nope.csv"), tasks={}, files={"data/rows.csv": "prompt\nx\n"})
    assert "tasks_from 'data/nope.csv': no such file" in out[0]
    out = problems(CSV_EVAL.replace("data/rows.csv", "data"), tasks={}, files={"data/rows.csv": "prompt\nx\n"})
    assert "tasks_from 'data': is a folder" in out[0]


def test_a_million_rows_with_a_range_reads_only_the_range(make_suite, registry, tmp_path):
    """Reading stops after the range's last row: a malformed row further down is never
    reached, and memory stays flat whatever the file's size."""
    from waza_core.suite.load import load_suite

    path = make_suite(CSV_EVAL + "range: [10, 12]\n", {}, {"data/keep.txt": ""})
    with open(path.parent / "data" / "rows.csv", "w") as fh:
        fh.write("id,prompt\n")
        fh.writelines(f"r{i},prompt number {i}\n" for i in range(1, 1_000_001))
        fh.write("broken,row,with,too,many,columns\n")
    tracemalloc.start()
    t0 = time.perf_counter()
    suite = load_suite(path, registry)
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [t.id for t in suite.tasks] == ["r10", "r11", "r12"]
    assert peak < 20 * 1024 * 1024, peak  # the file is ~24 MB; reading 12 rows holds next to nothing
    assert elapsed < 30, elapsed  # generous: only a regression to reading the whole file is caught


def test_a_million_rows_bad_row_reports_its_line(make_suite, registry):
    from waza_core.errors import SuiteError
    from waza_core.suite.load import load_suite

    path = make_suite(CSV_EVAL, {}, {"data/keep.txt": ""})
    with open(path.parent / "data" / "rows.csv", "w") as fh:
        fh.write("id,prompt\n")
        fh.writelines(f"r{i},p\n" for i in range(1, 1_000_001))
        fh.write("broken\n")
    with pytest.raises(SuiteError) as exc:
        load_suite(path, registry)
    assert exc.value.problems[0].endswith("rows.csv:1000002:1: row 1000001 has 1 column(s), expected 2 "
                                          "(the header has 2: id, prompt)")


def test_only_global_graders_grade_rows(load):
    suite = rows(load, "prompt\nx\n", CSV_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [x]}}\n")
    assert [g.name for g in suite.graders] == ["g"] and suite.tasks[0].graders == ()


def test_range_without_tasks_from_warns(load):
    suite = load(LEGACY + "range: [1, 2]\n")
    assert any("range has no effect without tasks_from" in w for w in suite.warnings)
