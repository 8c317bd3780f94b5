"""``waza gate`` and ``waza compare``: waza's verdicts, keys, exit codes and texts."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from tests.reporters.conftest import waza_ci

#: optional: a folder of public results files waza (Go) wrote, never committed (WAZA_RESULTS_CORPUS=DIR)
CORPUS = os.environ.get("WAZA_RESULTS_CORPUS", "")

GATE_KEYS = ["passed", "exit_code", "verdict", "baseline_file", "current_file", "baseline_success_rate",
             "current_success_rate", "regression_pct", "max_regression_pct", "golden_must_pass"]


def results(tasks: list[tuple[str, str, list[str]]], model: str = "m", golden: set[str] = frozenset(),
            version: str | None = "1.5") -> dict:
    """A results document: (task id, name, run statuses) per task, summary as waza computes it."""
    entries = []
    for tid, name, statuses in tasks:
        runs = [{"run_number": i + 1, "status": s, "duration_ms": 10 * (i + 1),
                 "validations": {"g": {"type": "text", "score": 1.0 if s == "passed" else 0.0,
                                       "passed": s == "passed", "feedback": "ok" if s == "passed" else "no"}}}
                for i, s in enumerate(statuses)]
        passed = statuses.count("passed")
        status = "error" if "error" in statuses else ("passed" if passed == len(statuses) else "failed")
        entry = {"test_id": tid, "display_name": name, "status": status, "runs": runs,
                 "stats": {"pass_rate": passed / len(statuses), "avg_score": passed / len(statuses)}}
        if tid in golden:
            entry["golden"] = True
        entries.append(entry)
    ok = sum(1 for e in entries if e["status"] == "passed")
    doc = {"eval_name": "demo", "config": {"model_id": model, "runs_per_test": len(tasks[0][2])},
           "summary": {"total_tests": len(entries), "succeeded": ok, "success_rate": ok / len(entries),
                       "aggregate_score": sum(e["stats"]["avg_score"] for e in entries) / len(entries),
                       "duration_ms": 100},
           "tasks": entries}
    if version:
        doc["schemaVersion"] = version
    return doc


def dump(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


GOOD = [("a", "Task A", ["passed", "passed"]), ("b", "Task B", ["passed", "passed"]),
        ("c", "Task C", ["passed", "passed"]), ("d", "Task D", ["failed", "failed"])]
WORSE = [("a", "Task A", ["passed", "passed"]), ("b", "Task B", ["failed", "failed"]),
         ("c", "Task C", ["passed", "passed"]), ("d", "Task D", ["failed", "failed"])]


def gate(tmp_path, base, cur, *args):
    proc = waza_ci("gate", "--baseline", dump(tmp_path, "b.json", base), "--current",
                   dump(tmp_path, "c.json", cur), *args)
    return proc


def test_a_regression_fails_with_exit_1_and_the_reverse_passes(tmp_path):
    proc = gate(tmp_path, results(GOOD), results(WORSE), "--format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert list(report)[:10] == GATE_KEYS
    assert report["passed"] is False and report["verdict"] == "fail" and report["exit_code"] == 1
    assert report["regression_pct"] == pytest.approx(25.0) and report["regression_pct"] > 0
    assert report["failures"] == [{"kind": "regression", "severity": "error", "message":
                                   "aggregate pass rate regressed by 25.00 percentage points, exceeding 0.00"}]
    assert report["baseline_task_count"] == 4 and report["new_task_policy"] == "allow"
    assert report["removed_task_policy"] == "warn" and report["baseline_model"] == "m"
    assert report["baseline_runs_per_test"] == 2
    assert report["baseline_aggregate_score"] == 0.75 and report["current_aggregate_score"] == 0.5
    assert "golden_failures" not in report and "warnings" not in report and "significance" not in report
    assert b"gate failed: 1 failure(s)" in proc.stderr

    proc = gate(tmp_path, results(WORSE), results(GOOD), "--format", "json")
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["passed"] is True and report["verdict"] == "pass" and report["regression_pct"] == 0.0


def test_max_regression_pct_tolerates_a_drop_and_float_noise(tmp_path):
    assert gate(tmp_path, results(GOOD), results(WORSE), "--max-regression-pct", "25").returncode == 0
    assert gate(tmp_path, results(GOOD), results(WORSE), "--max-regression-pct", "24.99").returncode == 1
    base, cur = results(GOOD), results(GOOD)
    base["summary"]["success_rate"], cur["summary"]["success_rate"] = 0.7, 0.6  # (0.7-0.6)*100 = 9.999999999999998
    assert gate(tmp_path, base, cur, "--max-regression-pct", "10").returncode == 0
    base["summary"]["success_rate"], cur["summary"]["success_rate"] = 0.3, 0.2  # 9.999999999999998 too
    assert gate(tmp_path, base, cur, "--max-regression-pct", "10").returncode == 0


def test_human_output_matches_waza(tmp_path):
    proc = gate(tmp_path, results(GOOD), results(WORSE[:3] + [("e", "Task E", ["passed", "passed"])]),
                "--on-removed-tasks", "WARN")
    assert proc.returncode == 0  # 75% -> 75%
    assert proc.stdout.decode() == (
        "Waza gate: PASS\n\n"
        "Baseline: 75.0% pass rate (4 tasks, model: m)\n"
        "Current:  75.0% pass rate (4 tasks, model: m)\n"
        "Regression: 0.00 percentage points (max allowed 0.00)\n"
        "Golden tasks: 0 failure(s)\n"
        "Task changes: 1 new, 1 removed\n\n"
        "Regressed tasks (1):\n"  # ours, not waza's: the gate names the task that got worse
        "- b (Task B): pass rate 100.0% -> 0.0%, passed -> failed\n\n"
        "Warnings:\n"
        "- task \"Task D\" (d) is present only in baseline results and policy is warn\n")


def test_task_set_policies(tmp_path):
    cur = results(GOOD[:3] + [("e", "Task E", ["passed", "passed"])])
    proc = gate(tmp_path, results(GOOD), cur, "--on-new-tasks", "fail", "--on-removed-tasks", "allow", "-f", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["verdict"] == "fail"
    assert report["new_tasks"] == [{"task_id": "e", "display_name": "Task E", "status": "passed", "pass_rate": 1.0}]
    assert report["removed_tasks"][0]["task_id"] == "d" and "warnings" not in report
    assert report["failures"] == [{"kind": "new_task", "severity": "error", "task_id": "e", "task_name": "Task E",
                                   "message": "task \"Task E\" (e) is present only in current results and policy "
                                              "is fail"}]


def test_golden_failures_exit_2_and_take_precedence(tmp_path):
    base = results(GOOD, golden={"b"})
    proc = gate(tmp_path, base, results(WORSE), "-f", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 2 and report["verdict"] == "golden-failure" and report["exit_code"] == 2
    # docs, not code: golden in EITHER file (here only the baseline marks it)
    assert report["golden_failures"] == [{"task_id": "b", "display_name": "Task B", "golden": True,
                                          "status": "failed", "pass_rate": 0.0}]
    assert [f["kind"] for f in report["failures"]] == ["regression", "golden_failure"]
    assert report["failures"][1]["message"] == 'golden task "Task B" (b) did not pass; status=failed'
    assert b"gate failed: 1 golden task(s) failed" in proc.stderr
    # docs: on by default; off with waza's spellings
    for off in (["--golden-must-pass=false"], ["--no-golden-must-pass"]):
        proc = gate(tmp_path, base, results(WORSE), "-f", "json", *off)
        assert proc.returncode == 1 and json.loads(proc.stdout)["golden_must_pass"] is False


def test_a_golden_task_missing_from_current_is_a_golden_failure(tmp_path):
    proc = gate(tmp_path, results(GOOD, golden={"d"}), results(GOOD[:3]), "-f", "json", "--max-regression-pct",
                "100")
    report = json.loads(proc.stdout)
    assert proc.returncode == 2
    assert report["golden_failures"][0]["status"] == "n/a"
    assert "is missing from the current results" in report["failures"][-1]["message"]


def test_markdown_and_github_actions_formats(tmp_path, monkeypatch):
    cur = results([("a", "Task A", ["passed"]), ("b\n::error::pwn", "Evil: 50%, \"x\" | @team", ["failed"])])
    base = results([("a", "Task A", ["passed"]), ("c", "Task C", ["passed"])])
    proc = gate(tmp_path, base, cur, "-f", "markdown", "--on-new-tasks", "warn")
    md = proc.stdout.decode()
    assert proc.returncode == 1 and md.startswith("## Waza gate: FAIL\n\n| Metric | Baseline | Current |")
    assert "| Pass rate | 100.0% | 50.0% |" in md and "| Aggregate score | 1.0000 | 0.5000 |" in md
    assert "### Failures" in md and "### Warnings" in md and "@\u200bteam" in md and "\\|" in md
    summary = tmp_path / "summary.md"
    proc = waza_ci("gate", "--baseline", str(tmp_path / "b.json"), "--current", str(tmp_path / "c.json"),
                   "-f", "github-actions", "--on-new-tasks", "warn", env={"GITHUB_STEP_SUMMARY": str(summary)})
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1
    assert lines[0] == ("::warning title=Waza gate::task \"Evil: 50%25, \\\"x\\\" | @team\" (b%0A::error::pwn) "
                        "is present only in current results and policy is warn")
    assert lines[-1].startswith("::error title=Waza gate::aggregate pass rate regressed by 50.00")
    assert all(line.startswith("::") for line in lines)  # the newline in a name cannot start a new command
    assert summary.read_text("utf-8").startswith("## Waza gate: FAIL")


@pytest.mark.parametrize("args, message", [
    (["--current", "c.json"], "--baseline is required"),
    (["--baseline", "  ", "--current", "c.json"], "--baseline is required"),
    (["--baseline", "b.json", "--current", "c.json", "--max-regression-pct", "-1"], "must be >= 0"),
    (["--baseline", "b.json", "--current", "c.json", "--on-new-tasks", "maybe"], "unsupported policy 'maybe'"),
    (["--baseline", "b.json", "--current", "c.json", "-f", "xml"], "unsupported format 'xml'"),
    (["--baseline", "b.json", "--current", "c.json", "stray"], "unexpected positional arguments: stray"),
    (["--baseline", "missing.json", "--current", "c.json"], "failed to load baseline missing.json"),
    (["--baseline", "b.json", "--current", "c.json", "--bogus"], "No such option"),
    (["--baseline", "b.json", "--current", "c.json", "--significance", "2"], "between 0 and 1"),
])
def test_config_errors_exit_3(tmp_path, args, message):
    dump(tmp_path, "b.json", results(GOOD))
    dump(tmp_path, "c.json", results(GOOD))
    proc = waza_ci("gate", *args, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr.decode()
    assert message in proc.stderr.decode() and b"Traceback" not in proc.stderr


def test_unreadable_files_exit_3(tmp_path):
    for text in ("{not json", "[]", '{"tasks": "x"}', '{"schemaVersion": "3.1", "tasks": []}'):
        (tmp_path / "b.json").write_text(text)
        dump(tmp_path, "c.json", results(GOOD))
        proc = waza_ci("gate", "--baseline", "b.json", "--current", "c.json", cwd=tmp_path)
        assert proc.returncode == 3 and b"failed to load baseline" in proc.stderr, text


def test_significance_keeps_a_noisy_drop_as_a_warning(tmp_path):
    flaky_base = [(t, t.upper(), ["passed", "passed", "failed"]) for t in "abcd"]
    flaky_cur = [(t, t.upper(), ["passed", "failed", "passed"]) for t in "abc"] + [("d", "D", ["failed"] * 3)]
    base = results([(t, n, ["passed"] * 3) for t, n, _ in flaky_base[:2]] + flaky_base[2:])
    cur = results(flaky_cur)
    proc = gate(tmp_path, base, cur, "-f", "json", "--significance", "0.05")
    report = json.loads(proc.stdout)
    sig = report["significance"]
    assert list(report)[-1] == "significance"
    assert sig["test"] == "paired_sign_flip_permutation" and sig["significant"] is False
    assert (sig["baseline_runs_passed"], sig["baseline_runs"], sig["current_runs_passed"]) == (10, 12, 6)
    # three tasks moved, all down: the exact sign-flip p-value is 2 ** -3
    assert sig["p_value"] == pytest.approx(1 / 8) and sig["tasks_with_evidence"] == 3
    assert proc.returncode == 0 and report["warnings"][0]["kind"] == "regression_not_significant"
    # every one of six tasks collapsing is significant (2 ** -6) and fails
    bad = results([(t, t.upper(), ["failed"] * 3) for t in "abcdef"])
    good = results([(t, t.upper(), ["passed"] * 3) for t in "abcdef"])
    proc = gate(tmp_path, good, bad, "-f", "json", "--significance", "0.05")
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["significance"]["significant"] is True
    assert report["significance"]["p_value"] == pytest.approx(1 / 64)
    # four tasks can never show a regression at 0.05 (2 ** -4 > 0.05), however many trials they ran
    proc = gate(tmp_path, results([(t, t.upper(), ["passed"] * 9) for t in "abcd"]),
                results([(t, t.upper(), ["failed"] * 9) for t in "abcd"]), "-f", "json", "--significance", "0.05")
    assert proc.returncode == 0 and json.loads(proc.stdout)["significance"]["p_value"] == pytest.approx(1 / 16)


def test_significance_p_value_is_scipys_sign_flip_permutation_test():
    import numpy as np
    from scipy.stats import permutation_test

    from waza_core.results.gate import significance
    from waza_core.results.reading import normalize

    rates_b = [5, 4, 3, 5, 2, 4, 5, 1, 3, 5, 4, 2, 5, 3, 4, 5]
    rates_c = [2, 4, 1, 5, 3, 1, 4, 0, 3, 2, 4, 1, 2, 3, 5, 1]
    def doc(rates: list[int], name: str) -> dict:
        return normalize(results([(f"t{i}", "T", ["passed"] * k + ["failed"] * (5 - k)) for i, k in enumerate(rates)]),
                         name)

    base, cur = doc(rates_b, "b"), doc(rates_c, "c")
    sig = significance(base, cur, 0.1)
    diffs = np.array([(c - b) / 5 for b, c in zip(rates_b, rates_c, strict=True) if c != b])
    want = permutation_test((diffs,), lambda x, axis=-1: np.mean(x, axis=axis), permutation_type="samples",
                            alternative="less", vectorized=True, n_resamples=9999,
                            random_state=np.random.default_rng(sig["seed"])).pvalue
    assert sig["p_value"] == pytest.approx(want) and sig["exact"] is (2 ** len(diffs) <= 9999)
    assert sig["tasks_compared"] == 16 and sig["tasks_with_evidence"] == len(diffs)
    assert sig["mean_task_delta"] == pytest.approx(sum(rates_c) / 80 - sum(rates_b) / 80)
    assert sig["ci_low"] < sig["mean_task_delta"] < sig["ci_high"]
    assert significance(base, cur, 0.1) == sig  # seeded: the same files give the same verdict


# -- compare -------------------------------------------------------------------------

def test_compare_json_has_wazas_keys_and_deltas(tmp_path):
    a = results(GOOD, model="m1")
    b = results(WORSE[:3] + [("e", "Task E", ["passed", "passed"])], model="m2")
    b["tasks"][0]["runs"][0]["usage"] = {"input_tokens": 100, "output_tokens": 50}
    a["tasks"][0]["runs"][0]["session_digest"] = {"tokens_in": 40, "tokens_out": 10}  # waza 1.0 spelling
    proc = waza_ci("compare", dump(tmp_path, "a.json", a), dump(tmp_path, "b.json", b), "--format", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    r = json.loads(proc.stdout)
    for key in ("files", "models", "aggregate_scores", "success_rates", "aggregate_score_delta",
                "success_rate_delta", "task_deltas", "total_tests", "durations_ms", "duration_delta_ms",
                "tool_metrics"):
        assert key in r, key
    assert r["models"] == ["m1", "m2"] and r["success_rate_delta"] == 0.0 and r["success_rates"] == [0.75, 0.75]
    deltas = {t["task_id"]: t for t in r["task_deltas"]}
    assert deltas["b"]["score_delta"] == -1.0 and deltas["b"]["pass_rate_delta"] == -1.0
    assert deltas["b"]["statuses"] == ["passed", "failed"]
    assert deltas["d"]["scores"] == [0.0, None] and deltas["d"]["statuses"] == ["failed", "n/a"]
    assert deltas["d"]["score_delta"] is None and deltas["e"]["scores"] == [None, 1.0]
    assert deltas["a"]["tokens"] == [50, 150] and deltas["a"]["token_delta"] == 100
    assert deltas["a"]["durations_ms"] == [15, 15] and r["tokens"] == [50, 150]
    assert [t["task_id"] for t in r["task_deltas"]] == ["a", "b", "c", "d", "e"]


def test_compare_tool_use_section_only_with_tool_data(tmp_path):
    a, b = results(GOOD), results(GOOD)
    plain = waza_ci("compare", dump(tmp_path, "a.json", a), dump(tmp_path, "b.json", b))
    assert plain.returncode == 0 and b"TOOL USE" not in plain.stdout and b"PER-TASK DELTAS" in plain.stdout
    b["tasks"][0]["runs"][0]["tool_events"] = [{"tool_name": "x", "success": True},
                                               {"tool_name": "y", "success": False}]
    b["tasks"][1]["runs"][0]["validations"]["t"] = {"type": "tool_calls", "passed": True, "score": 1}
    b["tasks"][1]["runs"][0]["tool_events"] = [{"tool_name": "x", "success": True}] * 3
    proc = waza_ci("compare", dump(tmp_path, "a.json", a), dump(tmp_path, "b.json", b), "-f", "json")
    tm = json.loads(proc.stdout)["tool_metrics"][1]
    assert tm == {"total_calls": 5, "tasks_with_tools": 2, "avg_calls_per_task": 1.25, "success_rate": 0.8,
                  "selection_accuracy": 1.0, "call_count_histogram": {"0": 2, "1": 0, "2": 1, "3+": 1}}
    table = waza_ci("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert b"TOOL USE" in table.stdout and b"Tasks w/ 3+ calls" in table.stdout
    md = waza_ci("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-f", "markdown")
    assert md.stdout.decode().startswith("## waza compare") and b"### Tool use" in md.stdout


def test_compare_bad_input(tmp_path):
    a = dump(tmp_path, "a.json", results(GOOD))
    assert waza_ci("compare", a).returncode == 2
    proc = waza_ci("compare", a, a, "-f", "yaml")
    assert proc.returncode == 2 and b"must be table, json or markdown" in proc.stderr
    proc = waza_ci("compare", a, str(tmp_path / "none.json"))
    assert proc.returncode == 2 and b"none.json" in proc.stderr and b"Traceback" not in proc.stderr


# -- every results file waza wrote -------------------------------------------------------

def _versions(tmp_path) -> list[str]:
    """One file per schema version waza wrote: none, 1.0 ... 1.5, hand-made sparse ones too."""
    out = []
    for version in (None, "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.99"):
        doc = results(GOOD, version=version)
        out.append(dump(tmp_path, f"v{version}.json", doc))
    sparse = {"schemaVersion": "1.4", "eval_id": "x", "config": {"model_id": "m"},
              "tasks": [{"test_id": "t", "status": "passed", "runs": [{"run_number": 1, "status": "passed",
                                                                       "final_output": "ok"}]}]}
    out.append(dump(tmp_path, "sparse.json", sparse))
    if CORPUS and Path(CORPUS).is_dir():
        out += sorted(str(p) for p in Path(CORPUS).glob("*.json"))
    return out


def test_gate_compare_and_report_read_every_waza_results_version(tmp_path):
    files = _versions(tmp_path)
    for path in files:
        proc = waza_ci("gate", "--baseline", path, "--current", path, "-f", "json", "--no-golden-must-pass")
        assert proc.returncode == 0, (path, proc.stderr.decode())
        proc = waza_ci("report", path, "--junit", str(tmp_path / "r.xml"), "--markdown", str(tmp_path / "r.md"),
                       "--html", str(tmp_path / "r.html"))
        assert proc.returncode == 0, (path, proc.stderr.decode())
    proc = waza_ci("compare", *files, "-f", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(json.loads(proc.stdout)["files"]) == len(files)


def test_a_missing_summary_is_computed_from_the_tasks():
    from waza_core.results.reading import normalize

    doc = copy.deepcopy(results(GOOD))
    del doc["summary"]
    doc = normalize(doc, "x")
    assert doc["summary"]["success_rate"] == 0.75 and doc["summary"]["total_tests"] == 4


# -- hostile files --------------------------------------------------------------------------

HOSTILE_NAME = "evil \ud800 \x1b[2J\x1b[31mred \u202e \x07 | *b* <i>"


def _hostile_pair(tmp_path) -> tuple[str, str]:
    """A baseline and a current file whose names hold a lone surrogate, terminal escape
    sequences, a bidirectional override and markdown, and whose status is not one of waza's."""
    base = results([("a", HOSTILE_NAME, ["passed"]), ("b", "Task B", ["passed"])], golden={"a"})
    cur = results([("a", HOSTILE_NAME, ["failed"]), ("b", "Task B", ["passed"])], golden={"a"})
    cur["tasks"][1]["status"] = "weird | <b>status</b>"
    return dump(tmp_path, "b.json", base), dump(tmp_path, "c.json", cur)


