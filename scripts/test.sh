#!/usr/bin/env bash
# The test command (README and CI). It installs what the tests need, then runs pytest on every core
# (one worker per core, and one more):
#   - .venv: waza (editable) with the [test,ray] extras (Ray for the local-cluster tests),
#   - the pinned npm oracles of tests/interop (AgentV: tests/interop/oracle/install.sh, promptfoo:
#     tests/interop/promptfoo_oracle/install.sh; Node.js 20+ and npm),
#   - Debian's chromium for the HTML report tests, when it is missing (apt-get; needs root).
# Extra arguments go to pytest (e.g. `bash scripts/test.sh -q tests/suite`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,ray]' 2>&1 \
  | { grep -v '^WARNING: Location' || true; }
if [ -f tests/interop/oracle/install.sh ]; then
  bash tests/interop/oracle/install.sh
fi
if [ -f tests/interop/promptfoo_oracle/install.sh ]; then
  bash tests/interop/promptfoo_oracle/install.sh
fi

deselect=()
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing Debian's chromium for the HTML report tests" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test.sh: no /usr/bin/chromium and no root to install it: the browser tests are left out" >&2
    deselect=(-m "not browser")
  fi
fi

# The tests start `python -m waza_core` a few hundred times: with bytecode caching off
# (PYTHONDONTWRITEBYTECODE, set in some shells and CI images) each start compiles every module
# again (about 0.35 s of CPU each). Compile once here, and let the workers read the caches.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m compileall -q -j 0 waza_core waza_graders waza_adapters waza_interop waza_reporters waza_events tests >/dev/null

# one worker per core and one more: many tests wait on child processes, pip or the network, and
# the extra worker runs others meanwhile (2-core machine, whole suite: 307 s wall with 2 workers,
# 273 and 281 s with 3 in two runs, the same CPU time). Tests that share a machine-wide resource (the Ray cluster)
# stay on one worker through their group (XDIST_GROUPS in tests/conftest.py).
workers=$(.venv/bin/python -c 'import os; print(len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1)')
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup "${deselect[@]}" "$@"
