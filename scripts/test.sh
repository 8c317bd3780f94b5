#!/usr/bin/env bash
# The test command (README and CI): sets up .venv, the pinned AgentV and promptfoo oracles, then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'
if [ -f tests/interop/oracle/install.sh ]; then
  bash tests/interop/oracle/install.sh
fi
if [ -f tests/interop/promptfoo_oracle/install.sh ]; then
  bash tests/interop/promptfoo_oracle/install.sh
fi
exec .venv/bin/python -m pytest "$@"
