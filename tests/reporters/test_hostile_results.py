"""Hand-edited and hostile results files: readers and reporters never crash, never break their format."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from tests.reporters.conftest import json_islands, waza_ci

_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=20))
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                     max_leaves=10)
_run = st.fixed_dictionaries({}, optional={
    "run_number": _json, "status": st.one_of(st.sampled_from(["passed", "failed", "error", "n/a"]), _json),
    "validations": st.one_of(_json, st.dictionaries(st.text(max_size=5), st.one_of(_json, st.fixed_dictionaries(
        {}, optional={"score": _json, "passed": _json, "feedback": _json, "type": _json})), max_size=3)),
    "duration_ms": _json, "final_output": _json, "error_msg": _json, "transcript": _json, "tool_events": _json,
    "usage": _json, "session_digest": _json})
_task = st.fixed_dictionaries({}, optional={
    "test_id": _json, "display_name": _json, "status": _json, "runs": st.one_of(_json, st.lists(_run, max_size=3)),
    "stats": st.one_of(_json, st.fixed_dictionaries({}, optional={"pass_rate": _json, "avg_score": _json,
                                                                   "flaky": _json})),
    "golden": _json, "tags": _json})
_doc = st.fixed_dictionaries({"tasks": st.lists(st.one_of(_task, _json), max_size=4)}, optional={
    "summary": _json, "config": _json, "eval_name": _json, "schemaVersion": st.sampled_from(["1.0", "1.5"])})


def _no_constant(name):
    raise AssertionError(f"{name} in a report's JSON: a browser cannot parse it")


@settings(max_examples=examples(150), deadline=None)
@given(_doc)
def test_readers_and_reporters_take_any_shape(doc):
    from waza_core.plugins import get_registry
    from waza_core.results import compare, gate
    from waza_core.results.reading import normalize
    from waza_core.results.reporting import ResultsView

    doc = normalize(doc, "x.json")
    registry = get_registry([])
    for name in ("junit", "markdown", "html", "json"):
        out = io.BytesIO()
        registry.get("reporter", name)({}).write(ResultsView(doc), out)
        data = out.getvalue()
        if name == "junit":
            assert ET.fromstring(data).tag == "testsuites"
        elif name == "markdown":
            assert data.decode("utf-8").startswith("## ")
        elif name == "html":
            islands = json_islands(data)
            assert len(islands) == 1 + len(doc["tasks"]) and not any(b"<" in i for i in islands.values())
            index = json.loads(islands["waza-data"], parse_constant=_no_constant)
            assert [t["id"] for t in index["tasks"]] == [t["test_id"] for t in doc["tasks"]]
            for i, task in enumerate(doc["tasks"]):
                runs = json.loads(islands[f"waza-task-{i}"], parse_constant=_no_constant)["runs"]
                assert len(runs) == len(index["tasks"][i]["runs"]) == len(task["runs"])
        else:
            assert json.loads(data)["tasks"] == json.loads(json.dumps(doc["tasks"]))
    gate.build_report(gate.GateOptions("b", "c"), doc, doc)
    compare.build_report(["a", "b"], [doc, doc])


def test_lone_surrogates_and_controls_in_a_saved_file(tmp_path):
    text = 'bad \\ud800 and \\u0007 and </script>'
    raw = ('{"schemaVersion": "1.5", "eval_name": "%s", "tasks": [{"test_id": "t", "display_name": "%s", '
           '"status": "failed", "runs": [{"run_number": 1, "status": "failed", "final_output": "%s", '
           '"validations": {"g": {"type": "text", "score": 0, "passed": false, "feedback": "%s"}}}]}]}'
           % (text, text, text, text))
    src = tmp_path / "r.json"
    src.write_text(raw)
    proc = waza_ci("report", str(src), "--junit", str(tmp_path / "r.xml"), "--markdown", str(tmp_path / "r.md"),
                   "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr.decode()
    ET.parse(tmp_path / "r.xml")
    assert "\ufffd" in (tmp_path / "r.md").read_text("utf-8")
    page = (tmp_path / "r.html").read_bytes()
    page.decode("utf-8")
    islands = json_islands(page)
    assert all(b"<" not in island for island in islands.values())
    index, task = json.loads(islands["waza-data"]), json.loads(islands["waza-task-0"])
    assert index["tasks"][0]["name"].startswith("bad \ud800")
    assert task["runs"][0]["final_output"].startswith("bad \ud800")
