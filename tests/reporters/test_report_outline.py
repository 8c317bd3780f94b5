"""The light reading behind ``waza report --html`` of a saved file: same page content as
a full read, the file's own bytes for each task, no full decoding, and the full, tolerant
read for anything unusual."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from tests.reporters.big_results import big_results
from tests.reporters.conftest import json_islands, waza_ci
from tests.reporters.test_hostile_results import _doc


def _html(view) -> bytes:
    from waza_core.plugins import get_registry

    out = io.BytesIO()
    get_registry([]).get("reporter", "html")({}).write(view, out)
    return out.getvalue()


def _strict(raw: bytes):
    """JSON as a browser's JSON.parse takes it: no NaN or Infinity."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(raw, parse_constant=refuse)


def _without_outline(view):
    """``view`` as the HTML reporter sees a document with no light reading."""
    view._outline = None
    return view


@settings(max_examples=examples(200), deadline=None)
@given(_doc, st.sampled_from([None, "0.1.0"]))
def test_the_outline_gives_the_page_a_full_read_gives(doc, waza_version):
    """Whenever the light reading is taken, the index (status, score, pass rate, flaky, trial
    spread, feedback, tokens, summary) is exactly what the full, tolerant read gives, for
    our files (no decoder) and waza (Go) files (through the tolerant decoder) alike."""
    from waza_core.results.load import document_from_bytes
    from waza_core.results.outline import outline
    from waza_core.results.reporting import ResultsView

    if waza_version:
        doc = {**doc, "waza_version": waza_version}
    data = json.dumps(doc).encode("utf-8")
    light = outline(data, "r.json")
    if light is None:
        return
    fast = _html(ResultsView(source=data, outline=light, load=lambda: pytest.fail("the full read ran")))
    slow = _html(_without_outline(ResultsView(document_from_bytes(data, "r.json"))))
    fast_islands, slow_islands = json_islands(fast), json_islands(slow)
    assert _strict(fast_islands.pop("waza-data")) == _strict(slow_islands.pop("waza-data"))
    assert len(fast_islands) == len(slow_islands) == len(light.task_sources)
    for i, task in enumerate(doc["tasks"]):
        assert _strict(fast_islands[f"waza-task-{i}"]) == task  # the file's own task, byte for byte in value


def test_a_saved_files_report_never_decodes_it_whole(tmp_path, monkeypatch):
    """``waza report --html`` of a 1,000-run file: the outputs and transcripts are copied,
    never parsed by Python's json (which would cost more than the whole report)."""
    from waza_core.results.load import open_results

    src = tmp_path / "r.json"
    src.write_text(json.dumps(big_results(200, 5)), encoding="utf-8")
    expected = _html(open_results(src))

    def no_full_parse(*args, **kwargs):
        raise AssertionError("json.loads ran on the whole file")

    monkeypatch.setattr(json, "loads", no_full_parse)
    view = open_results(src)
    assert _html(view) == expected
    monkeypatch.undo()
    islands = json_islands(expected)
    assert len(islands) == 1 + 200
    raw = src.read_bytes()
    assert islands["waza-task-7"] in raw  # the task's own bytes (this file has no < > &)
    assert _strict(islands["waza-task-7"]) == json.loads(raw)["tasks"][7]


def test_other_reporters_read_the_file_once(tmp_path, monkeypatch):
    """With --junit and --markdown beside --html, the full read happens once, not per reporter."""
    from waza_core.plugins import get_registry
    from waza_core.results import load

    src = tmp_path / "r.json"
    src.write_text(json.dumps(big_results(20, 2)), encoding="utf-8")
    calls = []
    real = load.parse_json_document
    monkeypatch.setattr(load, "parse_json_document", lambda *a, **k: calls.append(1) or real(*a, **k))
    view = load.open_results(src)
    registry = get_registry([])
    for name in ("html", "junit", "markdown", "json", "html"):
        registry.get("reporter", name)({}).write(view, io.BytesIO())
    assert len(calls) == 1


