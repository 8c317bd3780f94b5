"""Every output of `waza run` is checked against every other and against the suite's own
files before the first run (exit 2, naming both): paths compared by identity, not spelling."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import BASIC_EVAL
from tests.depth import examples
from tests.inprocess import run_waza_in_process as run_waza
from waza_core.errors import WazaError
from waza_core.run import collisions

TASK = """
id: t1
inputs:
  prompt: hello
  files:
    - path: data.txt
graders:
  - type: text
    name: t
    config: {contains: ["hello"]}
"""


@pytest.fixture
def suite(make_suite):
    return make_suite(BASIC_EVAL, {"tasks/t1.yaml": TASK}, {"fixtures/data.txt": "data\n"}).parent


@pytest.mark.parametrize("args, said", [
    (["-o", "J", "--journal", "J"], "--journal J and -o J name the same file"),
    (["--journal", "J", "--reporter", "junit:J"], "--reporter junit:J and --journal J name the same file"),
    (["-o", "./J", "--reporter", "junit:J"], "J is already written by -o"),
    (["-o", "sub/../J", "--journal", "J"], "--journal J and -o sub/../J name the same file"),
    (["-o", "eval.yaml"], "-o eval.yaml would overwrite the eval file"),
    (["--reporter", "junit:tasks/t1.yaml"], "would overwrite the task file"),
    (["-o", "fixtures/data.txt"], "would overwrite"),
    (["-o", "fixtures/new.json"], "the fixtures folder"),
    (["--reporter", "html:tasks/../eval.yaml"], "would overwrite the eval file"),
    # the kernel cannot open gone/../ (no folder gone), but the path resolves to the task file
    (["-o", "gone/../tasks/t1.yaml"], "would overwrite the task file"),
])
def test_colliding_outputs_are_exit_2_before_anything_runs(suite, args, said):
    before = {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()}
    proc = run_waza("run", ".", *args, cwd=suite)
    assert proc.returncode == 2, proc.stderr.decode()
    assert said.encode() in proc.stderr, proc.stderr.decode()
    after = {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing replaced


def test_resume_and_o_of_one_journal(suite):
    assert run_waza("run", ".", "--journal", "J", "-q", cwd=suite).returncode == 0
    journal = (suite / "J").read_bytes()
    proc = run_waza("run", ".", "--resume", "J", "-o", "J", cwd=suite)
    assert proc.returncode == 2 and b"--resume J and -o J name the same file" in proc.stderr
    assert (suite / "J").read_bytes() == journal


def test_links_and_hard_links_are_the_same_file(suite):
    (suite / "link.yaml").symlink_to("eval.yaml")
    os.link(suite / "tasks" / "t1.yaml", suite / "hard.yaml")
    for target in ("link.yaml", "hard.yaml"):
        proc = run_waza("run", ".", "-o", target, cwd=suite)
        assert proc.returncode == 2 and b"a file of the suite" in proc.stderr, proc.stderr
    (suite / "dangling").symlink_to("out.json")
    proc = run_waza("run", ".", "-o", "out.json", "--reporter", "junit:dangling", cwd=suite)
    assert proc.returncode == 2 and b"name the same file" in proc.stderr


def test_a_task_file_that_is_a_link_is_its_target(suite):
    """Task files the loader read are compared by inode (an existing target) and never
    resolved for a new one: a linked task file is still caught through its target."""
    (suite / "elsewhere").mkdir()
    (suite / "tasks" / "t1.yaml").rename(suite / "elsewhere" / "t1.yaml")
    (suite / "tasks" / "t1.yaml").symlink_to("../elsewhere/t1.yaml")
    for target in ("elsewhere/t1.yaml", "gone/../elsewhere/t1.yaml", "tasks/../elsewhere/./t1.yaml"):
        proc = run_waza("run", ".", "-o", target, cwd=suite)
        assert proc.returncode == 2 and b"would overwrite the task file" in proc.stderr, (target, proc.stderr)
    proc = run_waza("run", ".", "-o", "elsewhere/new.json", "-q", cwd=suite)
    assert proc.returncode == 0, proc.stderr.decode()


def test_a_new_target_does_not_resolve_the_files_the_loader_read(suite, registry, monkeypatch):
    """An -o that names no existing file cannot be eval.yaml or a task file: those are not
    resolved (one realpath per task file was most of the check on a big suite); a target
    that is an existing task file is still found, by its inode."""
    from waza_core.suite.load import load_suite

    for i in range(2, 6):
        (suite / "tasks" / f"t{i}.yaml").write_text(TASK.replace("id: t1", f"id: t{i}"))
    loaded = load_suite(suite / "eval.yaml", registry)
    assert len(loaded.tasks) == 5
    read = {os.fspath(t.file) for t in loaded.tasks} | {os.fspath(loaded.file)}
    resolved: list[str] = []
    real = os.path.realpath

    def counting(path, *args, **kwargs):
        resolved.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(collisions.os.path, "realpath", counting)
    collisions.check_outputs([("-o new.json", os.fspath(suite / "new.json"))], loaded)
    assert resolved and not read & set(resolved)
    with pytest.raises(WazaError, match="would overwrite the task file"):
        collisions.check_outputs([("-o t4", os.fspath(suite / "tasks" / "t4.yaml"))], loaded)


def test_an_existing_target_stats_task_files_only_when_it_has_a_task_files_inode(suite, registry, monkeypatch):
    """The loader's ``stat`` of each task file gave its inode (``Suite.task_file_inodes``):
    an existing target whose inode no task file had is not compared with each task file
    (one ``stat`` per task file of every re-run); a hard link to a task file, a task file
    itself and a suite without known inodes still are."""
    import attrs

    from waza_core.suite.load import load_suite

    for i in range(2, 6):
        (suite / "tasks" / f"t{i}.yaml").write_text(TASK.replace("id: t1", f"id: t{i}"))
    loaded = load_suite(suite / "eval.yaml", registry)
    assert sorted(loaded.task_file_inodes.inodes) == sorted(os.stat(t.filename).st_ino for t in loaded.tasks)
    (suite / "old.json").write_text("{}")
    os.link(suite / "tasks" / "t3.yaml", suite / "hard.json")
    task_files = {t.filename for t in loaded.tasks}
    statted: list[str] = []
    real_stat = os.stat

    def counting(path, *args, **kwargs):
        statted.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(collisions.os, "stat", counting)
    collisions.check_outputs([("-o old.json", os.fspath(suite / "old.json"))], loaded)
    assert statted and not task_files & set(statted)
    for target in ("hard.json", "tasks/t3.yaml"):
        with pytest.raises(WazaError, match="would overwrite the task file"):
            collisions.check_outputs([(f"-o {target}", os.fspath(suite / target))], loaded)
    for other in (attrs.evolve(loaded, task_file_inodes=None),  # e.g. tasks_from: not known
                  attrs.evolve(loaded, tasks=tuple([*loaded.tasks]))):  # tasks replaced since the load
        statted.clear()
        collisions.check_outputs([("-o old.json", os.fspath(suite / "old.json"))], other)
        assert task_files <= set(statted)  # every task file compared by its stat


def test_inode_numbers_above_2_63_load_and_still_collide(suite, registry, monkeypatch):
    """Inode numbers are unsigned 64-bit on Linux (FUSE and network filesystems give ones
    above 2**63) and wider on Windows: folded into the pre-filter's signed array, they load
    (an OverflowError before), and a target whose inode folds onto a task file's is still
    compared by its ``stat``."""
    from waza_core.suite import cache as suite_cache
    from waza_core.suite import load as load_mod

    real_key = suite_cache.stat_key
    monkeypatch.setattr(load_mod, "stat_key", lambda path: [*real_key(path)[:3], real_key(path)[3] | 1 << 63])
    loaded = load_mod.load_suite(suite / "eval.yaml", registry)
    assert list(loaded.task_file_inodes.inodes) == [os.stat(loaded.tasks[0].filename).st_ino]
    with pytest.raises(WazaError, match="would overwrite the task file"):
        collisions.check_outputs([("-o t1", loaded.tasks[0].filename)], loaded)


def test_a_disabled_tasks_file_is_still_a_file_of_the_suite(suite):
    """A task with ``enabled: false`` is not run, but its file is the suite's: an output
    naming it (or a hard link to it) is refused before anything runs, the file untouched."""
    disabled = suite / "tasks" / "t9.yaml"
    disabled.write_text(TASK.replace("id: t1", "id: t9") + "enabled: false\n")
    os.link(disabled, suite / "hard9.json")
    before = disabled.read_bytes()
    for target in ("tasks/t9.yaml", "hard9.json"):
        proc = run_waza("run", ".", "-o", target, cwd=suite)
        assert proc.returncode == 2 and b"would overwrite the task file" in proc.stderr, proc.stderr
        assert b"(a disabled task)" in proc.stderr and b"Traceback" not in proc.stderr
    assert disabled.read_bytes() == before


def test_the_files_a_disabled_task_names_are_still_the_suites(suite):
    """A disabled task's ``prompt_file``, ``context_dir`` and grader script are refused as
    outputs as an enabled task's are."""
    disabled = suite / "tasks" / "t9.yaml"
    disabled.write_text("id: t9\nenabled: false\ncontext_dir: ctx9\ninputs: {prompt_file: p9.md}\n"
                        "graders:\n  - {type: program, name: p, config: {command: python3, args: [check9.py]}}\n")
    (suite / "tasks" / "p9.md").write_text("the prompt\n")
    (suite / "tasks" / "ctx9").mkdir()
    (suite / "check9.py").write_text("print('ok')\n")
    before = {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()}
    for target, said in (("tasks/p9.md", b"p9.md (named by task 't9' (a disabled task))"),
                         ("tasks/ctx9/out.json", b"the context_dir of task 't9' (a disabled task)"),
                         ("check9.py", b"check9.py (named by task 't9' (a disabled task))")):
        proc = run_waza("run", ".", "-o", target, cwd=suite)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()} == before


