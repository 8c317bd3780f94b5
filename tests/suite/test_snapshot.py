"""The snapshot of a suite's plain tasks (waza_core/suite/snapshot.py): a warm load of an
unchanged suite builds its task specs from it, equal in every field to what the suite cache's
load builds; anything changed, added, removed, damaged or not plain goes through the cache."""

from __future__ import annotations

import json
import os

import attrs
import pytest

from tests.conftest import BASIC_EVAL, run_waza
from waza_core.suite import cache as cache_mod
from waza_core.suite import load as load_mod
from waza_core.suite import seal, snapshot
from waza_core.model import TaskSpec
from waza_core.safe_write import replace_entry
from waza_core.suite.load import load_suite

PLAIN = [
    "id: {i}\ninputs: {{prompt: 'explain item {i}'}}\ngraders: [{{type: text, name: g, config: {{contains: [x]}}}}]\n",
    # a weight, a name of its own, an escape, two graders
    "id: {i}\nname: Task {i}\ninputs:\n  prompt: \"sé {i}\\u00e9\"\n"
    "graders:\n  - type: text\n    name: first\n    weight: 2\n"
    "    config: {{not_contains: [y]}}\n  - {{type: text, name: other, config: {{regex_match: ['a+']}}}}\n",
    # every other field written, at its default
    "id: {i}\ndescription: ''\ntags: []\nenabled: true\ninputs: {{prompt: p}}\n"
    "graders: [{{type: text, name: g, config: {{contains: [p]}}}}]\n",
]
#: plain tasks with fields the snapshot keeps when they are not at their default
KEPT = [
    "id: {i}\nname: N {i}\ndescription: d {i}\ntags: [a, 'b {i}']\ntimeout_seconds: 5\ngolden: true\n"
    "first_event_timeout_seconds: 7\ninputs:\n  prompt: p\n  follow_up_prompts: [more, 'again {i}']\n"
    "graders: [{{type: text, name: g, config: {{contains: [p]}}}}]\n",
    # a disabled task, and a time limit alone
    "id: {i}\nenabled: false\ninputs: {{prompt: p}}\ngraders: [{{type: text, name: g, config: {{contains: [p]}}}}]\n",
    "id: {i}\ntimeout_seconds: 9\ntags: [a, b]\ninputs: {{prompt: p}}\ngraders: [{{type: text, name: g, config: {{contains: [p]}}}}]\n",
]


@pytest.fixture(autouse=True)
def small(monkeypatch, cache):
    """Snapshots for suites of 4 tasks and more (a test's suites are small), the cache on."""
    monkeypatch.setattr(snapshot, "MIN_TASKS", 4)


@pytest.fixture
def lookups(monkeypatch):
    """How many task documents the suite cache was asked for, by load."""
    calls: list[str] = []
    get = cache_mod.SuiteCache.get

    def spying(self, file, kind, key):
        if kind == "task":
            calls.append(file)
        return get(self, file, kind, key)

    monkeypatch.setattr(cache_mod.SuiteCache, "get", spying)
    return calls


def _tasks(n: int = 9, shapes=PLAIN) -> dict[str, str]:
    return {f"tasks/t{i:02}.yaml": shapes[i % len(shapes)].format(i=f"t{i:02}") for i in range(n)}


def _fields(task) -> tuple:
    """Every field of a task spec, its graders' inner fields and its document's bytes included."""
    graders = tuple((g.type, g.name, g.weight, g._config, g._where, g._at_file) for g in task.graders)
    return (*(getattr(task, a.name) for a in type(task).__attrs_attrs__ if a.name != "graders"), graders,
            task.raw_json)


def _specs(cache_dir):
    return sorted((cache_dir / "suites").glob("*" + snapshot.SUFFIX))


@pytest.mark.parametrize("shapes", [PLAIN, PLAIN + KEPT], ids=["plain", "with kept fields"])
def test_an_unchanged_suite_loads_from_its_snapshot_equal_in_every_field(make_suite, registry, cache, lookups,
                                                                         how_read, shapes):
    path = make_suite(BASIC_EVAL, _tasks(12, shapes))
    cold = load_suite(path, registry)  # parses, fills the cache, writes the snapshot
    assert len(_specs(cache)) == 1
    lookups.clear()
    warm = load_suite(path, registry)
    assert lookups == []  # no task document looked up
    assert [_fields(t) for t in warm.tasks] == [_fields(t) for t in cold.tasks]
    assert warm == cold
    assert [_fields(t) for t in warm.disabled_tasks] == [_fields(t) for t in cold.disabled_tasks]
    assert list(warm.task_file_inodes.inodes) == list(cold.task_file_inodes.inodes)
    # the types a grader keeps are shared strings, as the cache's load shares them; and tags
    assert len({id(g.type) for t in warm.tasks for g in t.graders}) == 1
    tagged = [t.tags for t in warm.tasks if t.tags]
    assert len({id(tags) for tags in tagged}) == len(set(tagged))
    assert len({id(tag) for tags in tagged for tag in tags}) == len({tag for tags in tagged for tag in tags})
    # the cache's load shares tags too
    tagged = [t.tags for t in cold.tasks if t.tags]
    assert len({id(tags) for tags in tagged}) == len(set(tagged))
    # the suite cache still answers for every task afterwards (its lines were kept)
    os.remove(_specs(cache)[0])
    lookups.clear()
    again = load_suite(path, registry)
    assert len(lookups) == 12 and [_fields(t) for t in again.tasks] == [_fields(t) for t in cold.tasks]


