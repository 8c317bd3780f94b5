"""``waza noise``: how long it takes on big files, and whether its minimum detectable effect keeps
its promise.

    python bench/bench_noise.py [--pairs 200] [--sizes 200x5,1000x5]

1. **Time**: an A/A pair of results files of TASKS x TRIALS (written by the project's results
   writer), ``waza noise A B`` with the default 1,000 simulations, and with ``--effect 0.05``
   (power planning), as child processes: wall seconds and peak memory.
2. **Honesty of the MDE**: tasks with true pass rates drawn from Beta(2, 1.2), 40 tasks x 5
   trials, trials independent or locked per run (rho 0.5). A pilot A/A pair is drawn from the
   truth and ``waza noise`` computes its MDE from the pilot's *estimated* rates; then ``--pairs``
   fresh baseline/current pairs are drawn from the *true* rates with that drop and the gate's own
   test (``significance.compare``) is run on each. The share it finds should be near the promised
   power (0.8): below it, the pilot made the suite look quieter than it is.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import REPO, timed, waza_argv

sys.path.insert(0, str(REPO))

from tests.results.noise_files import draw, write_results  # noqa: E402
from waza_core.results import noise, power, significance  # noqa: E402


def time_noise(sizes: list[tuple[int, int]]) -> None:
    print("| design | waza noise A B (s, MiB) | with --effect 0.05 (s, MiB) |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for tasks, trials in sizes:
            rng = np.random.default_rng(tasks)
            rates = rng.beta(2, 1.2, tasks)
            a = write_results(Path(tmp) / f"a{tasks}.json", draw(rng, rates, trials))
            b = write_results(Path(tmp) / f"b{tasks}.json", draw(rng, rates, trials))
            cells = []
            for extra in ([], ["--effect", "0.05"]):
                wall, rss, code = timed([*waza_argv(), "noise", str(a), str(b), *extra])
                assert code == 0, f"waza noise exited {code}"
                cells.append(f"{wall:.1f}, {rss:.0f}")
            print(f"| {tasks} tasks x {trials} trials | {cells[0]} | {cells[1]} |")


def _doc(verdicts: np.ndarray) -> dict:
    return {"tasks": [{"test_id": f"t{i}", "runs": [{"status": "passed" if v else "failed"} for v in row]}
                      for i, row in enumerate(verdicts)]}


def honesty(pairs: int, tasks: int = 40, trials: int = 5) -> None:
    print(f"\n| truth ({tasks} tasks x {trials}) | MDE from the pilot | MDE from the truth | "
          f"gate's power at the pilot's MDE ({pairs} pairs) |")
    print("|---|---|---|---|")
    for label, locked in (("independent trials", 0.0), ("locked runs, rho 0.5", 0.5)):
        rng = np.random.default_rng(31)
        truth = rng.beta(2, 1.2, tasks)
        with tempfile.TemporaryDirectory() as tmp:
            a = write_results(Path(tmp) / "a.json", draw(rng, truth, trials, locked))
            b = write_results(Path(tmp) / "b.json", draw(rng, truth, trials, locked))
            pilot = noise.build_report([str(a), str(b)], noise.NoiseOptions())["minimum_detectable_effect"]
        true_mde, _ = power.minimum_detectable_effect(power.Design(truth, tasks, trials, locked), 0.05, 0.8)
        after = power.moved(truth, pilot, float(truth.mean()))
        found = sum(bool(significance.compare(_doc(draw(rng, truth, trials, locked)),
                                              _doc(draw(rng, after, trials, locked)), 0.05)["significant"])
                    for _ in range(pairs))
        print(f"| {label} | {pilot * 100:.1f} pp | {true_mde * 100:.1f} pp | {found / pairs:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--sizes", default="200x5,1000x5")
    args = ap.parse_args()
    start = time.perf_counter()
    time_noise([tuple(int(n) for n in size.split("x")) for size in args.sizes.split(",")])
    honesty(args.pairs)
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
