"""The run loop: mock output, workspaces, trials, retries, isolation, stats."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import BASIC_EVAL
from tests.fixture_plugins.test_graders import FlipGrader, WorkspaceSpy
from waza_core.errors import WazaError
from waza_core.plugins import build_plugin_manager
from waza_core.results.codec import decode_results, results_to_json
from waza_core.run.engine import Engine, RunOptions, exit_code
from waza_core.suite.load import load_suite
from waza_core.suite.schema import plain_validator


@pytest.fixture
def reg():
    return build_plugin_manager(["tests.fixture_plugins.test_graders"])[1]


def run(path, reg, **opts):
    outcome = results_to_json(Engine(load_suite(path, reg), reg, RunOptions(**opts)).run())
    errors = list(plain_validator("results").iter_errors(outcome))
    assert not errors, errors[0].message
    return outcome


def test_mock_output_is_deterministic_and_documented(make_suite, reg):
    task = """
    id: t
    name: The task
    description: Does things
    inputs:
      prompt: Explain it
      context: {zeta: 1, alpha: two}
      files:
        - path: a.txt
          content: hello file
        - path: sub/b.txt
          content: ""
      follow_up_prompts: ["And more?"]
    """
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    out = run(path, reg)["tasks"][0]["runs"][0]["final_output"]
    assert out == ("Mock response for: Explain it\nTask: The task\nDescription: Does things\nContext:\n"
                   "  alpha: two\n  zeta: 1\nAnalyzed 2 file(s):\n  - a.txt\n  - sub/b.txt\nhello file\n"
                   "Mock response for: And more?")
    assert run(path, reg)["tasks"][0]["runs"][0]["final_output"] == out


def test_mock_reports_no_usage_and_empty_evidence(make_suite, reg):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: hi}\n"})
    outcome = run(path, reg)
    r = outcome["tasks"][0]["runs"][0]
    assert r["usage"] is None and outcome["summary"]["usage"] is None
    assert r["transcript"] == [] and r["session_digest"]["tool_calls"] == []
    assert r["tool_events"] is None and r["command_invocations"] is None


def test_long_file_preview_is_truncated(make_suite, reg):
    task = "id: t\ninputs:\n  prompt: p\n  files:\n    - path: big.txt\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task}, {"fixtures/big.txt": "x" * 3000})
    out = run(path, reg)["tasks"][0]["runs"][0]["final_output"]
    assert out.endswith("x" * 1024 + "...(truncated)")


def test_each_run_gets_its_own_fresh_workspace_removed_afterwards(make_suite, reg):
    WorkspaceSpy.seen.clear()
    ev = BASIC_EVAL.replace("trials_per_task: 1", "trials_per_task: 3") + \
        "graders:\n  - {type: workspace_spy, name: spy}\n"
    tasks = {f"tasks/t{i}.yaml": f"id: t{i}\ninputs:\n  prompt: p\n  files: [{{path: f{i}.txt, content: x}}]\n"
             for i in range(4)}
    path = make_suite(ev, tasks)
    run(path, reg, parallel=True, workers=4)
    dirs = [d for _, d, _ in WorkspaceSpy.seen]
    assert len(dirs) == 12 and len(set(dirs)) == 12
    for tid, _, listing in WorkspaceSpy.seen:
        assert listing == [f"f{tid[1:]}.txt"]  # only its own files: no other run's
    assert not any(os.path.exists(d) for d in dirs)


def test_keep_workspaces(make_suite, reg):
    WorkspaceSpy.seen.clear()
    path = make_suite(BASIC_EVAL + "graders:\n  - {type: workspace_spy, name: spy}\n",
                      {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    outcome = run(path, reg, keep_workspaces=True)
    ws = outcome["tasks"][0]["runs"][0]["workspace_dir"]
    assert ws and os.path.isdir(ws)
    os.rmdir(ws)


def test_context_fixture_directory_is_copied(make_suite, reg):
    WorkspaceSpy.seen.clear()
    task = "id: t\ninputs:\n  prompt: p\n  context: {fixture: repo}\n"
    path = make_suite(BASIC_EVAL + "graders:\n  - {type: workspace_spy, name: spy}\n", {"tasks/t.yaml": task},
                      {"fixtures/repo/README.md": "# hi", "fixtures/repo/src/a.py": "x = 1"})
    run(path, reg)
    assert WorkspaceSpy.seen[0][2] == ["README.md", "src"]


def test_missing_fixture_file_is_a_config_error_before_any_run(make_suite, reg):
    task = "id: t\ninputs:\n  prompt: p\n  files: [{path: nope.txt}]\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    with pytest.raises(WazaError, match=r"task 't'.*cannot read input file .*nope.txt"):
        Engine(load_suite(path, reg), reg, RunOptions())


@pytest.mark.parametrize("make_bad,reason", [
    (lambda d: (d / "bad").mkdir(), "Is a directory"),
    (lambda d: (d / "bad").write_bytes(b"\xff\xfe binary"), "invalid start byte"),
])
def test_unreadable_fixture_file(make_suite, reg, make_bad, reason):
    task = "id: t\ninputs:\n  prompt: p\n  files: [{path: bad}]\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task}, {"fixtures/keep.txt": ""})
    make_bad(path.parent / "fixtures")
    with pytest.raises(WazaError, match=reason):
        Engine(load_suite(path, reg), reg, RunOptions())


def test_input_path_escaping_the_fixtures_dir(make_suite, reg):
    task = "id: t\ninputs:\n  prompt: p\n  files: [{path: ../eval.yaml}]\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    with pytest.raises(WazaError, match="must be relative, without '..'"):
        Engine(load_suite(path, reg), reg, RunOptions())


def test_context_dir_option_changes_the_fixtures(make_suite, reg, tmp_path):
    task = "id: t\ninputs:\n  prompt: p\n  files: [{path: a.txt}]\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task}, {"fixtures/a.txt": "default"})
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("overridden")
    out = run(path, reg, context_dir=other)["tasks"][0]["runs"][0]["final_output"]
    assert out.endswith("overridden")


def test_grader_exception_makes_that_run_error_and_the_others_go_on(make_suite, reg):
    ev = BASIC_EVAL + ("graders:\n  - {type: boom, name: buggy}\n"
                       "  - {type: text, name: ok, config: {contains: [mock]}}\n")
    path = make_suite(ev, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n",
                           "tasks/b.yaml": "id: b\ninputs: {prompt: p}\n"})
    outcome = run(path, reg)
    for task in outcome["tasks"]:
        r = task["runs"][0]
        assert r["status"] == "error" and task["status"] == "error"
        assert "kaboom from a buggy grader" in r["error_msg"]
        assert r["validations"]["buggy"]["error"]["kind"] == "exception"
        assert r["validations"]["ok"]["passed"] is True
    assert outcome["summary"]["errors"] == 2 and exit_code(decode_results(outcome)) == 1


def test_text_grader_scores_and_messages(make_suite, reg):
    g = """graders:
  - type: text
    name: g
    config:
      contains: [MOCK, absent]
      not_contains: [response]
      contains_cs: [Mock]
      not_contains_cs: [MOCK]
      regex_match: ['(?i)^mock', 'z{3}']
      regex_not_match: ['\\d{5}']
