"""A crafted journal is validated line by line before anything is merged (docs/safety.md):
NaN or Infinity, a boolean where a trial number belongs, an unknown status, a too-deep or
too-long line: exit 2 at FILE:LINE, and a results file is never made of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.depth import examples
from tests.run.helpers import cli, slow_suite
from waza_core.errors import WazaError
from waza_core.run import journal as jmod


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("journal")
    suite = slow_suite(tmp / "suite", 2, tmp / "graded.log", sleep=0)
    journal = tmp / "runs.jsonl"
    proc = cli("run", str(suite), "--journal", str(journal), "-q")
    assert proc.returncode == 0, proc.stderr.decode()
    return suite, journal


def _craft(finished, tmp_path, change) -> tuple[Path, Path]:
    suite, journal = finished
    lines = journal.read_bytes().split(b"\n")
    lines[1] = change(lines[1])
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_bytes(b"\n".join(lines))
    return suite, crafted


@pytest.mark.parametrize("change, said", [
    (lambda b: b.replace(b'"duration_ms":', b'"duration_ms":NaN,"x":', 1), "NaN is not a JSON number"),
    (lambda b: b.replace(b'"duration_ms":', b'"duration_ms":Infinity,"x":', 1), "Infinity is not a JSON number"),
    (lambda b: b.replace(b'"trial":1', b'"trial":true', 1), "'trial' must be an integer >= 1, not true"),
    (lambda b: b.replace(b'"status":"passed"', b'"status":"sideways"', 1), "is not a run status"),
    (lambda b: b.replace(b'"task_id":', b'"deep":' + b"[" * 5000 + b"]" * 5000 + b',"task_id":', 1),
     "nested more than 100 levels deep"),
    (lambda b: b.replace(b'"model":"mock-model"', b'"model":7', 1), "'model' must be a string"),
    (lambda b: b.replace(b'"pass":', b'"x":', 1).replace(b'"run":', b'"pass":"sideways","run":', 1),
     "'pass' must be 'baseline'"),
    (lambda b: b.replace(b'"duration_ms":', b'"duration_ms":"slow","x":', 1), "duration_ms"),
    (lambda b: b.replace(b'"duration_ms":', b'"duration_ms":1' + b"0" * 40 + b',"x":', 1), "out of range"),
])
def test_crafted_lines_are_exit_2_at_their_line(finished, tmp_path, change, said):
    suite, crafted = _craft(finished, tmp_path, change)
    out = tmp_path / "out.json"
    proc = cli("run", str(suite), "--resume", str(crafted), "-o", str(out))
    assert proc.returncode == 2, proc.stderr.decode()
    assert f"{crafted}:2: not a journal entry".encode() in proc.stderr, proc.stderr.decode()
    assert said.encode() in proc.stderr and b"Traceback" not in proc.stderr
    assert not out.exists()


def test_a_line_longer_than_the_limit_is_exit_2_at_its_line(finished, tmp_path, monkeypatch):
    _suite, crafted = _craft(finished, tmp_path, lambda b: b.replace(b'"task_id":', b'"pad":"' + b"x" * 5000
                                                                         + b'","task_id":', 1))
    limit = len(crafted.read_bytes().split(b"\n")[0]) + 1
    monkeypatch.setattr(jmod, "MAX_LINE_BYTES", limit)
    with pytest.raises(WazaError, match=rf":2: the line is longer than the {limit} bytes allowed"):
        head = json.loads(crafted.read_bytes().split(b"\n")[0])
        jmod.read(crafted, head["suite"], head["settings"])


def test_a_header_with_a_boolean_format_is_not_a_journal(finished, tmp_path):
    suite, journal = finished
    lines = journal.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"waza_journal":1', b'"waza_journal":true')
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_bytes(b"\n".join(lines))
    proc = cli("run", str(suite), "--resume", str(crafted))
    assert proc.returncode == 2 and b"journal format True" in proc.stderr


_values = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 70, max_value=2 ** 70),
                    st.floats(), st.text(max_size=8), st.lists(st.integers(), max_size=2))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["task_id", "trial", "model", "pass", "run", "status", "duration_ms", "run_number",
                              "attempts", "final_output", "transcript", "validations", "score", "passed"]),
       value=_values)
def test_any_field_of_any_value_is_a_run_or_a_refusal_at_its_line(finished, field, value):
    """In process: every mutation of one field either reads back as a run a results file can
    hold (finite numbers, known status) or is refused with FILE:LINE; never a traceback."""
    from waza_core.results.codec import run_to_json

    _suite, journal = finished
    head, first = journal.read_bytes().split(b"\n")[:2]
    obj = json.loads(first)
    if field in ("task_id", "trial", "model", "pass", "run"):
        obj[field] = value
    elif field in ("score", "passed"):
        for grade in obj["run"].get("validations", {}).values():
            grade[field] = value
    else:
        obj["run"][field] = value
    raw = json.dumps(obj, allow_nan=True).encode() + b"\n"
    try:
        key, _baseline, run = jmod._entry(Path("j.jsonl"), 2, raw)
    except WazaError as exc:
        assert str(exc).startswith("j.jsonl:2: not a journal entry")
        return
    assert isinstance(key[0], str) and type(key[1]) is int and key[1] >= 1 and isinstance(key[2], str)
    back = run_to_json(run)
    assert back["status"] in ("passed", "failed", "error", "n/a")
    json.dumps(back, allow_nan=False)  # finite: the results file stays JSON
