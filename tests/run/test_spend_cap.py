"""--max-spend: with a cli agent that reports what each run cost, and 4 workers, the money the
agent actually spent (its own ledger) never passes the cap, over many repetitions; the runs held
back are recorded as skipped for budget, the results say so, and waza run exits 1."""

from __future__ import annotations

import json
import random
import sys

import pytest

from tests.conftest import write

# The agent: logs start and end (with its cost) to a ledger, sleeps a little, prints its answer
# with the cost it "spent" in its usage report.
AGENT = r'''
import json, os, random, sys, time
ledger = os.environ["LEDGER"]
cost = float(os.environ["COST"]) if os.environ.get("COST") else None
if os.environ.get("COST_RANGE"):
    lo, hi = map(float, os.environ["COST_RANGE"].split(","))
    cost = round(random.uniform(lo, hi), 4)
def log(line):
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, (json.dumps(line) + "\n").encode())
    os.close(fd)
log({"event": "start", "t": time.monotonic()})
time.sleep(random.uniform(0.01, 0.08))
log({"event": "end", "t": time.monotonic(), "cost": cost})
usage = {"input_tokens": 10, "output_tokens": 5}
if cost is not None:
    usage["total_cost_usd"] = cost
print(json.dumps({"result": "mock response for: " + sys.argv[1], "usage": usage}))
'''


def make_suite(tmp_path, tasks: int, env: dict) -> tuple:
    agent = write(tmp_path / "agent.py", AGENT)
    ledger = tmp_path / "ledger.jsonl"
    set_env = {"LEDGER": str(ledger), **env}
    cli = {"command": [sys.executable, str(agent), "{prompt}"], "output": "json", "output_path": "result",
           "usage_path": "usage", "set_env": set_env}
    suite = tmp_path / "s"
    write(suite / "eval.yaml", "name: spend\nskill: s\nconfig:\n  executor: cli\n  trials_per_task: 1\n"
          f"  cli: {json.dumps(cli)}\ntasks: ['tasks/*.yaml']\n")
    for i in range(tasks):
        write(suite / "tasks" / f"t{i:02}.yaml",
              f"id: t{i:02}\ninputs: {{prompt: task {i}}}\ngraders: [{{type: text, name: g, "
              "config: {contains: [mock]}}]\n")
    return suite, ledger


def ledger_of(path) -> tuple[float, int, int]:
    """(total cost the agent spent, runs, most runs at once)."""
    events = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    total = sum(e["cost"] or 0 for e in events if e["event"] == "end")
    marks = sorted((e["t"], 1 if e["event"] == "start" else -1) for e in events)
    now = peak = 0
    for _, step in marks:
        now += step
        peak = max(peak, now)
    return total, sum(1 for e in events if e["event"] == "end"), peak


def _run_outcomes(doc) -> list:
    """(task, status, error) of every run of a results document (None when there is none)."""
    if doc is None:
        return ["no results file"]
    return [(t["test_id"], r["status"], r.get("error_msg")) for t in doc["tasks"] for r in t["runs"]]


def run(waza, suite, *args):
    out = suite / "r.json"
    res = waza("run", "eval.yaml", "-q", "--workers", "4", "-o", str(out), *args, cwd=suite, timeout=300)
    doc = json.loads(out.read_text()) if out.exists() else None
    return res, doc


@pytest.mark.parametrize("seed", range(6))
def test_total_never_passes_the_cap_with_a_known_worst_case(waza, tmp_path, seed):
    rnd = random.Random(seed)
    cost = rnd.choice([0.1, 0.25, 0.3])
    cap = round(rnd.uniform(0.5, 2.5), 2)
    suite, ledger = make_suite(tmp_path, 16, {"COST": str(cost)})
    res, doc = run(waza, suite, "--max-spend", str(cap), "--max-run-cost", str(cost))
    total, runs, _ = ledger_of(ledger)
    assert total <= cap + 1e-9, (total, cap)
    fits = int(cap / cost + 1e-9)
    # the cap is used to the last run (on failure: what waza said of each run, to tell a run held
    # back from one whose agent never finished)
    assert runs == min(16, fits), (res.stderr, _run_outcomes(doc))
    spend = doc["spend"]
    assert spend["runs_skipped"] == 16 - runs and spend["spent_usd"] == pytest.approx(total)
    assert spend["max_spend"] == cap and spend["worst_case_source"] == "max_run_cost"
    skipped = [r for t in doc["tasks"] for r in t["runs"] if r.get("skipped_for_budget")]
    assert len(skipped) == 16 - runs and all(r["status"] == "n/a" for r in skipped)
    assert all(r["error_msg"].startswith("skipped for budget: --max-spend") for r in skipped)
    assert res.returncode == (1 if runs < 16 else 0), res.stderr
    assert doc["incomplete"] is (runs < 16)
    assert doc["summary"]["usage"]["cost_usd"] == (pytest.approx(total) if runs == 16 else None)