"""
    path = make_suite(BASIC_EVAL + g, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    v = run(path, reg)["tasks"][0]["runs"][0]["validations"]["g"]
    assert v["score"] == pytest.approx(5 / 8)
    assert v["passed"] is False
    assert v["feedback"] == ("Missing expected substring: absent; Found forbidden substring: response; "
                             "Missing expected pattern: z{3}")


def test_expectations_score_like_waza(make_suite, reg):
    task = """
    id: t
    inputs: {prompt: alpha}
    expected:
      output_contains: [ALPHA, beta]
      output_not_contains: [gamma]
      output_contains_any: [nope, mock]
    """
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task})
    v = run(path, reg)["tasks"][0]["runs"][0]["validations"]
    assert v["_output_contains"]["score"] == 0.5 and v["_output_contains"]["type"] == ""
    assert v["_output_contains"]["feedback"] == "Missing expected substring: beta"
    assert v["_output_not_contains"]["passed"] is True
    assert v["_output_contains_any"]["score"] == 1.0


def test_trials_and_stats(make_suite, reg):
    ev = BASIC_EVAL.replace("trials_per_task: 1", "trials_per_task: 4") + \
        "graders:\n  - {type: text, name: g, config: {contains: [mock], regex_match: [nothing]}}\n"
    path = make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    outcome = run(path, reg)
    task = outcome["tasks"][0]
    assert len(task["runs"]) == 4 and [r["run_number"] for r in task["runs"]] == [1, 2, 3, 4]
    s = task["stats"]
    assert s["pass_rate"] == 0 and s["avg_score"] == 0.5 and s["total_runs"] == 4 and not s["flaky"]
    assert s["bootstrap_ci"]["lower"] == pytest.approx(0.5)
    assert outcome["summary"]["aggregate_score"] == 0.5


def test_trials_override_and_model_override(make_suite, reg):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    outcome = run(path, reg, trials=2, model="other-model")
    assert outcome["config"]["runs_per_test"] == 2 and outcome["config"]["model_id"] == "other-model"


def test_max_attempts_retries_only_failed_runs(make_suite, reg):
    FlipGrader.calls.clear()
    ev = BASIC_EVAL.replace("trials_per_task: 1", "trials_per_task: 1\n  max_attempts: 3") + \
        "graders:\n  - {type: flip, name: flip}\n"
    path = make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    r = run(path, reg)["tasks"][0]["runs"][0]
    assert r["attempts"] == 2 and r["status"] == "passed"


def test_fail_fast_stops_after_first_failure(make_suite, reg):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [yes]}}\n"
    tasks = {"tasks/a.yaml": "id: a\ninputs: {prompt: yes}\n", "tasks/b.yaml": "id: b\ninputs: {prompt: no}\n",
             "tasks/c.yaml": "id: c\ninputs: {prompt: yes}\n"}
    outcome = run(make_suite(ev, tasks), reg, fail_fast=True)
    assert [t["test_id"] for t in outcome["tasks"]] == ["a", "b"] and outcome["incomplete"] is True


def test_filters_by_task_glob_and_tags(make_suite, reg):
    tasks = {"tasks/a.yaml": "id: api-1\ntags: [fast]\ninputs: {prompt: p}\n",
             "tasks/b.yaml": "id: api-2\nname: Second\ntags: [slow]\ninputs: {prompt: p}\n",
             "tasks/c.yaml": "id: ui-1\ntags: [fast]\ninputs: {prompt: p}\n"}
    path = make_suite(BASIC_EVAL, tasks)
    ids = lambda o: [t["test_id"] for t in o["tasks"]]  # noqa: E731
    assert ids(run(path, reg, task_globs=["api-*"])) == ["api-1", "api-2"]
    assert ids(run(path, reg, task_globs=["Sec*"])) == ["api-2"]
    assert ids(run(path, reg, tag_globs=["fa*"])) == ["api-1", "ui-1"]
    assert ids(run(path, reg, task_globs=["api-*"], tag_globs=["fast"])) == ["api-1"]
    with pytest.raises(WazaError, match="nothing matches --task zzz"):
        run(path, reg, task_globs=["zzz"])


def test_parallel_keeps_task_order(make_suite, reg):
    tasks = {f"tasks/t{i:02d}.yaml": f"id: t{i:02d}\ninputs: {{prompt: p}}\n" for i in range(12)}
    outcome = run(make_suite(BASIC_EVAL, tasks), reg, parallel=True, workers=3, trials=2)
    assert [t["test_id"] for t in outcome["tasks"]] == [f"t{i:02d}" for i in range(12)]


def test_unknown_executor(make_suite, reg):
    path = make_suite(BASIC_EVAL.replace("executor: mock", "executor: mokc"),
                      {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    with pytest.raises(WazaError, match=r"unknown executor 'mokc' \(did you mean 'mock'\?\)"):
        Engine(load_suite(path, reg), reg, RunOptions())


def test_skip_graders_records_na(make_suite, reg):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [nothing]}}\n"
    outcome = run(make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}), reg, skip_graders=True)
    assert outcome["tasks"][0]["status"] == "n/a" and outcome["summary"]["skipped"] == 1
    assert outcome["tasks"][0]["runs"][0]["validations"] == {} and exit_code(decode_results(outcome)) == 0


def test_zero_graders_pass_like_waza(make_suite, reg):
    outcome = run(make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}), reg)
    assert outcome["tasks"][0]["status"] == "passed"
    assert outcome["tasks"][0]["stats"]["avg_score"] == 0.0


def test_weighted_score(make_suite, reg):
    ev = BASIC_EVAL + ("graders:\n  - {type: text, name: a, weight: 3, config: {contains: [mock]}}\n"
                       "  - {type: text, name: b, config: {contains: [absent]}}\n")
    s = run(make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}), reg)["tasks"][0]["stats"]
    assert s["avg_score"] == 0.5 and s["avg_weighted_score"] == 0.75


def test_task_graders_run_after_global_ones(make_suite, reg):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g1, config: {contains: [mock]}}\n"
    task = "id: t\ninputs: {prompt: p}\ngraders:\n  - {type: text, name: t1, config: {contains: [mock]}}\n"
    v = run(make_suite(ev, {"tasks/t.yaml": task}), reg)["tasks"][0]["runs"][0]["validations"]
    assert list(v) == ["g1", "t1"]
    assert Path  # keep import used


def test_mock_output_with_yaml_dates_in_context(make_suite, reg):
    task = "id: t\ninputs:\n  prompt: p\n  context: {due: 2026-01-02, nested: {when: 2026-01-03}}\n"
    out = run(make_suite(BASIC_EVAL, {"tasks/t.yaml": task}), reg)["tasks"][0]["runs"][0]
    assert out["status"] == "passed"
    assert "  due: 2026-01-02" in out["final_output"] and '{"when": "2026-01-03"}' in out["final_output"]


def test_fail_fast_in_parallel_cancels_what_has_not_started(make_suite, reg):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [yes]}}\n"
    tasks = {"tasks/a.yaml": "id: a\ninputs: {prompt: no}\n"}
    slow = "graders:\n  - {type: sleep, name: slow, config: {seconds: 0.1}}\n"
    tasks.update({f"tasks/z{i:02d}.yaml": f"id: z{i:02d}\ninputs: {{prompt: yes}}\n{slow}" for i in range(40)})
    outcome = run(make_suite(ev, tasks), reg, fail_fast=True, parallel=True, workers=2)
    assert outcome["incomplete"] is True and len(outcome["tasks"]) < 41
    assert outcome["tasks"][0]["test_id"] == "a"


def test_fixture_directory_must_stay_in_the_fixtures_folder(make_suite, reg):
    task = "id: t\ninputs:\n  prompt: p\n  context: {fixture: ../tasks}\n"
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": task}, {"fixtures/x": ""})
    with pytest.raises(WazaError, match="must be relative to the suite's folder .or the fixtures folder., without"):
        Engine(load_suite(path, reg), reg, RunOptions())


def test_required_skills_preflight(make_suite, reg):
    ev = BASIC_EVAL.replace("executor: mock", "executor: mock\n  required_skills: [pdf]\n  skill_directories: [skills]")
    path = make_suite(ev, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}, {"skills/other/SKILL.md": "x"})
    with pytest.raises(WazaError, match="required skill\\(s\\) not found .*: pdf"):
        Engine(load_suite(path, reg), reg, RunOptions())
    (path.parent / "skills" / "pdf").mkdir()
    (path.parent / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\n")
    Engine(load_suite(path, reg), reg, RunOptions())


def test_unknown_executor_names_the_file_or_the_flag(make_suite, reg):
    path = make_suite(BASIC_EVAL, {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"})
    with pytest.raises(WazaError, match=r"^--executor: unknown executor 'nope'"):
        Engine(load_suite(path, reg), reg, RunOptions(executor="nope"))


@pytest.fixture
def made(monkeypatch):
    """Every folder ``tempfile.mkdtemp`` makes during the test, in order."""
    import tempfile

    folders: list[str] = []
    real = tempfile.mkdtemp

    def spy(*a, **k):
        d = real(*a, **k)
        folders.append(d)
        return d

    monkeypatch.setattr(tempfile, "mkdtemp", spy)
    return folders


def test_no_workspace_is_made_when_nobody_could_see_it(make_suite, reg, made):
    ev = BASIC_EVAL + "graders:\n  - {type: text, name: g, config: {contains: [mock]}}\n"
    tasks = {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n",
             "tasks/b.yaml": "id: b\ninputs:\n  prompt: p\n  files: [{path: f.txt, content: x}]\n",
             "tasks/c.yaml": "id: c\ninputs: {prompt: p}\ngraders:\n  - {type: workspace_spy, name: spy}\n"}
    outcome = run(make_suite(ev, tasks), reg)
    assert [t["status"] for t in outcome["tasks"]] == ["passed"] * 3
    ws_made = [d for d in made if "waza-ws-" in d]
    assert len(ws_made) == 2  # b has files, c has a grader that may look; a has neither
    made.clear()
    kept = run(make_suite(ev, tasks), reg, keep_workspaces=True)
    assert len([d for d in made if "waza-ws-" in d]) == 3
    for t in kept["tasks"]:
        shutil.rmtree(t["runs"][0]["workspace_dir"])


def test_a_run_that_cannot_start_in_parallel_stops_the_others_and_leaves_no_workspace(make_suite, reg,
                                                                                     monkeypatch, made):
    import threading

    from waza_core.run import preparers

    def boom(prepared):
        def prepare(setup):
            if setup.task.id == "boom":
                raise WazaError(f"cannot prepare the workspace {setup.workspace_dir} of task 'boom'")
        return prepare

    monkeypatch.setattr(preparers, "PREPARER_FACTORIES", [boom, *preparers.PREPARER_FACTORIES])
    slow = "graders:\n  - {type: sleep, name: slow, config: {seconds: 0.05}}\n"
    tasks = {"tasks/boom.yaml": "id: boom\ninputs:\n  prompt: p\n  files: [{path: f.txt, content: x}]\n"}
    tasks.update({f"tasks/z{i:02d}.yaml": f"id: z{i:02d}\ninputs: {{prompt: p}}\n{slow}" for i in range(30)})
    engine = Engine(load_suite(make_suite(BASIC_EVAL, tasks), reg), reg,
                    RunOptions(parallel=True, workers=3, keep_workspaces=False))
    with pytest.raises(WazaError, match="boom"):
        engine.run()
    assert not [t for t in threading.enumerate() if t.name.startswith("waza-run")]
    assert made and not [d for d in made if os.path.exists(d)]
    assert engine.cancel.is_set() and len(made) < 31  # the runs not started yet were not started


def test_task_stats_spread_and_intervals():
    from waza_core.results import stats

    runs = [_run("passed" if s == 1.0 else "failed", 10, g=s) for s in (1.0, 0.0, 1.0, 1.0)]
    s = stats.task_stats(runs)
    assert s["avg_score"] == 0.75 and s["min_score"] == 0.0 and s["max_score"] == 1.0
    assert s["std_dev_score"] == pytest.approx(0.4330127) and s["score_variance"] == pytest.approx(0.1875)
    assert s["passed_runs"] == 3 and s["failed_runs"] == 1 and s["flaky"] and s["flakiness_percent"] == 25.0
    assert 0 < s["pass_rate_ci"]["lower"] < 0.75 < s["pass_rate_ci"]["upper"] <= 1.0
    assert s["ci95_lo"] == s["bootstrap_ci"]["lower"] and s["ci95_hi"] == s["bootstrap_ci"]["upper"]
    assert stats.task_stats(runs) == s  # seeded: the same results give the same numbers


def test_saved_evidence_keeps_not_recorded_apart_from_empty():
    from waza_core.model import RunEvidence
    from waza_core.results.codec import decode_run, run_to_json
    from waza_core.results.model import RunResult

    ev = RunEvidence(output="o", transcript=[{"type": "x"}], tool_calls=[{"name": "bash"}], tool_events=[],
                     command_invocations=None, user_input_requests=[], skill_invocations=None,
                     outcome={"k": 1}, duration_ms=5, usage={"input_tokens": 3}, session_id="s")
    saved = json.loads(json.dumps(run_to_json(RunResult.from_evidence(ev, 1, 1, "passed", {}, None, None))))
    assert decode_run(saved).evidence() == ev
    old = decode_run({"final_output": "o"}).evidence()  # a file written before these fields existed
    assert old.tool_events is None and old.host_lifecycle is None and old.command_invocations is None
    assert old.user_input_requests is None and old.usage is None and old.session_id is None


def test_the_flakiness_example_of_the_docs():
    """docs/eval-suites.md: runs passed, failed, passed, failed (scores 1, 0.5) give these stats."""
    from waza_core.results import stats

    runs = [_run(st, 0, a=1.0, b=b) for st, b in (("passed", 1.0), ("failed", 0.0)) * 2]
    assert stats.task_stats(runs) == {
        "pass_rate": 0.5, "avg_score": 0.75, "avg_weighted_score": 0.75, "min_score": 0.5, "max_score": 1.0,
        "std_dev_score": 0.25, "score_variance": 0.0625, "avg_duration_ms": 0, "flaky": True,
        "flakiness_percent": 50.0, "passed_runs": 2, "failed_runs": 2, "error_runs": 0, "total_runs": 4,
        "pass_rate_ci": {"lower": 0.15003898915214947, "upper": 0.8499610108478506, "confidence_level": 0.95},
        "bootstrap_ci": {"lower": 0.5, "upper": 1.0, "mean": 0.75, "confidence_level": 0.95,
                         "num_bootstraps": 10000},
        "ci95_lo": 0.5, "ci95_hi": 1.0,
    }


def test_older_spellings_and_edge_values_of_the_config(make_suite, reg):
    """docs/eval-suites.md: ``max_workers`` stands in for an absent ``workers``; max_attempts 0 counts as 1."""
    tasks = {"tasks/t.yaml": "id: t\ninputs: {prompt: p}\n"}
    ev = BASIC_EVAL.replace("executor: mock", "executor: mock\n  parallel: true\n  max_workers: 3\n  max_attempts: 0")
    outcome = run(make_suite(ev, tasks), reg)
    assert outcome["config"]["workers"] == 3 and outcome["config"]["max_attempts"] == 1
    assert outcome["tasks"][0]["runs"][0]["attempts"] == 1


def _run(status: str, duration_ms: int, **scores: float):
    """A run with one grader result per keyword (name=score, weight 1)."""
    from waza_core.model import GraderResult
    from waza_core.results.model import RunResult

    return RunResult(run_number=1, attempts=1, status=status, duration_ms=duration_ms,
                     validations={n: GraderResult(identifier=n, type="t", score=v, passed=v == 1.0)
                                  for n, v in scores.items()})


# -- the per-run seam: run preparers --------------------------------------------------------------------------


def test_run_preparers_extend_the_request_add_evidence_and_clean_up_after_grading(make_suite, reg, monkeypatch):
    """A feature attaches to every run through PREPARER_FACTORIES, without touching the run loop."""
    from waza_core.run import preparers

    events = []

    def feature(prepared):
        if prepared.suite.name != "basic":
            return None

        def prepare(setup):
            setup.environment["MOCK_MODE"] = f"{setup.task.id}-{setup.unit.trial}"
            setup.path_prepend.append("/shims")
            setup.mcp_servers["files"] = {"command": "serve"}
            setup.workdir = "sub"
            setup.collect_evidence(lambda ev: setattr(ev, "command_invocations", [{"argv": ["git"]}]))
            setup.add_cleanup(lambda: events.append(("cleanup 1", setup.task.id)))
            setup.add_cleanup(lambda: events.append(("cleanup 2", setup.task.id)))
        return prepare

    monkeypatch.setattr(preparers, "PREPARER_FACTORIES", [*preparers.PREPARER_FACTORIES, feature])

    class Recorder(FlipGrader):  # records the order: grading happens before the cleanups
        def grade(self, ctx):
            events.append(("grade", ctx.task.id, ctx.evidence.command_invocations))
            return self.result(1.0, True, "ok")

    from waza_core.plugins import Registration

    monkeypatch.setitem(reg.items["grader"], "flip", Registration(Recorder, "tests"))
    ev = BASIC_EVAL.replace("executor: mock", "executor: request_probe") + \
        "graders:\n  - {type: flip, name: rec}\n"
    outcome = run(make_suite(ev, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"}), reg, trials=2)
    runs = outcome["tasks"][0]["runs"]
    seen = [json.loads(r["final_output"]) for r in runs]
    assert seen[0] == {"environment": {"MOCK_MODE": "a-1"}, "path_prepend": ["/shims"],
                       "mcp_servers": {"files": {"command": "serve"}}, "workdir": "sub"}
    assert seen[1]["environment"] == {"MOCK_MODE": "a-2"}
    assert all(r["command_invocations"] == [{"argv": ["git"]}] for r in runs)
    assert all(r["worker"] == "local" for r in runs)
    assert events == [("grade", "a", [{"argv": ["git"]}]), ("cleanup 2", "a"), ("cleanup 1", "a")] * 2


def test_a_feature_not_used_by_the_suite_adds_no_preparer(make_suite, reg):
    from waza_core.run.engine import Engine

    plain = Engine(load_suite(make_suite(BASIC_EVAL, {"tasks/a.yaml": "id: a\ninputs: {prompt: p}\n"}), reg), reg)
    assert plain.prepared.preparers == []  # no inputs.files, no fixture: not even the inputs preparer