@pytest.mark.parametrize("command, fmt", [("gate", f) for f in ("human", "json", "markdown", "github-actions")]
                         + [("compare", f) for f in ("table", "json", "markdown")])
def test_hostile_names_are_printed_safely_in_every_format(tmp_path, command, fmt):
    base, cur = _hostile_pair(tmp_path)
    args = ["--baseline", base, "--current", cur] if command == "gate" else [base, cur]
    proc = waza_ci(command, *args, "-f", fmt)
    assert proc.returncode == (2 if command == "gate" else 0), proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    out = proc.stdout.decode("utf-8")  # valid UTF-8 even though a name is not
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    if fmt == "json":
        report = json.loads(out)
        names = [t["display_name"] for t in report.get("golden_failures", report.get("task_deltas", []))]
        assert HOSTILE_NAME in names  # the escapes keep the name exactly
    elif fmt == "markdown":
        assert "<b>" not in out and "<i>" not in out and "weird | " not in out
        assert "weird \\| &lt;b&gt;status&lt;/b&gt;" in out or command == "gate"
    else:
        assert "\\x1b[2J" in out or "\\u001b[2J" in out  # shown, not sent to the terminal


def test_nan_and_infinity_in_a_file_are_treated_as_missing(tmp_path):
    """Python's JSON reader takes NaN, Infinity and 1e999; a success rate of NaN must not
    pass the gate by comparing false, and no report may print NaN (not JSON)."""
    base = results(GOOD)
    cur = results(WORSE)
    text = json.dumps(cur).replace('"success_rate": 0.5', '"success_rate": NaN')
    text = text.replace('"avg_score": 0.0', '"avg_score": 1e999')
    assert "NaN" in text and "1e999" in text
    (tmp_path / "c.json").write_text(text)
    proc = waza_ci("gate", "--baseline", dump(tmp_path, "b.json", base), "--current", str(tmp_path / "c.json"),
                   "-f", "json")
    assert proc.returncode == 1, proc.stderr.decode()

    def refuse(name):
        raise AssertionError(f"{name} in the output")

    report = json.loads(proc.stdout, parse_constant=refuse)
    assert report["current_success_rate"] == 0.5 and report["regression_pct"] == pytest.approx(25.0)
    proc = waza_ci("compare", str(tmp_path / "b.json"), str(tmp_path / "c.json"), "-f", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    deltas = {t["task_id"]: t for t in json.loads(proc.stdout, parse_constant=refuse)["task_deltas"]}
    assert deltas["d"]["scores"] == [0.0, 0.0]  # 1e999: no stats score; the runs' mean instead


@pytest.mark.parametrize("text, message", [
    ('{"tasks": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
    ('{"tasks": [{"test_id": "t", "runs": [{"duration_ms": 1' + "0" * 5000 + "}]}]}", "is not valid JSON"),
    ("", "is not valid JSON"),
    ('{"tasks": []}'.encode("utf-16").decode("latin-1"), "is not"),
])
def test_malformed_files_are_one_line_errors_everywhere(tmp_path, text, message):
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="latin-1")
    good = dump(tmp_path, "good.json", results(GOOD))
    for argv, code in ((["gate", "--baseline", good, "--current", str(bad)], 3), (["compare", good, str(bad)], 2),
                       (["report", str(bad), "--html", str(tmp_path / "r.html")], 2)):
        proc = waza_ci(*argv)
        assert proc.returncode == code and b"Traceback" not in proc.stderr, (argv, proc.stderr.decode())
        assert message in proc.stderr.decode(), (argv, proc.stderr.decode())


def test_a_results_path_that_is_a_folder_or_a_fifo(tmp_path):
    good = dump(tmp_path, "good.json", results(GOOD))
    folder = tmp_path / "folder.json"
    folder.mkdir()
    proc = waza_ci("gate", "--baseline", good, "--current", str(folder))
    assert proc.returncode == 3 and b"it is a folder" in proc.stderr
    proc = waza_ci("compare", good, str(folder))
    assert proc.returncode == 2 and b"it is a folder" in proc.stderr
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    import subprocess
    import sys

    # a FIFO is read to its end, like `waza compare a.json <(gunzip -c b.json.gz)`
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(fifo)!r}, 'w').write(open({good!r}).read())"])
    proc = waza_ci("compare", good, str(fifo), "-f", "json")
    writer.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["success_rate_delta"] == 0.0