def test_a_changed_task_file_is_read_again_and_a_new_snapshot_written(make_suite, registry, cache, lookups):
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    load_suite(path, registry)
    task = path.parent / "tasks" / "t04.yaml"
    task.write_text(task.read_text().replace("sé t04", "changed"))
    lookups.clear()
    suite = load_suite(path, registry)
    assert len(lookups) == 9  # the snapshot did not answer: every file through the cache
    assert "changed" in suite.tasks[4].prompt
    lookups.clear()
    warm = load_suite(path, registry)
    assert lookups == [] and warm.tasks[4].prompt == suite.tasks[4].prompt


@pytest.mark.parametrize("change", ["add", "remove", "rename"])
def test_another_list_of_task_files_goes_through_the_cache(make_suite, registry, cache, lookups, change):
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    folder = path.parent / "tasks"
    if change == "add":
        (folder / "t99.yaml").write_text(PLAIN[0].format(i="t99"))
    elif change == "remove":
        (folder / "t03.yaml").unlink()
    else:
        (folder / "t03.yaml").rename(folder / "t03b.yaml")
    lookups.clear()
    suite = load_suite(path, registry)
    assert lookups  # not from the snapshot
    names = sorted(p.name for p in folder.iterdir())
    assert [os.path.basename(t.filename) for t in suite.tasks] == names
    lookups.clear()
    assert load_suite(path, registry) == suite and lookups == []


def test_a_prompt_file_is_read_on_every_load(make_suite, registry, cache):
    """A prompt read from another file is not covered by the task file's stat: no snapshot."""
    tasks = _tasks()
    tasks["tasks/t00.yaml"] = ("id: t00\ninputs: {prompt_file: p.md}\n"
                                "graders: [{type: text, name: g, config: {contains: [x]}}]\n")
    path = make_suite(BASIC_EVAL, tasks, {"tasks/p.md": "first"})
    assert load_suite(path, registry).tasks[0].prompt == "first"
    assert _specs(cache) == []
    (path.parent / "tasks" / "p.md").write_text("second")
    assert load_suite(path, registry).tasks[0].prompt == "second"


NOT_PLAIN = ["requirements: [{id: r1, text: works}]", "expected: {output_contains: [x]}", "context_dir: ctx",
             "instruction_files: [AGENTS.md]"]
NOT_PLAIN_INPUTS = ["context: {a: 1}", "files: [{path: a.txt, content: x}]"]


def _not_plain(task: str, extra: str) -> str:
    if extra in NOT_PLAIN_INPUTS:  # a key of inputs: written out in block style
        prompt = task[task.index("prompt:"):task.index("}", task.index("prompt:"))].replace("prompt: ", "")
        head, rest = task.split("inputs:", 1)
        return f"{head}inputs:\n  prompt: {prompt}\n  {extra}\n{rest[rest.index('graders'):]}"
    return task + extra + "\n"


@pytest.mark.parametrize("extra", NOT_PLAIN + NOT_PLAIN_INPUTS)
def test_a_suite_with_a_task_that_is_not_plain_has_no_snapshot(make_suite, registry, cache, extra):
    tasks = _tasks()
    tasks["tasks/t03.yaml"] = _not_plain(tasks["tasks/t03.yaml"], extra)
    path = make_suite(BASIC_EVAL, tasks)
    first = load_suite(path, registry)
    assert _specs(cache) == []
    assert load_suite(path, registry) == first


def test_every_field_of_a_task_is_written_or_at_its_default():
    """A field added to TaskSpec must be named in snapshot.py: written, or checked at its default."""
    fields = [a.name for a in attrs.fields(TaskSpec)]
    assert sorted(fields) == sorted(snapshot._REBUILT + snapshot._KEPT + snapshot._DEFAULTED)
    # the order _kept_arguments reads them in
    assert list(snapshot._kept_arguments(list(snapshot._KEPT_DEFAULTS), {})) == [f.lstrip("_") for f in snapshot._KEPT]


