#!/usr/bin/env bash
# Install the promptfoo oracle for tests/interop: the exact promptfoo pinned in
# package-lock.json (see ../install_oracle.sh). Optional dependencies stay: promptfoo's
# database client loads a native build from one. Install scripts are not run: promptfoo
# needs none, and some optional browser packages would download from outside the registry.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../install_oracle.sh" "$here" promptfoo "the promptfoo oracle tests"