@pytest.mark.parametrize("raw, why", [
    (b'{"waza_version": "0.1.0", "tasks": [{"test_id": "t", "runs": [{"status": "passed", '
     b'"validations": {"g": {"score": NaN, "passed": true}}, "final_output": "x"}]}]}', "NaN"),
    (b'{"tasks": [{"test_id": "t", "runs": ["not a run", {"status": "failed", "final_output": "\\ud800"}]}]}',
     "a lone surrogate and a run that is not an object"),
    (b'{"tasks": [{"display_name": "no id", "runs": []}, {"test_id": "t2", "runs": [{"status": 5}]}]}',
     "a waza (Go) file the tolerant decoder warns about"),
])
def test_unusual_files_take_the_full_read_and_still_make_a_valid_page(tmp_path, raw, why):
    from waza_core.results.outline import outline

    src = tmp_path / "r.json"
    src.write_bytes(raw)
    assert outline(raw, "r.json") is None, why
    out = tmp_path / "r.html"
    proc = waza_ci("report", str(src), "--html", str(out))
    assert proc.returncode == 0, proc.stderr.decode()
    islands = json_islands(out.read_bytes())
    index = _strict(islands.pop("waza-data"))
    assert all(b"<" not in i for i in islands.values())
    tasks = [_strict(islands[f"waza-task-{i}"]) for i in range(len(index["tasks"]))]
    assert len(tasks) == len(index["tasks"]) >= 1
    assert all(isinstance(r, dict) for t in tasks for r in t["runs"])  # the page reads the normalized runs


def test_a_warning_about_a_waza_go_file_is_printed_once(tmp_path):
    src = tmp_path / "r.json"
    src.write_text(json.dumps({"tasks": [{"test_id": "t", "runs": [{"status": 5}]}]}))
    proc = waza_ci("report", str(src), "--html", str(tmp_path / "r.html"), "--junit", str(tmp_path / "r.xml"))
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr.decode().count("tasks[0].runs[0].status: expected a string") == 1


@settings(max_examples=examples(150), deadline=None)
@given(_doc, _doc, st.sampled_from([None, "0.1.0"]))
def test_the_gate_reads_the_same_from_a_light_reading(base, cur, waza_version):
    """``waza gate`` reads files the light way: its report is the one a full read gives."""
    from waza_core.results import gate
    from waza_core.results.load import document_from_bytes
    from waza_core.results.outline import outline

    docs = []
    for doc in (base, cur):
        data = json.dumps({**doc, "waza_version": waza_version} if waza_version else doc).encode("utf-8")
        light = outline(data, "r.json")
        if light is None:
            return
        docs.append((light.document, document_from_bytes(data, "r.json")))
    for alpha in (None, 0.05):
        opts = gate.GateOptions("b.json", "c.json", significance_alpha=alpha)
        assert gate.build_report(opts, docs[0][0], docs[1][0]) == gate.build_report(opts, docs[0][1], docs[1][1])


def _maybe_null(strategy):
    return st.one_of(st.none(), strategy)


_count = st.integers(0, 5)
_usage = st.fixed_dictionaries({}, optional={"input_tokens": _count, "output_tokens": _count, "total_tokens": _count})
#: waza (Go) shapes the tolerant decoder takes without a warning: every field optional,
#: null or of its type, so the light decoder's defaults are all exercised
_go_run = st.fixed_dictionaries({}, optional={
    "run_number": _maybe_null(st.integers(1, 4)), "attempts": _maybe_null(st.integers(1, 3)),
    "status": _maybe_null(st.sampled_from(["passed", "failed", "error", "n/a", "skipped"])),
    "duration_ms": _maybe_null(_count), "error_msg": _maybe_null(st.text(max_size=5)),
    "usage": _maybe_null(_usage), "final_output": st.text(max_size=5), "cached": st.booleans(),
    "session_digest": _maybe_null(st.fixed_dictionaries({}, optional={
        "usage": _maybe_null(_usage), "tokens_in": _count, "tokens_out": _count, "tokens_total": _count})),
    "validations": _maybe_null(st.dictionaries(st.text(max_size=3), st.fixed_dictionaries({}, optional={
        "type": _maybe_null(st.text(max_size=3)), "score": _maybe_null(st.floats(0, 1)),
        "passed": _maybe_null(st.booleans()), "feedback": _maybe_null(st.text(max_size=5))}), max_size=2))})
_go_task = st.fixed_dictionaries({"test_id": st.text(max_size=4)}, optional={
    "display_name": _maybe_null(st.text(max_size=4)), "status": _maybe_null(st.sampled_from(["passed", "failed"])),
    "tags": _maybe_null(st.lists(st.text(max_size=3), max_size=2)), "golden": st.booleans(),
    "stats": _maybe_null(st.fixed_dictionaries({}, optional={"avg_score": st.floats(0, 1),
                                                             "pass_rate": st.floats(0, 1), "flaky": st.booleans()})),
    "runs": _maybe_null(st.lists(_go_run, max_size=3))})
_go_doc = st.fixed_dictionaries({"tasks": st.lists(_go_task, max_size=4)}, optional={
    "schemaVersion": st.sampled_from(["1.0", "1.5"]), "eval_name": st.text(max_size=4),
    "summary": st.fixed_dictionaries({}, optional={"total_tests": _count, "succeeded": _count,
                                                   "success_rate": st.floats(0, 1)})})


