"""Item 4: YAML bombs and depth are refused at load time with one ``file:line:col``
line and exit 2, in bounded time and memory; nothing bloated reaches the suite cache."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from tests.conftest import BASIC_EVAL, REPO
from tests.hostile.conftest import no_traceback
from waza_core.errors import SuiteError
from waza_core.suite import strict_yaml, yamlio
from waza_core.suite.cache import read_entries
from waza_core.suite.load import load_suite

TWO_GB = 2 * 1024**3


def billion_laughs(levels: int = 9, width: int = 9, valid: bool = False) -> str:
    """The classic alias bomb; ``valid`` puts it where a task may hold any data
    (``inputs.context``), so only its size can be held against it."""
    head = ["id: t", "inputs:", "  prompt: p", "  context:"] if valid else ["id: t", "inputs: {prompt: p}", "x:"]
    pad = "    " if valid else "  "
    lines = head + [pad + "a: &a [" + ", ".join(['"lol"'] * width) + "]"]
    prev = "a"
    for name in "bcdefghijklmnop"[: levels - 1]:
        lines.append(f"{pad}{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
        prev = name
    return "\n".join(lines) + "\n"


def limited_waza(*args, cwd=REPO, env=None, timeout=60):
    """The real CLI under a 2 GB address-space limit, as the hostile checks run it."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (TWO_GB, TWO_GB))

    full = dict(os.environ, WAZA_DISABLE_PLUGIN_AUTOLOAD="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "waza_core", *args], capture_output=True, preexec_fn=limit,
                          env=full, cwd=cwd, timeout=timeout)


def one_problem(proc, where: str, words: str) -> None:
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.decode().splitlines()
    hits = [ln for ln in lines if where in ln]
    assert hits and words in hits[0], lines
    assert all(len(ln) < 300 for ln in lines)


def test_a_billion_laughs_is_refused_fast_and_small(make_suite, tmp_path):
    cache = tmp_path / "cache"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": billion_laughs()})
    t0 = time.monotonic()
    proc = limited_waza("validate", str(path), env={"WAZA_CACHE_DIR": str(cache)})
    assert time.monotonic() - t0 < 30
    one_problem(proc, "t.yaml:5:10:", "aliases expand the document")
    cached = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    assert cached < 100_000


@pytest.mark.parametrize("shape", ["flow", "block", "compact"])
@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deep_nesting_is_one_line_exit_2_never_a_crash(make_suite, shape, depth):
    if shape == "flow":
        body = "x: " + "[" * depth + "]" * depth + "\n"
    elif shape == "block":
        body = "x:\n" + "".join(" " * (i + 1) + "- \n" for i in range(min(depth, 3000)))
    else:
        body = "x:\n" + "  " + "- " * min(depth, 20000) + "1\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n" + body})
    proc = limited_waza("validate", str(path))
    one_problem(proc, "t.yaml:", "nested more than 100 levels deep")


@pytest.mark.parametrize("where", ["tasks/t.yaml", "trigger_tests.yaml"])
def test_a_big_string_named_many_times_is_refused_fast_and_small(make_suite, where):
    """Few values, gigabytes of text: 2,000 aliases of a 4 MB string once ran every
    task and then died writing the results (a MemoryError, the results lost)."""
    big = "x" * 4_000_000
    if where == "trigger_tests.yaml":
        text = (f"skill: demo\nbig: &s {big}\nshould_trigger_prompts:\n"
                + "".join("  - {prompt: *s}\n" for _ in range(2000)))
        files = {where: text, "tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}
    else:
        files = {where: f"id: t\ninputs:\n  prompt: p\n  context:\n    big: &s {big}\n"
                        f"    copies: [{', '.join(['*s'] * 2000)}]\n"}
    path = make_suite(BASIC_EVAL, files)
    t0 = time.monotonic()
    proc = limited_waza("validate", str(path))
    assert time.monotonic() - t0 < 30
    one_problem(proc, where.split("/")[-1], "MiB of text")


def test_aliases_cannot_nest_a_document_deeply(make_suite):
    lines = ["id: t", "inputs: {prompt: p}", "x:", "  a0: &a0 [1]"]
    lines += [f"  a{i}: &a{i} [*a{i - 1}]" for i in range(1, 300)]
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "\n".join(lines) + "\n"})
    one_problem(limited_waza("validate", str(path)), "t.yaml:", "aliases nest the document")