SCRIPT_TASK = """
id: t1
inputs: {prompt: hello}
graders:
  - type: program
    name: p
    config: {command: python3, args: ["{suite_dir}/graders/check.py"]}
"""


def test_a_script_named_from_suite_dir_and_the_trigger_tests_are_the_suites(make_suite):
    root = make_suite(BASIC_EVAL, {"tasks/t1.yaml": SCRIPT_TASK}, {"graders/check.py": "print('ok')\n"}).parent
    elsewhere = root.parent / "elsewhere"
    elsewhere.mkdir()
    before = (root / "graders" / "check.py").read_bytes()
    for cwd, target in ((root, "graders/check.py"), (elsewhere, str(root / "graders" / "check.py"))):
        proc = run_waza("run", str(root), "-o", target, cwd=cwd)
        assert proc.returncode == 2, proc.stderr
        assert b"would overwrite {suite_dir}/graders/check.py (named by task 't1')" in proc.stderr, proc.stderr
    assert (root / "graders" / "check.py").read_bytes() == before
    # trigger_tests.yaml beside eval.yaml, there or not: writing it would change the suite
    proc = run_waza("run", ".", "-o", "trigger_tests.yaml", cwd=root)
    assert proc.returncode == 2 and b"would overwrite the trigger tests" in proc.stderr, proc.stderr
    assert not (root / "trigger_tests.yaml").exists()