@pytest.mark.parametrize("value", [b"bytes", 1.5, True, ["a list"], ("a", 1), {"a": 1}])
def test_a_kept_field_of_another_type_is_not_plain(value):
    """A value msgpack might give back as another type (a tuple as a list, bytes) is not written:
    every _KEPT field is checked for the type the load gives it."""
    base = TaskSpec(id="t", name="t", prompt="p", file="t.yaml", raw=b'{"id":"t"}')
    assert snapshot._plain(base)  # so each refusal below is the field's
    for field in snapshot._KEPT:
        default = getattr(base, field)
        if type(value) is type(default) or (value is True and isinstance(default, bool)):
            continue
        if field.endswith("timeout_seconds") and type(value) is float:
            continue  # a number: kept
        assert not snapshot._plain(attrs.evolve(base, **{field: value})), (field, value)


def test_a_snapshot_of_a_suite_no_longer_plain_is_removed(make_suite, registry, cache, lookups):
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    assert len(_specs(cache)) == 1
    task = path.parent / "tasks" / "t07.yaml"
    task.write_text(task.read_text() + "requirements: [{id: r1, text: works}]\n")
    load_suite(path, registry)
    assert _specs(cache) == []  # not read again on every load only to be found out of date
    lookups.clear()
    load_suite(path, registry)
    assert len(lookups) == 9


def test_no_snapshot_with_a_cache_file_whose_lines_are_checked(make_suite, registry, cache, lookups):
    """A cache file without its seal (someone else may have written it) has each line checked, and
    is written again sealed with the lines that passed: a snapshot load, which checks none, is not
    made, so a planted line is never sealed."""
    path = make_suite(BASIC_EVAL, _tasks())
    cold = load_suite(path, registry)
    (cache_file,) = (cache / "suites").glob("*.json")
    lines = cache_file.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    del header["seal"]
    lines[0] = json.dumps(header, separators=(",", ":")).encode()
    at = next(i for i, line in enumerate(lines) if b"t05.yaml" in line)
    lines[at] = lines[at].split(b"\t")[0] + b'\t{"id":"t05","tags":"not a list","inputs":{"prompt":"planted"}}'
    cache_file.write_bytes(b"\n".join(lines))
    lookups.clear()
    suite = load_suite(path, registry)
    assert len(lookups) == 9 and suite.tasks[5].prompt == cold.tasks[5].prompt
    assert b"planted" not in cache_file.read_bytes()
    assert json.loads(cache_file.read_bytes().split(b"\n")[0]).get("seal")  # sealed again


@pytest.mark.parametrize("planted", ["snapshot", "cache file"])
def test_a_long_planted_header_is_not_decoded(make_suite, registry, cache, monkeypatch, planted):
    """A first line that starts as waza's header does but runs on for megabytes (which decoded
    took a process to 1.5 GB) is not decoded, in the snapshot or in the cache file: a miss."""
    path = make_suite(BASIC_EVAL, _tasks())
    cold = load_suite(path, registry)
    target = _specs(cache)[0] if planted == "snapshot" else next((cache / "suites").glob("*.json"))
    fp = cache_mod.fingerprint(registry).encode()
    target.write_bytes(b'{"fingerprint":"' + fp + b'","x":[' + b"[]," * 300_000 + b'[]]}\n')
    sizes: list[int] = []
    decode = cache_mod._decode
    monkeypatch.setattr(cache_mod, "_decode", lambda data: sizes.append(len(data)) or decode(data))
    assert [_fields(t) for t in load_suite(path, registry).tasks] == [_fields(t) for t in cold.tasks]
    assert sizes and all(size < cache_mod.HEADER_MAX_BYTES for size in sizes)


def test_a_snapshot_of_another_model_file_is_not_used(make_suite, registry, cache, lookups, monkeypatch):
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    monkeypatch.setattr(snapshot, "_model_identity", lambda: "another")
    lookups.clear()
    load_suite(path, registry)
    assert len(lookups) == 9


def test_a_damaged_or_foreign_snapshot_is_only_a_miss(make_suite, registry, cache, lookups):
    path = make_suite(BASIC_EVAL, _tasks())
    cold = load_suite(path, registry)
    (spec,) = _specs(cache)
    data = bytearray(spec.read_bytes())
    data[-20] ^= 1  # one bit of a document: the seal no longer matches
    spec.write_bytes(bytes(data))
    lookups.clear()
    assert [_fields(t) for t in load_suite(path, registry).tasks] == [_fields(t) for t in cold.tasks]
    assert len(lookups) == 9
    spec.write_bytes(b"{}\n" + bytes(100))  # not a header of ours
    lookups.clear()
    assert load_suite(path, registry) == cold and len(lookups) == 9
    spec.write_bytes(b"")
    assert load_suite(path, registry) == cold