@settings(max_examples=examples(200), deadline=None)
@given(_go_doc)
def test_a_waza_go_files_light_reading_is_the_tolerant_decoders(doc):
    """The light decoder of waza (Go) files gives the page and the gate what the full,
    tolerant read gives, for every mix of missing, null and present light fields."""
    from waza_core.results import gate
    from waza_core.results.load import document_from_bytes
    from waza_core.results.outline import outline
    from waza_core.results.reporting import ResultsView

    data = json.dumps(doc).encode("utf-8")
    light = outline(data, "r.json")
    assert light is not None  # nothing here the tolerant decoder warns about
    full = document_from_bytes(data, "r.json")
    fast = _html(ResultsView(source=data, outline=light, load=lambda: pytest.fail("the full read ran")))
    slow = _html(_without_outline(ResultsView(full)))
    assert _strict(json_islands(fast)["waza-data"]) == _strict(json_islands(slow)["waza-data"])
    opts = gate.GateOptions("b.json", "c.json")
    assert gate.build_report(opts, light.document, light.document) == gate.build_report(opts, full, full)
    for key in ("test_id", "display_name", "status", "stats", "tags", "golden"):
        assert [t.get(key) for t in light.document["tasks"]] == [t.get(key) for t in full["tasks"]], key
    for lt, ft in zip(light.document["tasks"], full["tasks"], strict=True):
        for lr, fr in zip(lt["runs"], ft["runs"], strict=True):  # every light field as the full read has it
            assert {k: fr.get(k) for k in lr if k not in ("validations", "session_digest")} == \
                {k: v for k, v in lr.items() if k not in ("validations", "session_digest")}
            assert {k: fr["session_digest"].get(k) for k in lr["session_digest"]} == lr["session_digest"]
            assert lr["validations"].keys() == fr["validations"].keys()
            for name, g in lr["validations"].items():
                assert {k: fr["validations"][name].get(k) for k in g} == g


def test_a_large_live_runs_page_is_the_saved_files(tmp_path):
    """``waza run --reporter html:PATH`` of over 500 runs encodes the results as the results
    file has them (compact, through msgspec: ``1e16``, not Python's ``1e+16``), so its page
    is the page ``waza report`` makes of the saved file, byte for byte."""
    from waza_core.results.jsonbytes import compact_json
    from waza_core.results.load import open_results
    from waza_core.results.reporting import ResultsView

    doc = big_results(110, 5)
    doc["tasks"][0]["runs"][0]["outcome"] = {"big": 1e16, "small": 1e-7}
    src = tmp_path / "r.json"
    src.write_bytes(compact_json(doc) + b"\n")  # what the streaming writer of `waza run` writes
    assert _html(ResultsView(doc)) == _html(open_results(src))


@pytest.mark.parametrize("task, run", [
    ({}, {"duration_ms": -1}), ({}, {"duration_ms": 1.5}), ({}, {"run_number": 0}), ({}, {"attempts": True}),
    ({}, {"status": 5}), ({}, {"error_msg": ["x"]}), ({}, {"usage": []}), ({}, {"session_digest": "x"}),
    ({}, {"session_digest": {"usage": 3}}), ({}, {"validations": {"g": "passed"}}),
    ({}, {"validations": {"g": {"score": True}}}), ({}, {"validations": {"g": {"passed": "yes"}}}),
    ({}, {"validations": {"g": {"feedback": 1}}}), ({"tags": ["a", 1]}, {}), ({"stats": {"avg_score": "x"}}, {}),
    ({"display_name": 3}, {}), ({"status": False}, {}), ({"runs": {}}, None), ({"test_id": 7}, {}),
])
def test_a_waza_go_value_the_decoder_warns_about_takes_the_full_read(task, run):
    """Each light field of a waza (Go) file the tolerant decoder would warn about makes the
    light reading give up, so the full read runs and prints the warning."""
    from waza_core.results.outline import outline
    from waza_core.results.reading import decode

    doc = {"tasks": [{"test_id": "t", "runs": [{"status": "passed", **run}] if run is not None else None, **task}]}
    warnings: list[str] = []
    decode(json.loads(json.dumps(doc)), "r.json", warnings)
    assert warnings  # the full read warns ...
    assert outline(json.dumps(doc).encode(), "r.json") is None  # ... so the light reading steps aside
    valid = {"tasks": [{"test_id": "t", "runs": [{"status": "passed"}]}]}
    assert outline(json.dumps(valid).encode(), "r.json") is not None
