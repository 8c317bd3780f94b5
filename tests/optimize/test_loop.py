"""The loop: incumbent rule, decisions, budgets, scoring rules, failures, interrupts."""

from __future__ import annotations

import os

import pytest

from .conftest import files, write


def test_rejected_when_the_best_regresses_on_the_held_out_split(suite):
    r = suite.run([files("alpha beta")])  # drops gamma: 0.5 -> 0 on qualification
    assert (r.outcome, r.code) == ("rejected", 0)
    assert r.report["qualification"]["decision"] == "rejected"


def test_accepted_on_equal_held_out_score(suite):
    r = suite.run([files("alpha beta gamma")])
    assert r.outcome == "accepted"
    q = r.report["qualification"]
    assert q["seed_score"] == q["candidate_score"] == 0.5


def test_incumbent_changes_only_on_a_strictly_better_score(suite):
    r = suite.run([files("alpha gamma beta"), files("beta alpha gamma"), {"done": True}])
    first = r.report["candidates"][1]["id"]
    assert r.report["best_candidate_id"] == first  # the equal-scoring second one does not replace it
    assert r.report["proposals"][1]["parent_id"] == first


def test_no_improvement_skips_qualification(suite):
    r = suite.run([files("alpha gamma zzz")])
    assert (r.outcome, r.code) == ("no_improvement", 0)
    assert r.report["qualification"]["status"] == "skipped"
    assert all(e["split"] == "optimization" for e in r.report["evaluations"])


def test_min_improvement_must_be_exceeded(suite):
    r = suite.run([files("alpha beta gamma")], min_improvement=0.5)
    assert r.outcome == "no_improvement" and r.report["qualification"]["improvement"] == 0.5
    r = suite.run([files("alpha beta gamma")], min_improvement=0.49)
    assert r.outcome == "accepted"


def test_unscorable_seed_is_evaluation_incomplete(make):
    s = make(eval_extra="graders:\n  - type: boom\n    name: judge\n")
    write(s.seed / "checklist.md", "alpha BOOM\n")
    r = s.run([])
    assert (r.category, r.outcome, r.code) == ("evaluation_incomplete", "incomplete", 1)
    ev = r.report["evaluations"][0]
    assert ev["state"] == "evaluation_incomplete" and ev["score"] is None and "could not judge" in ev["reason"]
    assert ev["evidence"] is not None  # the harness produced an outcome, so it is kept


def test_grader_error_candidate_never_counts_as_improvement(make):
    s = make(eval_extra="graders:\n  - type: boom\n    name: judge\n")
    r = s.run([files("alpha beta gamma BOOM"), {"done": True}])
    assert r.outcome == "no_improvement"
    cand = r.report["evaluations"][1]
    assert cand["state"] == "evaluation_incomplete" and cand["score"] is None
    assert r.report["best_candidate_id"] == r.report["seed_candidate_id"]


def test_unscorable_qualification_is_not_qualified(make):
    s = make(eval_extra="graders:\n  - type: boom\n    name: judge\n",
             tasks={"opt-a": (["optimization"], "alpha"), "opt-b": (["optimization"], "beta"),
                    "qual-c": (["qualification"], "gamma", "", "extra.md")})
    write(s.dir / "fixtures" / "extra.md", "BOOM\n")
    r = s.run([files("alpha beta")])
    assert (r.outcome, r.code) == ("not_qualified", 1)
    assert r.report["failure"] is None and r.report["qualification"]["status"] == "unscorable"


def test_missing_task_input_makes_the_evaluation_incomplete(make):
    s = make(tasks={"opt-a": (["optimization"], "alpha", "", "needed.md"), "opt-b": (["optimization"], "beta"),
                    "qual-c": (["qualification"], "gamma")})
    r = s.run([])
    assert r.category == "evaluation_incomplete"
    assert "refused" in r.report["evaluations"][0]["reason"]


def test_missing_evidence_when_the_harness_drops_a_task(suite, monkeypatch):
    from waza_core.optimize import evaluate as ev

    real = ev.run_engine

    def dropping(*a, **k):
        out = real(*a, **k)
        out["tasks"] = out["tasks"][:1]
        return out

    monkeypatch.setattr(ev, "run_engine", dropping)
    r = suite.run([])
    assert (r.category, r.outcome) == ("missing_evidence", "failed")
    ev0 = r.report["evaluations"][0]
    assert ev0["state"] == "missing_evidence" and ev0["evidence"] is not None and ev0["score"] is None


def test_suite_changed_during_an_evaluation(make, monkeypatch):
    s = make(executor="mutator")
    write(s.dir / "data.csv", "a,b\n")
    monkeypatch.setenv("WAZA_TEST_MUTATE", "1")
    r = s.run([])
    assert (r.category, r.outcome) == ("suite_changed", "failed")
    ev0 = r.report["evaluations"][0]
    assert ev0["state"] == "suite_changed" and ev0["evidence"] is not None