def test_a_snapshot_of_other_code_is_not_used(make_suite, registry, cache, lookups, monkeypatch):
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    monkeypatch.setattr(cache_mod, "FORMAT", cache_mod.FORMAT + 100)  # another fingerprint
    lookups.clear()
    load_suite(path, registry)
    assert len(lookups) == 9


def test_no_key_no_snapshot(make_suite, registry, cache, monkeypatch):
    monkeypatch.setattr(seal, "key", lambda create=False, apart_from=None: None)
    path = make_suite(BASIC_EVAL, _tasks())
    first = load_suite(path, registry)
    assert _specs(cache) == [] and load_suite(path, registry) == first


def test_a_small_suite_or_no_cache_has_no_snapshot(make_suite, registry, cache, monkeypatch):
    path = make_suite(BASIC_EVAL, _tasks(3))
    load_suite(path, registry)
    load_suite(path, registry)
    assert _specs(cache) == []
    monkeypatch.setenv("WAZA_NO_CACHE", "1")
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    assert not (cache / "suites").exists() or _specs(cache) == []


def test_the_eval_file_changed_keeps_every_task_line(make_suite, registry, cache, lookups, monkeypatch):
    """A load from the snapshot writes the cache file again when the eval changed: with every
    task line kept, so the next load without the snapshot parses nothing."""
    path = make_suite(BASIC_EVAL, _tasks())
    load_suite(path, registry)
    path.write_text(path.read_text().replace("name: basic", "name: basic2"))
    lookups.clear()
    assert load_suite(path, registry).name == "basic2" and lookups == []
    os.remove(_specs(cache)[0])
    parsed = []
    read_yaml = load_mod.read_yaml
    monkeypatch.setattr(load_mod, "read_yaml", lambda file, problems: parsed.append(file) or read_yaml(file, problems))
    load_suite(path, registry)
    assert parsed == []


def test_a_real_run_writes_the_snapshot_and_the_next_run_gives_the_same_results(make_suite, cache, tmp_path):
    """Whole `waza run` processes on a suite of the default size: the first run writes the
    snapshot (and the key that seals it), the second loads from it; the results are the same."""
    # 256 tasks: the default MIN_TASKS of the child processes (the autouse fixture patched this one)
    path = make_suite(BASIC_EVAL, {f"tasks/t{i:03}.yaml": PLAIN[0].format(i=f"t{i:03}") for i in range(256)})
    env = {"WAZA_CACHE_DIR": str(cache), "XDG_STATE_HOME": str(tmp_path / "state")}
    first = run_waza("run", str(path), "-q", "-o", str(tmp_path / "one.json"), env=env)
    assert first.returncode == 0, first.stderr.decode()
    assert len(_specs(cache)) == 1 and (tmp_path / "state" / "waza" / seal.KEY_NAME).exists()
    written = _specs(cache)[0].stat().st_mtime_ns
    second = run_waza("run", str(path), "-q", "-o", str(tmp_path / "two.json"), env=env)
    assert second.returncode == 0, second.stderr.decode()
    assert _specs(cache)[0].stat().st_mtime_ns == written  # read, not written again

    def tasks(name: str) -> list:
        runs = json.loads((tmp_path / name).read_text())["tasks"]
        for task in runs:  # every field but the times
            task["stats"].pop("avg_duration_ms")
            for run in task["runs"]:
                run.pop("duration_ms")
                for v in run["validations"].values():
                    v.pop("duration_ms")
        return runs

    assert tasks("one.json") == tasks("two.json") and len(tasks("two.json")) == 256


def test_the_snapshot_is_written_as_it_is_encoded(tmp_path):
    """The parts the snapshot feeds the seal one at a time give the seal of the whole; an entry
    written by a fill function may seek back to write its header last."""
    secret = b"k" * 32
    mac = seal.sealer(secret, "name")
    for part in (b"ab", b"", b"cde"):
        mac.update(part)
    assert mac.hexdigest() == seal.seal(secret, "name", b"abcde")

    def fill(fh):
        fh.write(b"????\n")
        fh.write(b"body")
        fh.seek(0)
        fh.write(b"head")

    target = tmp_path / "entry"
    target.symlink_to(tmp_path / "elsewhere")  # a planted link: replaced, not followed
    replace_entry(target, fill, 0o600)
    assert target.read_bytes() == b"head\nbody" and not target.is_symlink()
    assert not (tmp_path / "elsewhere").exists()
