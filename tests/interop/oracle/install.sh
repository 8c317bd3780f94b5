#!/usr/bin/env bash
# Install the AgentV oracle for tests/interop: the exact @agentv/core pinned in
# package-lock.json (see ../install_oracle.sh). Optional packages (agent CLI binaries,
# OpenTelemetry) are left out because the oracle never uses them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../install_oracle.sh" "$here" @agentv/core "the AgentV conformance tests" --omit=optional