def test_suite_changed_between_evaluations(suite, monkeypatch):
    from waza_core.optimize import evaluate as ev

    real_eval = ev._evaluate

    def touch_then_eval(ctx, rec, cand):
        if rec.index == 1:
            (suite.dir / "fixtures" / "checklist.md").write_text("edited\n")
        return real_eval(ctx, rec, cand)

    monkeypatch.setattr(ev, "_evaluate", touch_then_eval)
    r = suite.run([files("alpha beta gamma")])
    assert r.category == "suite_changed" and "context directory" in r.report["failure"]["message"]
    assert r.report["evaluations"][1]["state"] == "suite_changed"


def test_each_evaluation_gets_a_fresh_materialization_and_engine(suite, monkeypatch):
    from waza_core.optimize import evaluate as ev
    from waza_core.run import engine as runner

    dirs, engines = [], []
    real_init = ev.Materialization.__init__
    real_engine_init = runner.Engine.__init__

    def spy(self, *a, **k):
        real_init(self, *a, **k)
        dirs.append(self.root)

    def spy_engine(self, *a, **k):
        real_engine_init(self, *a, **k)
        engines.append(self)

    monkeypatch.setattr(ev.Materialization, "__init__", spy)
    monkeypatch.setattr(runner.Engine, "__init__", spy_engine)
    r = suite.run([files("alpha beta gamma")])
    assert r.outcome == "accepted"
    assert len(dirs) == len(set(dirs)) == 4 and not any(d.exists() for d in dirs)
    assert len({id(e) for e in engines}) == 4
    assert (suite.dir / "fixtures" / "checklist.md").read_text() == "base\n"


def test_skill_directory_target_end_to_end(make, tmp_path):
    from .plugins import SkillEcho

    s = make(executor="skillecho")
    s.seed = tmp_path / "skillseed"
    write(s.seed / "SKILL.md", "---\nname: example\n---\nalpha gamma\n")
    SkillEcho.seen.clear()
    good = "---\nname: example\n---\nalpha beta gamma delta\n"
    renamed = "---\nname: other\n---\nalpha beta gamma delta extra\n"
    r = s.run([files(renamed, path="SKILL.md"), files(good, path="SKILL.md")], target="skill-directory")
    assert r.outcome == "accepted", r.report["failure"]
    ev = r.report["evaluations"]
    assert ev[1]["state"] == "evaluation_incomplete" and "no longer resolves" in ev[1]["reason"]
    assert r.report["qualification"]["candidate_score"] == 1.0
    dirs = {d for (d,) in SkillEcho.seen}
    assert len(dirs) == 4 and all(os.path.basename(d) == "skill" for d in dirs)


def test_seed_whose_skill_name_does_not_match_is_incomplete(make, tmp_path):
    s = make(executor="skillecho")
    s.seed = tmp_path / "skillseed"
    write(s.seed / "SKILL.md", "---\nname: wrong\n---\nalpha\n")
    r = s.run([], target="skill-directory")
    assert r.category == "evaluation_incomplete"


# -- budgets ------------------------------------------------------------------------

def test_iteration_budget(suite):
    r = suite.run([files("alpha x"), files("alpha y"), files("alpha z")], max_iterations=2)
    assert r.report["stop_reason"] == "iteration_budget" and r.report["budget"]["iterations_used"] == 2


def test_evaluation_budget_counts_the_seed_and_reserves_two(suite):
    r = suite.run([files("alpha beta gamma"), files("alpha x"), files("alpha y")], max_evaluations=4)
    assert r.report["stop_reason"] == "evaluation_budget"
    assert [e["role"] for e in r.report["evaluations"]] == [
        "seed", "candidate", "qualification-seed", "qualification-candidate"]
    assert r.report["budget"]["evaluations_used"] == 4
    r = suite.run([files("alpha beta gamma")], max_evaluations=3)
    assert r.report["stop_reason"] == "evaluation_budget" and r.report["proposals"] == []


def test_zero_iterations_evaluates_only_the_seed(suite):
    r = suite.run([files("alpha beta gamma")], max_iterations=0)
    assert r.report["stop_reason"] == "iteration_budget" and r.outcome == "no_improvement"


# -- consent ------------------------------------------------------------------------

def test_always_paid_adapter_needs_consent_before_describe(suite):
    from .plugins import PaidFake

    PaidFake.described = 0
    r = suite.run([], adapter="paidfake")
    assert (r.category, r.code) == ("consent_required", 1)
    assert PaidFake.described == 0 and r.report["evaluations"] == [] and r.report["proposals"] == []
    assert r.report["consent"] == {"allow_paid_calls": False, "required": True, "reasons": ["adapter"]}
    r = suite.run([], adapter="paidfake", allow_paid_calls=True)
    assert r.code == 0 and PaidFake.described == 1


def test_paid_calls_in_describe_need_consent_after_describe(suite):
    r = suite.run([files("alpha beta gamma")], describe={"paid_calls": True})
    assert r.category == "consent_required" and r.report["evaluations"] == []
    assert r.report["adapter"]["paid_calls"] is True and r.report["consent"]["reasons"] == ["paid_calls"]
    assert suite.run([files("alpha beta gamma")], describe={"paid_calls": True}, allow_paid_calls=True).code == 0