HOOKS_EVAL = BASIC_EVAL + """hooks:
  before_run: [{command: "python3 {suite_dir}/scripts/note.py before_run"}]
  after_run: [{command: "bash run.sh --fast", working_directory: tools}]
  after_task: [{command: "python3 {suite_dir}/scripts/long.py PAD"}]
"""


@pytest.mark.parametrize("from_parent", [False, True])
@pytest.mark.parametrize("target, said", [
    ("scripts/note.py", "{suite_dir}/scripts/note.py (named by eval.yaml (hook before_run[0]))"),
    ("scripts/long.py", "{suite_dir}/scripts/long.py (named by eval.yaml (hook after_task[0]))"),
    ("tools/run.sh", "run.sh (named by eval.yaml (hook after_run[0]))"),
])
def test_a_hooks_script_inside_its_command_string_is_the_suites(make_suite, target, said, from_parent):
    """A hook's ``command`` is one string split on white space (however long): its script is a
    word of it, from ``{suite_dir}`` or relative to the folder the hook runs in (its
    ``working_directory`` from where waza runs). Run from the suite's parent, ``tools/run.sh``
    there is the script the hook runs."""
    eval_yaml = HOOKS_EVAL.replace("PAD", " --flag" * 700)  # a command of ~5,000 characters
    root = make_suite(eval_yaml, {"tasks/t1.yaml": TASK}, {"fixtures/data.txt": "data\n", "scripts/note.py": "",
                                                          "scripts/long.py": "", "tools/run.sh": ""}).parent
    cwd = root.parent if from_parent else root
    if from_parent:
        (cwd / "tools").mkdir()
        (cwd / "tools" / "run.sh").write_text("")
        target = target if target == "tools/run.sh" else f"{root.name}/{target}"
    before = {p: p.read_bytes() for p in cwd.rglob("*") if p.is_file()}
    proc = run_waza("run", str(root), "-o", target, cwd=cwd)
    assert proc.returncode == 2 and said.encode() in proc.stderr, proc.stderr
    assert {p: p.read_bytes() for p in cwd.rglob("*") if p.is_file()} == before