@pytest.mark.parametrize("seed", range(4))
def test_varying_costs_stay_under_the_cap(waza, tmp_path, seed):
    suite, ledger = make_suite(tmp_path, 20, {"COST_RANGE": "0.05,0.2"})
    cap = [0.6, 1.0, 1.5, 3.0][seed]
    res, doc = run(waza, suite, "--max-spend", str(cap), "--max-run-cost", "0.2")
    total, runs, peak = ledger_of(ledger)
    assert total <= cap + 1e-9 and res.returncode in (0, 1)
    assert doc["spend"]["spent_usd"] == pytest.approx(total)
    if cap >= 1.0:
        assert peak > 1  # four workers really ran side by side while the budget allowed it


def test_without_a_worst_case_the_dearest_run_so_far_is_the_bound(waza, tmp_path):
    suite, ledger = make_suite(tmp_path, 12, {"COST": "0.3"})
    res, doc = run(waza, suite, "--max-spend", "1.0")
    total, runs, _ = ledger_of(ledger)
    assert total <= 1.0 and runs == 3 and res.returncode == 1
    assert doc["spend"]["worst_case_source"] == "largest_seen" and doc["spend"]["max_run_cost"] is None


def test_an_unknown_cost_stops_the_run_unless_a_worst_case_is_given(waza, tmp_path):
    suite, ledger = make_suite(tmp_path, 6, {})
    res, doc = run(waza, suite, "--max-spend", "1.0")
    assert ledger_of(ledger)[1] == 1 and res.returncode == 1  # one run, then the cap could not be checked
    assert doc["spend"]["unknown_cost_runs"] == 1 and "cost is unknown" in doc["spend"]["reason"]
    assert doc["tasks"][0]["runs"][0]["usage"].get("cost_usd") is None
    ledger.unlink()
    res, doc = run(waza, suite, "--max-spend", "1.0", "--max-run-cost", "0.4")
    assert ledger_of(ledger)[1] == 2 and doc["spend"]["charged_usd"] == pytest.approx(0.8)


def test_cost_is_recorded_with_its_source_and_no_cap_changes_nothing(waza, tmp_path):
    suite, ledger = make_suite(tmp_path, 3, {"COST": "0.125"})
    res, doc = run(waza, suite)
    assert res.returncode == 0 and "spend" not in doc
    usage = doc["tasks"][0]["runs"][0]["usage"]
    assert usage["cost_usd"] == 0.125 and usage["cost_source"] == "agent"
    assert doc["summary"]["usage"]["cost_usd"] == pytest.approx(0.375)
    assert doc["summary"]["usage"]["cost_source"] == "agent"


def test_waza_yaml_default_cap(waza, tmp_path):
    suite, ledger = make_suite(tmp_path, 5, {"COST": "0.5"})
    write(suite / ".waza.yaml", "defaults:\n  maxSpend: 1.0\n  maxRunCost: 0.5\n")
    res, doc = run(waza, suite)
    assert ledger_of(ledger)[0] <= 1.0 and doc["spend"]["runs_skipped"] == 3 and res.returncode == 1
    write(suite / ".waza.yaml", "defaults:\n  maxSpend: lots\n")
    res, _ = run(waza, suite)
    assert res.returncode == 2 and b"defaults.maxSpend must be a number" in res.stderr


def test_results_with_a_spend_account_are_schema_valid(waza, tmp_path):
    from waza_core.suite.schema import plain_validator

    suite, _ = make_suite(tmp_path, 4, {"COST": "0.5"})
    _, doc = run(waza, suite, "--max-spend", "1.0", "--max-run-cost", "0.5")
    assert doc["spend"]["runs_skipped"] == 2
    assert [e.message for e in plain_validator("results").iter_errors(doc)] == []


def test_example_folder_behaves_as_its_readme_says(waza, tmp_path):
    import shutil

    from tests.conftest import REPO

    folder = tmp_path / "spend-cap"
    shutil.copytree(REPO / "examples" / "spend-cap", folder)
    out = []
    for args in ((), ("--max-spend", "1", "--workers", "4"),
                 ("--max-spend", "1", "--max-run-cost", "0.3", "--workers", "4")):
        res = waza("run", "eval.yaml", "-q", "-o", "r.json", *args, cwd=folder)
        doc = json.loads((folder / "r.json").read_text())
        ran = sum(1 for t in doc["tasks"] for r in t["runs"] if r["status"] == "passed")
        out.append((res.returncode, ran))
    assert out == [(0, 6), (1, 4), (1, 3)]


def test_runs_taken_from_a_journal_count_against_the_cap(waza, tmp_path):
    suite, ledger = make_suite(tmp_path, 6, {"COST": "0.25"})
    journal = tmp_path / "j.jsonl"
    res, _ = run(waza, suite, "--journal", str(journal), "--task", "t0[0-3]")
    assert res.returncode == 0 and ledger_of(ledger)[1] == 4  # 1.00 spent in the first session
    res, doc = run(waza, suite, "--resume", str(journal), "--max-spend", "1.25", "--max-run-cost", "0.25")
    total, runs, _ = ledger_of(ledger)
    assert runs == 5 and total <= 1.25 + 1e-9  # one more run fitted; the journal's 1.00 was counted
    assert doc["spend"]["spent_usd"] == pytest.approx(1.25) and doc["spend"]["runs_skipped"] == 1
