"""waza assure: a suite's graders against reviewed reference labels, with real files.

The suite, task, graders and authored outputs are the ones of examples/assure; each test copies
them to a temp folder, writes the labels with the example's own make_labels.py (its digests from
``waza assure --bindings``), changes one thing and reads the waza.grader-assurance report."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil

import pytest

from tests.conftest import REPO
from tests.interop.helpers import cli
from waza_core.assure import jsonv1
from waza_core.assure.authored import InputProblem, new_input, parse_input

EXAMPLE = REPO / "examples" / "assure"
# the keys of waza (Go)'s Report, ChallengeObservation, RequirementAssessment and DomainAssessment
REPORT_KEYS = {"kind", "schema_version", "created_at", "state", "reason", "labels_sha256", "review", "bindings",
               "requirements", "domains", "calibration", "cache_policy", "limitations"}
OBSERVATION_KEYS = {"case_id", "scenario_id", "domain", "classification", "source_scope", "expected_passed",
                    "state", "reason", "agreement", "result", "evidence", "bindings"}
REQUIREMENT_KEYS = {"task_id", "requirement_id", "check", "state", "reason", "declared_coverage",
                    "observed_coverage", "observations"}
DOMAIN_KEYS = {"id", "minimum_cases", "minimum_agreement", "declared_cases", "observed_cases", "expected_checks",
               "observed_checks", "agreements", "agreement", "state"}
CALIBRATION_KEYS = {"state", "reason", "max_judge_executions", "executions", "billable_calls_bounded",
                    "cost_bounded", "samples", "confidence_supported", "usage", "credits"}


@pytest.fixture
def example(tmp_path):
    """A copy of examples/assure with labels made, and its make_labels module."""
    here = tmp_path / "assure"
    shutil.copytree(EXAMPLE, here, ignore=shutil.ignore_patterns("inputs", "references.json", "review.json"))
    spec = importlib.util.spec_from_file_location("make_labels_copy", here / "make_labels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = here

    def bindings():
        res = cli("assure", str(here / "eval.yaml"), "--bindings")
        assert res.code == 0, res.err
        return json.loads(res.out)

    module.bindings = bindings
    return here, module


def make(example, *flags):
    here, module = example
    import sys

    argv, sys.argv = sys.argv, ["make_labels.py", *flags]
    try:
        module.main()
    finally:
        sys.argv = argv
    return here


def assure(here, *extra, review=True):
    args = ["assure", str(here / "eval.yaml"), "--references", str(here / "references.json")]
    if review:
        args += ["--review", str(here / "review.json"), "--accept-review-source", "support-team"]
    res = cli(*args, *extra)
    report = json.loads(res.out) if res.out.strip() else None
    return res, report


def labels_of(here):
    return json.loads((here / "references.json").read_text())


def save_labels(here, labels, rereview=True):
    data = (json.dumps(labels, indent=2) + "\n").encode()
    (here / "references.json").write_bytes(data)
    if rereview:
        review = json.loads((here / "review.json").read_text())
        review["labels_sha256"] = hashlib.sha256(data).hexdigest()
        (here / "review.json").write_text(json.dumps(review))


def test_reviewed_labels_that_agree_pass_with_exit_0_and_waza_go_keys(example):
    here = make(example)
    res, report = assure(here)
    assert res.code == 0, res.err
    assert set(report) == REPORT_KEYS and report["kind"] == "waza.grader-assurance"
    assert (report["state"], report["reason"], report["cache_policy"]) == ("passed", "corpus_agreement", "no_reuse")
    assert report["review"] == {"source_id": "support-team", "current_source_accepted": True,
                                "declared_state": "reviewed", "eligible": True}
    assert [b["state"] for b in report["bindings"]] == ["verified"] * 3
    assert report["labels_sha256"] == hashlib.sha256((here / "references.json").read_bytes()).hexdigest()
    assert set(report["calibration"]) == CALIBRATION_KEYS and report["calibration"]["credits"] is None
    for req in report["requirements"]:
        assert set(req) == REQUIREMENT_KEYS and req["state"] == "passed"
        assert req["observed_coverage"] == {"good": 1, "alternative_valid": 1, "critical_bad": 2,
                                            "intended_negative": 1}
        for obs in req["observations"]:
            assert set(obs) == OBSERVATION_KEYS and obs["state"] == "observed" and obs["agreement"] is True
            assert obs["source_scope"] == "authored_finite_output"
            assert obs["result"]["passed"] is obs["expected_passed"]
    (domain,) = report["domains"]
    assert set(domain) == DOMAIN_KEYS
    assert (domain["observed_cases"], domain["observed_checks"], domain["agreement"]) == (4, 8, 1.0)
    # written as Go's encoding/json writes it: float64 1 as 1, a time without trailing zeros
    assert b'"minimum_agreement": 1,' in res.out and b'"agreement": 1,' in res.out
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z", report["created_at"])


def test_a_grader_that_accepts_a_critical_bad_case_fails_with_exit_1(example):
    here = make(example, "--loophole")
    res, report = assure(here)
    assert res.code == 1 and "critical_false_acceptance" in res.err
    assert (report["state"], report["reason"]) == ("failed", "critical_false_acceptance")
    grants = next(r for r in report["requirements"] if r["requirement_id"] == "grants-refund")
    assert (grants["state"], grants["reason"]) == ("failed", "critical_false_acceptance")
    bad = next(o for o in grants["observations"] if o["case_id"] == "nested-true")
    assert bad["agreement"] is False and bad["result"]["passed"] is True and bad["reason"] == "label_disagreement"
    (domain,) = report["domains"]
    assert domain["agreement"] == pytest.approx(0.9) and domain["state"] == "failed"


def test_without_an_accepted_review_nothing_passes(example):
    here = make(example)
    res, report = assure(here, review=False)
    assert res.code == 1
    assert (report["state"], report["reason"]) == ("not_assessed", "review_not_eligible")
    assert report["review"] == {"source_id": "", "current_source_accepted": False, "declared_state": "",
                                "eligible": False, "reason": "source_not_accepted"}
    assert {r["reason"] for r in report["requirements"]} == {"review_not_eligible"}
    res, report = cli("assure", str(here / "eval.yaml"), "--references", str(here / "references.json"),
                      "--review", str(here / "review.json"), "--accept-review-source", "someone-else"), None
    assert res.code == 1 and json.loads(res.out)["review"]["reason"] == "source_not_accepted"


@pytest.mark.parametrize("change, reason", [
    ({"state": "submitted"}, "not_reviewed"),
    ({"subject_version": "2"}, "subject_version_mismatch"),
    ({"subject_id": "other"}, "subject_identity_mismatch"),
    ({"labels_sha256": "0" * 64}, "label_digest_mismatch"),
])
def test_a_review_of_other_labels_or_not_approved_is_not_eligible(example, change, reason):
    here = make(example)
    review = json.loads((here / "review.json").read_text())
    (here / "review.json").write_text(json.dumps({**review, **change}))
    res, report = assure(here)
    assert res.code == 1 and report["review"]["reason"] == reason and report["state"] == "not_assessed"


def test_a_review_dated_in_the_future_is_invalid(example):
    here = make(example)
    review = json.loads((here / "review.json").read_text())
    (here / "review.json").write_text(json.dumps({**review, "reviewed_at": "2999-01-01T00:00:00Z"}))
    res, report = assure(here)
    assert res.code == 1 and (report["state"], report["reason"]) == ("invalid", "invalid_review")


def test_an_edited_suite_breaks_its_bindings(example):
    here = make(example)
    eval_yaml = here / "eval.yaml"
    eval_yaml.write_text(eval_yaml.read_text() + "# a comment changes the bytes, not the parsed config\n")
    res, report = assure(here)
    assert res.code == 1 and (report["state"], report["reason"]) == ("invalid", "binding_mismatch")
    assert [b["state"] for b in report["bindings"]] == ["mismatch", "verified", "verified"]
    make(example)  # labels made again (and reviewed again) for the edited file
    task = here / "tasks" / "refund.yaml"
    task.write_text(task.read_text().replace('not_contains: ["cannot help"]', 'not_contains: ["cannot"]'))
    res, report = assure(here)
    assert res.code == 1 and report["state"] == "invalid"
    grants = next(r for r in report["requirements"] if r["requirement_id"] == "grants-refund")
    assert grants["reason"] == "binding_mismatch"
    assert [b["state"] for b in grants["observations"][0]["bindings"]] == ["mismatch", "mismatch", "not_applicable"]


def test_labels_that_pin_no_implementation_are_not_assessed(example):
    here = make(example)
    labels = labels_of(here)
    labels["implementation_executable_sha256"] = None
    save_labels(here, labels)
    res, report = assure(here)
    assert res.code == 1 and (report["state"], report["reason"]) == ("not_assessed", "provenance_unavailable")
    assert report["bindings"][2] == {"domain": "implementation_executable_bytes", "applicable": True,
                                     "state": "missing", "expected": None,
                                     "actual": report["bindings"][2]["actual"]}


def test_tampered_or_missing_authored_inputs(example):
    here = make(example)
    good = here / "inputs" / "good.json"
    doc = json.loads(good.read_text())
    doc["payload"]["output"] = "I cannot help."
    good.write_text(json.dumps(doc))
    res, report = assure(here)
    obs = next(o for r in report["requirements"] for o in r["observations"] if o["case_id"] == "good")
    assert res.code == 1 and (obs["state"], obs["reason"]) == ("invalid", "authored_document_binding_invalid")
    labels = labels_of(here)  # the document digest follows the edit: the sealed content digest does not
    labels["cases"][0]["authored_input"]["document_sha256"] = hashlib.sha256(good.read_bytes()).hexdigest()
    save_labels(here, labels)
    res, report = assure(here)
    obs = next(o for r in report["requirements"] for o in r["observations"] if o["case_id"] == "good")
    assert (obs["state"], obs["reason"]) == ("invalid", "authored_profile_binding_invalid")
    good.unlink()
    res, report = assure(here)
    obs = next(o for r in report["requirements"] for o in r["observations"] if o["case_id"] == "good")
    assert (obs["state"], obs["reason"]) == ("insufficient_evidence", "authored_input_unavailable")
    assert report["domains"][0]["state"] == "insufficient_evidence"


def test_too_few_cases_are_not_enough(example):
    here = make(example)
    labels = labels_of(here)
    labels["cases"] = [c for c in labels["cases"] if c["id"] != "prose"]
    save_labels(here, labels)
    res, report = assure(here)
    assert res.code == 1
    assert {r["reason"] for r in report["requirements"]} == {"challenge_coverage_missing"}
    assert report["domains"][0]["state"] == "insufficient_evidence"  # 3 cases, minimum 4
    assert report["state"] == "insufficient_evidence" and report["reason"] == "domain_samples_unavailable"


def test_calibration_is_not_available_and_says_so(example):
    here = make(example)
    res, report = assure(here, "--calibrate")
    assert res.code == 1 and "Calibration unavailable" in res.err
    assert report["calibration"]["reason"] == "calibration_plan_missing" and report["calibration"]["executions"] == 0


def test_o_writes_the_same_report(example, tmp_path):
    here = make(example)
    out = tmp_path / "report.json"
    res, _ = assure(here, "-o", str(out))
    assert res.code == 0 and out.read_bytes() == res.out and out.stat().st_mode & 0o777 == 0o600


# -- bad input: exit 2, a clear message with file:line:col ------------------------------------------


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(extra=1), "unsupported property names (extra is not a property)"),
    (lambda d: d["cases"][2]["checks"].__setitem__(0, {**d["cases"][2]["checks"][0], "expected_passed": True}),
     "critical bad case requires an intended rejection"),
    (lambda d: d["cases"][0]["checks"][0].__setitem__("expected_passed", False),
     "valid cases cannot expect a rejected check"),
    (lambda d: d["cases"][0]["checks"][0]["check"].__setitem__("after_turn", 1),
     "after_turn must be absent outside checkpoint scope"),
    (lambda d: d.update(kind="waza.other"), "unsupported document kind or version"),
    (lambda d: d["cases"][1].update(domain="nope"), "domain 'nope' is not one of the declared domains"),
    (lambda d: d["cases"][1].update(snapshot="runs/1.json"), "exactly one valid historical or authored source"),
    (lambda d: d["cases"][1]["authored_input"].update(path="../escape.json"),
     "exactly one valid historical or authored source"),
    (lambda d: d["domains"][0].update(minimum_agreement=1.5), "invalid or duplicate domain criteria"),
    (lambda d: d["cases"][0]["checks"][0]["evidence"][0]["origin"].update(run_number=0),
     "invalid or duplicate evidence reference"),
    (lambda d: d.update(eval_source_sha256="ABC"), "invalid subject or digest binding"),
    (lambda d: d["cases"][0]["checks"][0]["check"].update(grader="no-such-grader"),
     "labels select an undeclared scoped requirement check"),
])
def test_a_broken_label_file_is_exit_2_with_its_place(example, edit, message):
    here = make(example)
    labels = labels_of(here)
    edit(labels)
    save_labels(here, labels)
    res, _ = assure(here)
    assert res.code == 2 and message in res.err, res.err
    assert f"{here / 'references.json'}:" in res.err and "Traceback" not in res.err


def test_ambiguous_json_and_bad_options_are_exit_2(example):
    here = make(example)
    (here / "references.json").write_text('{"kind": "a", "kind": "b"}')
    res, _ = assure(here)
    assert res.code == 2 and "duplicate key 'kind'" in res.err
    make(example)
    res = cli("assure", str(here / "eval.yaml"), "--references", str(here / "references.json"),
              "--accept-review-source", "x")
    assert res.code == 2 and "requires an explicitly supplied --review" in res.err
    res = cli("assure", str(here / "eval.yaml"))
    assert res.code == 2 and "--references" in res.err


def test_an_invalid_suite_is_refused_before_any_assessment(example):
    here = make(example)
    (here / "tasks" / "refund.yaml").write_text("id: refund-reply\ninputs: {}\n")
    res, _ = assure(here)
    assert res.code == 2 and "run waza preflight for diagnostics" in res.err


# -- the pieces --------------------------------------------------------------------------------------


def test_json_v1_normalizes_as_go_encoding_json():
    assert jsonv1.canonical(jsonv1.parse(b'{"b": 1.50, "a": ["<x>&\\u2028", null, true, 1e-07]}')) == \
        b'{"a":["\\u003cx\\u003e\\u0026\\u2028",null,true,1e-07],"b":1.50}'  # number tokens stay exact
    assert jsonv1.canonical({"z": 1.0, "a": "\u00e9", "m": 1e-7, "n": 0.00001, "t": "\x01\n"}) == \
        '{"a":"\u00e9","m":1e-7,"n":0.00001,"t":"\\u0001\\n","z":1}'.encode()
    with pytest.raises(jsonv1.JsonProblem, match="duplicate key"):
        jsonv1.parse(b'{"a": 1, "a": 2}')


def test_an_authored_input_round_trips_and_any_edit_is_refused():
    data = new_input("labels", "case-1", "task-1", 3, "hello <world>")
    inp = parse_input(data)
    assert inp.output == "hello <world>" and inp.case_id == "case-1"
    assert json.loads(data)["evidence"]["origin"] == {"eval_id": "reference:labels", "task_id": "task-1",
                                                      "run_number": 3, "attempt_count": 1, "prior_attempts": "none"}
    assert parse_input(new_input("labels", "case-2", "task-1", 1, None)).output is None
    # edits waza (Go)'s TestAuthoredOutputStrictAdmission refuses too
    for old, new in ((b'"hello', b'"howdy'), (b'"run_number":3', b'"run_number":4'),
                     (b'"prior_attempts":"none"', b'"prior_attempts":"some"'), (b'"sdk_version":null,', b''),
                     (b'"schemaVersion":"2.0"', b'"schemaVersion":"2.1"'), (b'hello', b'\\ud800'),
                     (b'"kind":"waza.grader-reference-input"', b'"\\u004bind":"waza.grader-reference-input"'),
                     (b'"run_number":3', b'"run_number":3.0'), (b'"output":"hello <world>"', b'"output":7'),
                     (b'"artifacts":[{', b'"artifacts":[null,{'), (b'}}', b'}}{}')):
        with pytest.raises(InputProblem):
            parse_input(data.replace(old, new))
    with pytest.raises(InputProblem, match="safe subject"):
        new_input("labels", "../x", "task-1", 1, "x")
