"""Speed-up of the ray backend: one worker node against three, on a suite of slow runs.

    python bench/bench_ray.py [--tasks 48] [--sleep 1.0] [--cpus 2]

Starts a local Ray cluster (a head with no CPU and one worker node of ``--cpus``
logical CPUs, every node bound to 127.0.0.1) and runs two suites whose program
grader sleeps ``--sleep`` seconds (a slow agent stands in: sleeping, not burning CPU,
so a 2-core machine can host three nodes): one of ``--tasks`` tasks, one of twice as
many. Then it adds two more worker nodes and runs both again.

It prints the wall time of each ``waza run --backend ray`` (the whole command:
start-up, connecting, shipping the suite, starting one actor per CPU, the runs) and
two speed-up ratios of three nodes over one: end to end (the bigger suite), and on
the runs alone: the extra time the extra ``--tasks`` runs took, which leaves the
fixed start-up cost out. The ideal of both is 3.0. The local backend with as many
workers as the three nodes have CPUs is printed for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, table, timed, waza_argv

RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
STORE_BYTES = 80 * 1024 * 1024


def write_suite(root: Path, tasks: int, sleep: float) -> Path:
    (root / "tasks").mkdir(parents=True)
    grader = {"type": "program", "name": "slow", "config": {"command": "sleep", "args": [str(sleep)]}}
    doc = {"name": "bench-ray", "skill": "demo", "config": {"executor": "mock", "model": "m"},
           "graders": [grader], "tasks": ["tasks/*.yaml"]}
    (root / "eval.yaml").write_text(json.dumps(doc))
    for i in range(tasks):
        (root / "tasks" / f"t{i:03d}.yaml").write_text(f"id: t{i:03d}\ninputs: {{prompt: p{i}}}\n")
    return root / "eval.yaml"


def run(argv: list[str], out: Path) -> tuple[float, int, int]:
    """(wall seconds, exit code, worker nodes used) of one waza run."""
    wall, _rss, code = timed(argv + ["-o", str(out), "-q"], env=dict(os.environ, **RAY_ENV))
    nodes = {r["worker"] for t in json.loads(out.read_bytes())["tasks"] for r in t["runs"]} if out.exists() else set()
    return wall, code, len(nodes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--cpus", type=int, default=2, help="logical CPUs of each worker node")
    opts = parser.parse_args()
    os.environ.update(RAY_ENV)
    sys.path.insert(0, str(REPO))
    from ray.cluster_utils import Cluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    sizes = (opts.tasks, 2 * opts.tasks)
    suites = {n: write_suite(tmp / f"suite-{n}", n, opts.sleep) for n in sizes}
    node = {"node_ip_address": "127.0.0.1", "object_store_memory": STORE_BYTES}
    rows, wall = [], {}
    t0 = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={**node, "num_cpus": 0, "include_dashboard": False})
    try:
        cluster.add_node(**node, num_cpus=opts.cpus)
        cluster.wait_for_nodes()
        print(f"cluster of 1 worker node up in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        for nodes in (1, 3):
            if nodes == 3:
                for _ in range(2):
                    cluster.add_node(**node, num_cpus=opts.cpus)
                cluster.wait_for_nodes()
            for n in sizes:
                argv = waza_argv() + ["run", str(suites[n]), "--backend", "ray", "--ray-address", cluster.address]
                wall[nodes, n], code, used = run(argv, tmp / f"ray-{nodes}-{n}.json")
                rows.append((f"ray, {nodes} node(s)", n, nodes * opts.cpus, f"{wall[nodes, n]:.1f} s", used, code))
    finally:
        cluster.shutdown()
    n = sizes[1]
    local, code, _ = run(waza_argv() + ["run", str(suites[n]), "--workers", str(3 * opts.cpus)], tmp / "local.json")
    rows.append(("local, threads", n, 3 * opts.cpus, f"{local:.1f} s", "-", code))
    print(f"runs graded by a program that sleeps {opts.sleep} s; {opts.cpus} CPU(s) per worker node")
    print(table(rows, ("backend", "runs", "slots", "wall", "nodes used", "exit")))
    end_to_end = wall[1, n] / wall[3, n]
    marginal = (wall[1, n] - wall[1, sizes[0]]) / (wall[3, n] - wall[3, sizes[0]])
    print(f"speed-up of 3 nodes over 1: end to end {end_to_end:.2f}x, on the runs alone {marginal:.2f}x "
          f"(ideal 3.00x; sleeping alone takes {opts.tasks * opts.sleep / opts.cpus:.1f} s per {opts.tasks} "
          f"runs on 1 node)")


if __name__ == "__main__":
    main()
