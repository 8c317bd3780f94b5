"""Cost of a mocked command call and of preparing a run's mocks.

    python bench/bench_mocks.py [--repeat 20]

Prints the wall time of one call through a command-mock shim (exact args, an
``args_regex`` response, an unmatched call) next to running ``/bin/true`` directly,
and the time to set up and tear down one run's mocks (folder, shim, session, records).
Targets on the 2-core development machine: a shimmed call under 100 ms (an agent's
shell tool call takes far longer), a run's setup and teardown under 10 ms.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, median_of, table

sys.path.insert(0, str(REPO))

from waza_core.mocks.command import MockRuntime  # noqa: E402
from waza_core.mocks.spec import parse_command_mocks  # noqa: E402

MOCKS = [{"name": "az", "responses": [{"args": ["account", "show"], "stdout": {"user": {"name": "x"}}},
                                      {"args_regex": ["group", "list", "--query=.*"], "stdout": "[]"}]}]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    opts = parser.parse_args()
    ws = tempfile.mkdtemp(prefix="bench-ws-")
    runtime = MockRuntime()
    session = runtime.open_session(ws, parse_command_mocks(MOCKS), Path(ws))
    env = dict(os.environ, **session.environment(), PATH=os.pathsep.join([*session.path_prepend, os.environ["PATH"]]))
    rows = []
    for label, argv in (("/bin/true (no shim)", ["/bin/true"]), ("az account show", ["az", "account", "show"]),
                        ("az group list --query=x (regex)", ["az", "group", "list", "--query=x"]),
                        ("az unmatched (exit 127)", ["az", "nope"])):
        wall, rss, code = median_of(opts.repeat, argv, cwd=Path(ws), env=env)
        rows.append((label, f"{wall * 1000:.1f} ms", f"{rss:.0f} MiB", code))
    session.close()
    runtime.close()
    t0 = time.perf_counter()
    for _ in range(opts.repeat):
        rt = MockRuntime()
        rt.open_session(ws, parse_command_mocks(MOCKS), Path(ws)).close()
        rt.close()
    setup = (time.perf_counter() - t0) / opts.repeat
    rows.append(("one run's setup + teardown", f"{setup * 1000:.1f} ms", "-", "-"))
    print(table(rows, ("call", "median wall", "peak RSS", "exit")))
    os.rmdir(ws)


if __name__ == "__main__":
    main()
