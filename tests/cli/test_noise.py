"""``waza noise`` end to end: results files written by the real ``waza run`` (the mock
executor) and by the results writer, the text and JSON reports, and every bad input (exit 2,
the file named, no traceback)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tests.conftest import BASIC_EVAL, REPO, write
from tests.inprocess import run_waza_in_process as run_waza
from tests.results.noise_files import draw, write_results

TASK = """
id: {name}
name: {name}
inputs:
  prompt: "Say something about {name}"
graders:
  - type: text
    name: echoes
    config:
      regex_match: ["(?i)mock response for: .+"]
"""


@pytest.fixture(scope="module")
def aa_pair(tmp_path_factory):
    """Two real runs of one suite (3 trials per task, the deterministic mock agent)."""
    root = tmp_path_factory.mktemp("aa")
    write(root / "eval.yaml", BASIC_EVAL.replace("trials_per_task: 1", "trials_per_task: 3"))
    for name in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"):
        write(root / "tasks" / f"{name}.yaml", TASK.format(name=name))
    paths = []
    for side in ("a", "b"):
        out = root / f"{side}.json"
        proc = run_waza("run", str(root / "eval.yaml"), "-o", str(out), "-q")
        assert proc.returncode == 0, proc.stderr.decode()
        paths.append(str(out))
    return paths


def test_an_aa_pair_of_real_deterministic_runs_has_no_noise(aa_pair):
    proc = run_waza("noise", *aa_pair, "--format", "json", "--simulations", "200")
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["tasks"] == 6 and report["trials_per_task"] == 3 and report["files"] == aa_pair
    assert report["flip_rate"]["trials"] == 0 and report["flip_rate"]["runs"] == 0
    assert [row["statuses"] for row in report["per_task"]] == [["passed", "passed"]] * 6
    assert report["spread"]["observed"][0]["success_rate"] == 1.0
    assert report["test"] == "paired_sign_flip_permutation" and report["seed"] == 20261204


def test_the_text_report_says_what_each_number_means(tmp_path):
    rng = np.random.default_rng(4)
    rates = rng.beta(2, 1.2, 30)
    a = write_results(tmp_path / "a.json", draw(rng, rates, 3))
    b = write_results(tmp_path / "b.json", draw(rng, rates, 3))
    proc = run_waza("noise", str(a), str(b), "--effect", "0.2", "--simulations", "300")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    for words in ("two trials of a task disagree", "a task's status differs between two files",
                  "two runs differ by", "Minimum detectable effect: a drop of", "within noise",
                  "Power planning: a drop of 20.0 pp", "power curve (tasks x trials: power): 30x1:",
                  "Tasks that flipped:"):
        assert words in text, words


def test_the_json_report_of_a_plan_has_its_curve(tmp_path):
    rng = np.random.default_rng(6)
    pilot = write_results(tmp_path / "pilot.json", draw(rng, rng.beta(2, 1.2, 40), 2))
    proc = run_waza("noise", str(pilot), "--effect", "0.15", "--power", "0.7", "--simulations", "300",
                    "-f", "json")
    assert proc.returncode == 0, proc.stderr.decode()
    plan = json.loads(proc.stdout)["plan"]
    assert plan["effect"] == 0.15 and plan["power"] == 0.7 and plan["trials_needed"] >= 1
    assert {"tasks", "trials", "power"} <= set(plan["curve"][0])


@pytest.mark.parametrize(("args", "message"), [
    (["--alpha", "1.5"], "--alpha must be between 0 and 1"),
    (["--power", "0"], "--power must be between 0 and 1"),
    (["--effect", "-0.1"], "--effect must be a drop of the pass rate between 0 and 1"),
    (["--simulations", "5"], "--simulations must be from 100 to 100000"),
    (["--correlation", "high"], "--correlation must be 'auto' or a number from 0 to 1"),
    (["--format", "xml"], "unsupported format 'xml'"),
])
def test_a_bad_option_is_exit_2_with_its_name(aa_pair, args, message):
    proc = run_waza("noise", aa_pair[0], *args)
    assert proc.returncode == 2 and message in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr


def test_a_bad_file_is_exit_2_naming_it(tmp_path):
    missing = tmp_path / "missing.json"
    broken = tmp_path / "broken.json"
    broken.write_text('{"tasks": [', encoding="utf-8")
    for path in (missing, broken):
        proc = run_waza("noise", str(path))
        assert proc.returncode == 2, proc.stderr.decode()
        assert path.name in proc.stderr.decode() and b"Traceback" not in proc.stderr


def test_help_does_not_load_numpy():
    import subprocess

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "waza_core", "noise", "--help"],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"--effect" in proc.stdout
    assert b"numpy" not in proc.stderr and b"scipy" not in proc.stderr


EXAMPLE = REPO / "examples" / "noise-floor"


def test_the_example_pair_prints_what_its_readme_says():
    proc = run_waza("noise", "run-a.json", "run-b.json", "-f", "json", cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["flip_rate"]["tasks_flipped"] == 5 and report["flip_rate"]["tasks_changed_between_runs"] == 3
    assert f"{report['minimum_detectable_effect_pct']:.1f}" == "30.7"
    assert round(report["correlation"]["value"], 2) == 0.1


@pytest.mark.parametrize("fmt", ["human", "markdown", "json"])
def test_the_gate_prints_the_minimum_detectable_effect_and_within_noise(fmt):
    proc = run_waza("gate", "--baseline", "run-a.json", "--current", "run-b.json", "--significance", "0.05",
                    "-f", fmt, cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stderr.decode()
    if fmt == "json":
        sig = json.loads(proc.stdout)["significance"]
        assert sig["verdict"] == "within noise" and f"{sig['minimum_detectable_effect_pct']:.1f}" == "31.2"
    else:
        assert "Significance: within noise: mean task change -5.6 pp" in proc.stdout.decode()
        assert "minimum detectable 31.2 pp" in proc.stdout.decode()


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_compare_prints_the_minimum_detectable_effect_and_within_noise(fmt):
    proc = run_waza("compare", "run-a.json", "run-b.json", "-f", fmt, cwd=EXAMPLE)
    assert proc.returncode == 0, proc.stderr.decode()
    if fmt == "json":
        sig = json.loads(proc.stdout)["significance"]
        assert sig["verdict"] == "within noise" and sig["minimum_detectable_effect_method"] == "simulation"
    else:
        assert "within noise" in proc.stdout.decode() and "minimum detectable 31.2 pp" in proc.stdout.decode()
