"""Calibration of the gate's significance test: false-positive rate and power of the paired
task-level sign-flip test (``waza gate --significance``) beside the pooled tests it replaced.

    python bench/bench_significance.py [--pairs 400] [--alpha 0.05]

Each scenario makes pairs of results documents (baseline, current) with a known truth, seeded:
tasks have true pass rates drawn from Beta(2, 1.2) (mostly-passing suites, as real ones are);
"independent" draws each trial on its own; "correlated" draws a task's verdict once per file and
repeats it in every trial with probability 0.9 (a deterministic agent whose answer flips between
runs); under "regression" every task's rate in the current file drops by 0.15 (absolute, not below
0). A test "fires" when it finds a regression at alpha. Printed: the share of pairs where each test
fired (false-positive rate under "no change", power under "regression"). Fisher: one-sided exact
test over pooled runs (the method before); McNemar: exact test over pooled (trial i of baseline,
trial i of current) pairs, one-sided.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from waza_core.results import significance

SCENARIOS = [  # name, tasks, trials, correlated, effect
    ("independent, 40 tasks x 5", 40, 5, False, 0.0),
    ("correlated, 40 tasks x 5", 40, 5, True, 0.0),
    ("independent, 10 tasks x 3", 10, 3, False, 0.0),
    ("correlated, 200 tasks x 3", 200, 3, True, 0.0),
    ("independent, 40 x 5, regression 0.15", 40, 5, False, 0.15),
    ("correlated, 40 x 5, regression 0.15", 40, 5, True, 0.15),
    ("independent, 10 x 3, regression 0.15", 10, 3, False, 0.15),
    ("correlated, 200 x 3, regression 0.15", 200, 3, True, 0.15),
]


def draw(rng: np.random.Generator, rates: np.ndarray, trials: int, correlated: bool) -> np.ndarray:
    """tasks x trials booleans (passed)."""
    if not correlated:
        return rng.random((len(rates), trials)) < rates[:, None]
    verdict = rng.random(len(rates)) < rates
    keep = rng.random((len(rates), trials)) < 0.9
    other = rng.random((len(rates), trials)) < rates[:, None]
    return np.where(keep, verdict[:, None], other)


def doc(passed: np.ndarray) -> dict:
    return {"tasks": [{"test_id": f"t{i}", "runs": [{"status": "passed" if p else "failed"} for p in row]}
                      for i, row in enumerate(passed)]}


def fisher(b: np.ndarray, c: np.ndarray, alpha: float) -> bool:
    bp, cp, n = int(b.sum()), int(c.sum()), b.size
    return stats.fisher_exact([[bp, n - bp], [cp, n - cp]], alternative="greater")[1] < alpha


def mcnemar(b: np.ndarray, c: np.ndarray, alpha: float) -> bool:
    lost, won = int((b & ~c).sum()), int((~b & c).sum())
    if lost + won == 0:
        return False
    return stats.binomtest(lost, lost + won, 0.5, alternative="greater").pvalue < alpha


def paired(b: np.ndarray, c: np.ndarray, alpha: float) -> bool:
    return bool(significance.compare(doc(b), doc(c), alpha)["significant"])


def run(pairs: int, alpha: float, seed: int = 7) -> list[tuple[str, float, float, float]]:
    rows = []
    for name, tasks, trials, correlated, effect in SCENARIOS:
        rng = np.random.default_rng(seed)
        fired = {"paired": 0, "fisher": 0, "mcnemar": 0}
        for _ in range(pairs):
            rates = rng.beta(2, 1.2, tasks)
            b = draw(rng, rates, trials, correlated)
            c = draw(rng, np.clip(rates - effect, 0, 1), trials, correlated)
            fired["paired"] += paired(b, c, alpha)
            fired["fisher"] += fisher(b, c, alpha)
            fired["mcnemar"] += mcnemar(b, c, alpha)
        rows.append((name, *(fired[k] / pairs for k in ("paired", "fisher", "mcnemar"))))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    start = time.perf_counter()
    rows = run(args.pairs, args.alpha)
    print(f"alpha {args.alpha}, {args.pairs} simulated pairs per scenario "
          f"(binomial standard error at 0.05: {np.sqrt(0.05 * 0.95 / args.pairs):.3f})\n")
    print("| scenario | paired sign-flip (ours) | pooled Fisher (before) | pooled McNemar |")
    print("|---|---|---|---|")
    for name, *rates in rows:
        kind = "power" if "regression" in name else "false positives"
        print(f"| {name} ({kind}) | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
