"""The statistics of waza_core/results/stats.py: numpy's bootstrap, the two closed forms.

bench/bench_stats.py and docs/dependencies.md explain the split; these tests pin the
numbers and the cost rule (numpy is imported only for tasks with two or more runs).
"""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from waza_core.results import stats


def test_bootstrap_is_deterministic_and_uses_wazas_percentile_indexes():
    xs = [0.0, 0.25, 0.5, 1.0, 1.0]
    a, b = stats.bootstrap(xs), stats.bootstrap(list(xs))
    assert a == b
    # the same computation spelled out: legacy RandomState stream, Go's floor(alpha/2 * B) indexes
    rng = np.random.RandomState(stats.BOOTSTRAP_SEED)
    means = np.sort(np.asarray(xs)[rng.randint(0, 5, size=(10_000, 5))].mean(axis=1))
    assert (a["lower"], a["upper"]) == (float(means[250]), float(means[9750]))
    assert a["mean"] == 0.55 and a["num_bootstraps"] == 10_000 and a["confidence_level"] == 0.95


def test_bootstrap_in_chunks_draws_the_same_stream():
    xs = [random.Random(3).random() for _ in range(300)]  # 3334 rows per chunk: 3 chunks
    rng = np.random.RandomState(stats.BOOTSTRAP_SEED)
    means = np.sort(np.asarray(xs)[rng.randint(0, 300, size=(10_000, 300))].mean(axis=1))
    got = stats.bootstrap(xs)
    assert (got["lower"], got["upper"]) == (float(means[250]), float(means[9750]))


def test_bootstrap_agrees_with_plain_resampling_within_sampling_noise():
    rnd = random.Random(11)
    xs = [rnd.random() for _ in range(20)]
    plain = random.Random(5)
    means = sorted(sum(plain.choices(xs, k=20)) / 20 for _ in range(10_000))
    got = stats.bootstrap(xs)
    assert got["lower"] == pytest.approx(means[250], abs=0.01)
    assert got["upper"] == pytest.approx(means[9750], abs=0.01)


@pytest.mark.parametrize("k,n,lower,upper", [
    # Wilson score intervals (z = 1.959964), as published tables and scipy give them
    (0, 10, 0.0, 0.27753279986288923),
    (5, 10, 0.23659309051256216, 0.7634069094874378),
    (10, 10, 0.7224672001371108, 1.0),
    (1, 3, 0.06149194472039753, 0.7923403991979523),
])
def test_wilson_interval(k, n, lower, upper):
    ci = stats.wilson(k, n)
    assert ci["lower"] == pytest.approx(lower, abs=1e-12) and ci["upper"] == pytest.approx(upper, abs=1e-12)


def test_std_matches_numpy():
    rnd = random.Random(2)
    for n in (1, 2, 7, 100):
        xs = [rnd.random() for _ in range(n)]
        assert stats._std(xs) == pytest.approx(float(np.std(xs)), abs=1e-15)


@pytest.mark.parametrize("trials,loaded", [(1, False), (2, True)])
def test_numpy_is_imported_only_for_tasks_with_several_runs(trials, loaded, tmp_path):
    code = ("import sys\nfrom waza_core import testing\n"
            f"run = testing.run_suite({{}}, tasks=[{{'id': 't', 'inputs': {{'prompt': 'p'}}}}], "
            f"args=['--trials', '{trials}'], folder=sys.argv[1])\n"
            "assert run.exit_code == 0, run.stderr\n"
            "print('numpy' in sys.modules, 'bootstrap_ci' in run.task('t')['stats'])\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(loaded), str(loaded)]
