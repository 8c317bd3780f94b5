"""Lone surrogates (``"\\ud800"`` in a JSON Lines data file, an agent's undecodable
output) reach the results; they once failed the results file after the whole run
(UnicodeEncodeError, a traceback, nothing written). They are written as JSON escapes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from tests.hostile.conftest import no_traceback
from waza_core.results.jsonbytes import compact_json, dumps

LONE = st.integers(0xD800, 0xDFFF).map(chr)  # st.characters() never draws a surrogate
ROW = '{"id": "a\\ud800", "prompt": "say \\udc80 and \\ud83d"}\n'


@pytest.mark.parametrize("trials", [1, 501])  # 501 runs: the streaming writer
def test_a_run_whose_data_has_lone_surrogates_writes_its_results(waza, tmp_path, trials):
    suite = tmp_path / "s"
    suite.mkdir()
    (suite / "rows.jsonl").write_text(ROW)
    (suite / "eval.yaml").write_text(f"name: s\nskill: s\nconfig: {{executor: mock, trials_per_task: {trials}}}\n"
                                     "tasks_from: rows.jsonl\nallow_ungraded: true\n")
    out = tmp_path / "r.json"
    proc = waza("run", str(suite), "-o", str(out), "-q")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_bytes())
    assert doc["tasks"][0]["test_id"] == "a\ud800" and len(doc["tasks"][0]["runs"]) == trials


@settings(max_examples=examples(200), deadline=None)
@given(st.recursive(st.text(alphabet=st.characters() | LONE) | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                    max_leaves=8))
def test_every_string_encodes_and_reads_back(value):
    expected = json.loads(json.dumps(value))  # what JSON itself makes of it (a surrogate pair: one character)
    for data in (compact_json(value), dumps(value), dumps(value, compact=True)):
        assert json.loads(data.decode("utf-8")) == expected