def test_a_recursive_alias_is_refused(registry, make_suite):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\nx: &a [*a]\n"})
    with pytest.raises(SuiteError, match="aliases expand"):
        load_suite(path, registry)


def test_ordinary_aliases_still_load(registry, make_suite):
    task = ("id: t\ninputs: {prompt: p}\ntags: &t [a, b]\n"
            "graders:\n  - {type: text, name: g, config: &c {contains: [p]}}\n"
            "  - {type: text, name: h, config: *c}\n")
    suite = load_suite(make_suite(BASIC_EVAL, {"tasks/t.yaml": task}), registry)
    assert [g.config for g in suite.tasks[0].graders] == [{"contains": ["p"]}] * 2


def test_an_expanded_document_is_never_cached(make_suite, registry, monkeypatch, tmp_path):
    monkeypatch.setenv("WAZA_CACHE_DIR", str(tmp_path / "cache"))
    # ~400 bytes that expand to 9**5 values: under the load limits, far over the cache's
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": billion_laughs(levels=5, valid=True)})
    load_suite(path, registry)
    cached = {name for f in (tmp_path / "cache").rglob("*.json") for name in read_entries(f)}
    assert str(path) in cached and not any(n.endswith("t.yaml") for n in cached)


def test_a_huge_integer_is_one_line(make_suite, registry):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\nx: " + "9" * 5000 + "\n"})
    with pytest.raises(SuiteError) as info:
        load_suite(path, registry)
    assert info.value.problems[0].startswith(str(path.parent / "tasks" / "t.yaml").split(os.sep)[-1]) or \
        "t.yaml:3:4:" in info.value.problems[0]
    assert len(info.value.problems[0]) < 300


def test_a_file_over_the_size_limit_is_not_read(make_suite, registry, monkeypatch):
    monkeypatch.setattr(yamlio, "MAX_BYTES", 1000)
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: '" + "x" * 2000 + "'}\n"})
    with pytest.raises(SuiteError, match="larger than"):
        load_suite(path, registry)


def test_validate_on_a_fifo_does_not_block(tmp_path):
    fifo = tmp_path / "eval.yaml"
    os.mkfifo(fifo)
    proc = limited_waza("validate", str(fifo), timeout=30)
    no_traceback(proc)
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


def test_a_results_file_too_deep_is_one_line_in_grade(make_suite, tmp_path):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    deep = tmp_path / "deep.json"
    deep.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    proc = limited_waza("grade", str(path), "--results", str(deep))
    no_traceback(proc)
    assert proc.returncode == 2 and b"nested too deeply" in proc.stderr
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    proc = limited_waza("grade", str(path), "--results", str(fifo), timeout=30)
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


def test_strict_yaml_refuses_depth_and_aliases_cheaply():
    t0 = time.monotonic()
    with pytest.raises(strict_yaml.StrictYamlError, match="nested more than"):
        strict_yaml.load(b"x: " + b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(strict_yaml.StrictYamlError, match="anchor"):
        strict_yaml.load(billion_laughs().encode())
    assert time.monotonic() - t0 < 10


def test_schema_errors_quote_at_most_a_little_of_a_value(make_suite, registry):
    task = ("id: t\ninputs: {prompt: p}\nname: [" + "x" * 100_000 + "]\n" + "k" * 1000 + ": 1\n"
            "timeout_seconds: " + "9" * 500 + "\n")
    with pytest.raises(SuiteError) as info:
        load_suite(make_suite(BASIC_EVAL, {"tasks/t.yaml": task}), registry)
    lines = info.value.problems + info.value.warnings  # an unknown task key only warns
    assert len(info.value.problems) == 2 and len(lines) == 3
    messages = [p.split(": ", 1)[1] for p in lines]
    assert all(len(m) < 150 for m in messages), messages


def test_parsing_many_documents_keeps_nothing_per_document():
    """ruamel.yaml's reused loader records a DocInfo per document it loads; a cold load of
    100,000 task files kept 100,000 of them."""
    from waza_core.suite import yamlio

    for i in range(50):
        yamlio.parse(f"id: t{i}\n")
    with pytest.raises(yamlio.YamlProblem):
        yamlio.parse("a: [\n")
    assert len(yamlio._yaml().doc_infos) == 0