def test_a_command_key_that_is_not_a_hooks_is_not_split(make_suite):
    """Only hooks' commands are split into words: a note in a task's ``metadata`` that holds a
    command line does not make its words files of the suite."""
    task = TASK + "metadata: {how_to_run: {command: \"waza run . -o results.json\"}}\n"
    root = make_suite(BASIC_EVAL, {"tasks/t1.yaml": task}, {"fixtures/data.txt": "data\n"}).parent
    proc = run_waza("run", ".", "-o", "results.json", "-q", cwd=root)
    assert proc.returncode == 0, proc.stderr


def test_separate_outputs_run(suite):
    proc = run_waza("run", ".", "-o", "r.json", "--journal", "j.jsonl", "--reporter", "junit:r.xml", cwd=suite)
    assert proc.returncode == 0, proc.stderr.decode()
    assert {"r.json", "j.jsonl", "r.xml"} <= {p.name for p in suite.iterdir()}


def test_two_models_whose_files_would_be_one(suite):
    proc = run_waza("run", ".", "-o", "r.json", "-m", "a/b", "-m", "a b", cwd=suite)  # both r_a-b.json
    assert proc.returncode == 2 and b"name the same file" in proc.stderr, proc.stderr.decode()


_spellings = st.lists(st.sampled_from(["x", "./x", "sub/../x", "gone/../x", "lnk", "hard", "y", "sub/y",
                                       "sub/../sub/y", "gone/../y", "dangling"]), min_size=2, max_size=4)


@settings(max_examples=examples(200), deadline=None)
@given(_spellings)
def test_identity_is_by_file_not_spelling(tmp_path_factory, names):
    root = tmp_path_factory.mktemp("ids")
    (root / "sub").mkdir()
    (root / "x").write_text("x")
    (root / "lnk").symlink_to("x")
    os.link(root / "x", root / "hard")
    (root / "dangling").symlink_to("sub/y")  # names sub/y, which does not exist yet
    same = {"x": "X", "./x": "X", "sub/../x": "X", "gone/../x": "X", "lnk": "X", "hard": "X",
            "y": "Y", "gone/../y": "Y", "sub/y": "SY", "sub/../sub/y": "SY", "dangling": "SY"}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        clash = len({same[n] for n in names}) < len(names)
        try:
            collisions.check_outputs([(f"out{i} {n}", n) for i, n in enumerate(names)])
            assert not clash
        except WazaError as exc:
            assert clash and "name the same file" in str(exc)
    finally:
        os.chdir(cwd)
    assert Path(root / "x").read_text() == "x"