def test_paid_executor_needs_consent(make):
    s = make(executor="paidexec")
    r = s.run([])
    assert r.category == "consent_required" and r.report["consent"]["reasons"] == ["executor"]


# -- interrupts ---------------------------------------------------------------------

def test_ctrl_c_ends_the_run_as_cancelled_with_a_report(make):
    s = make(executor="ctrlc")
    r = s.run([files("alpha beta gamma")])
    assert (r.category, r.outcome, r.report["stop_reason"], r.code) == ("cancelled", "incomplete", "cancelled", 1)
    assert r.report["evaluations"][0]["state"] == "cancelled"


def test_deadline_ends_the_run_as_timeout_with_a_report(make, monkeypatch):
    monkeypatch.setenv("WAZA_TEST_SLEEP", "5")
    s = make(executor="sleepy")
    import time

    t0 = time.monotonic()
    r = s.run([], timeout="300ms")
    assert time.monotonic() - t0 < 4
    assert (r.category, r.outcome, r.report["stop_reason"]) == ("timeout", "incomplete", "timeout")
    assert r.report["budget"]["timeout_ms"] == 300


# -- flags --------------------------------------------------------------------------

@pytest.mark.parametrize("kw,needle", [
    ({"max_evaluations": 2}, "--max-evaluations"),
    ({"max_iterations": -1}, "--max-iterations"),
    ({"timeout": "-5s"}, "--timeout"),
    ({"timeout": "10"}, "duration"),
    ({"adapter_timeout": "0s"}, "--adapter-timeout"),
    ({"min_improvement": -0.1}, "--min-improvement"),
    ({"min_improvement": float("nan")}, "--min-improvement"),
    ({"target": "everything"}, "--target"),
    ({"adapter": "nope"}, "unknown optimizer adapter"),
    ({"fake_script": "/nonexistent/script.json"}, "--fake-script"),
])
def test_invalid_flags_are_invalid_config(suite, kw, needle):
    r = suite.run(None, **kw)
    assert (r.category, r.code) == ("invalid_config", 1)
    assert needle in r.report["failure"]["message"]


def test_adapter_flags_for_another_adapter_are_invalid_config(suite):
    from waza_core.optimize.adapter import AdapterOptions
    from waza_core.optimize.loop import OptimizeConfig, run_optimizer

    cfg = OptimizeConfig(eval_file=suite.eval, target="context-overlay", seed=suite.seed,
                         optimization_tag="optimization", qualification_tag="qualification", adapter="fake",
                         output_dir=suite.root / "x", adapter_options=AdapterOptions.of({"command": "python3"}))
    assert run_optimizer(cfg) == 1
    import json

    rep = json.loads((suite.root / "x" / "report.json").read_text())
    assert rep["failure"]["category"] == "invalid_config" and "--adapter-command" in rep["failure"]["message"]


def test_durations_parse_like_go():
    from waza_core.optimize.failures import OptimizeFailure
    from waza_core.optimize.loop import parse_duration

    assert parse_duration("10m", "f") == 600
    assert parse_duration("1h30m", "f") == 5400
    assert parse_duration("250ms", "f") == 0.25
    assert parse_duration("1.5s", "f") == 1.5
    assert parse_duration("0", "f") == 0
    for bad in ("", "10", "m", "1x", "1m2"):
        with pytest.raises(OptimizeFailure):
            parse_duration(bad, "f")


def test_scoring_rules_on_results_documents():
    from waza_core.optimize.evaluate import truncate_utf8, unscorable_reason

    def doc(*statuses, error=None, incomplete=False):
        v = {"g": {"identifier": "g", "passed": False, "score": 0, **({"error": error} if error else {})}}
        return {"incomplete": incomplete, "tasks": [
            {"test_id": f"t{i}", "status": s, "runs": [{"run_number": 1, "status": s, "validations": v}]}
            for i, s in enumerate(statuses)]}

    assert unscorable_reason(doc("passed", "failed")) is None
    assert "errored" in unscorable_reason(doc("passed", "error"))
    assert "skipped" in unscorable_reason(doc("n/a"))
    assert "could not judge" in unscorable_reason(doc("failed", error={"kind": "timeout", "message": "t/o"}))
    assert "did not finish" in unscorable_reason(doc("passed", incomplete=True))
    text, cut = truncate_utf8("é" * 600)
    assert cut and len(text.encode()) == 1000 and text == "é" * 500
    assert truncate_utf8("short") == ("short", False)


@pytest.mark.parametrize("seed,best,bar,expected", [
    (0.7, 0.8, 0.1, False),  # 0.8 - 0.7 = 0.10000000000000009 in floats: still a tie with the bar
    (0.7, 0.8, 0.09, True),
    (0.5, 1.0, 0.5, False),
    (0.5, 0.5, 0.0, False),
    (0.5, 0.5000001, 0.0, True),
    (sum([1 / 3] * 3) / 3, 0.4, 0.0, True),
])
def test_improvement_is_strictly_more_than_the_bar_without_float_noise(seed, best, bar, expected):
    from waza_core.optimize.loop import improves

    assert improves(seed, best, bar) is expected
